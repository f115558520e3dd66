/// The append function of schema version 5, as that version of the program created it (20
/// arguments, with tags, before binary data and upstream tracking positions): the upgrade test
/// puts it back into a store, with the tables as version 5 left them, to make a database of
/// that version.
enum SchemaVersion5 {
    static let appendFunction = """
        CREATE OR REPLACE FUNCTION eventstore.append(
            job_first_part integer[], job_part_count integer[],
            tracking_names text[], tracking_positions bigint[], tracking_previous bigint[],
            part_streams text[], part_expected bigint[], part_first_event integer[], part_event_count integer[],
            event_ids uuid[], event_given boolean[], event_types text[], event_data bytea[], event_metadata bytea[],
            event_recorded_at bigint[], event_checksums integer[], event_schema_versions integer[],
            event_tag_first integer[], event_tag_count integer[], tag_values text[], now_micros bigint)
        RETURNS TABLE (job integer, part integer, outcome text, positions bigint[], version bigint, recorded_at bigint, detail bigint)
        LANGUAGE plpgsql AS $fn$
        #variable_conflict use_column
        DECLARE
            job_count integer := coalesce(array_length(job_first_part, 1), 0);
            part_total integer := coalesce(array_length(part_streams, 1), 0);
            head_position bigint;
            start_position bigint;
            stream_total bigint;
            j integer; p integer; first_part integer; last_part integer;
            first_event integer; last_event integer; found_count integer; conflict_event integer;
            accepted boolean; recorded boolean; current_version bigint; recorded_position bigint;
            event_part integer[];
            base_version bigint[];
            part_tombstoned boolean[];
            rec_deleted boolean[];
            part_deleted boolean;
            previous_part integer[];
            version_after bigint[];
            part_start bigint[];
            part_job integer[];
            tracking_stored bigint[];
            previous_job integer[];
            tracking_after bigint[];
            tracking_write bigint[];
            has_tracking boolean;
            rec_event integer[]; rec_position bigint[]; rec_same boolean[]; rec_version bigint[]; rec_time bigint[];
            part_positions bigint[]; part_version bigint; part_time bigint;
        BEGIN
            SELECT h.position, h.streams INTO head_position, stream_total FROM eventstore.head h FOR UPDATE;
            start_position := head_position;

            -- Everything the checks read, in one statement each: each part's stream version before the
            -- call and the call's previous part of the same stream (versions chain through it), each
            -- event's part, the given ids already recorded, each job's recorded tracking position.
            SELECT array_agg(coalesce(s.version, 0) ORDER BY x.p), array_agg(coalesce(x.previous, 0) ORDER BY x.p),
                   array_agg(coalesce(s.tombstoned, false) ORDER BY x.p)
                INTO base_version, previous_part, part_tombstoned
                FROM (SELECT u.name, u.p, lag(u.p) OVER (PARTITION BY u.name ORDER BY u.p) AS previous
                      FROM unnest(part_streams) WITH ORDINALITY AS u(name, p)) x
                LEFT JOIN eventstore.streams s ON s.name = x.name;
            SELECT array_agg(g.p ORDER BY g.e) INTO event_part
                FROM (SELECT u.p, generate_series(u.first, u.first + u.count - 1) AS e
                      FROM unnest(part_first_event, part_event_count) WITH ORDINALITY AS u(first, count, p)) g;
            version_after := array_fill(0::bigint, ARRAY[part_total]);
            part_start := array_fill(-1::bigint, ARRAY[part_total]);
            part_job := array_fill(0, ARRAY[part_total]);
            IF true = ANY (event_given) THEN
                -- A deleted event's id stays recorded: its content is gone, so it cannot conflict.
                SELECT array_agg(r.e ORDER BY r.e), array_agg(r.position ORDER BY r.e), array_agg(r.same ORDER BY r.e),
                       array_agg(r.version ORDER BY r.e), array_agg(r.time ORDER BY r.e), array_agg(r.deleted ORDER BY r.e)
                    INTO rec_event, rec_position, rec_same, rec_version, rec_time, rec_deleted
                    FROM (
                        SELECT x.e, ev.position,
                               ev.stream = part_streams[event_part[x.e]] AND ev.type = event_types[x.e]
                                 AND ev.data = event_data[x.e] AND ev.metadata = event_metadata[x.e]
                                 AND ev.schema_version = event_schema_versions[x.e]
                                 AND ev.tags IS NOT DISTINCT FROM (CASE WHEN event_tag_count[x.e] > 0
                                     THEN tag_values[event_tag_first[x.e] : event_tag_first[x.e] + event_tag_count[x.e] - 1] END) AS same,
                               ev.version, ev.recorded_at AS time, false AS deleted
                        FROM unnest(event_ids, event_given) WITH ORDINALITY AS x(id, given, e)
                        JOIN eventstore.events ev ON ev.id = x.id
                        WHERE x.given
                        UNION ALL
                        SELECT x.e, d.position, true, coalesce(s.version, 0), 0::bigint, true
                        FROM unnest(event_ids, event_given) WITH ORDINALITY AS x(id, given, e)
                        JOIN eventstore.deleted_ids d ON d.id = x.id
                        LEFT JOIN eventstore.streams s ON s.name = d.stream
                        WHERE x.given) r;
            END IF;
            has_tracking := EXISTS (SELECT FROM unnest(tracking_names) AS t(name) WHERE t.name <> '');
            IF has_tracking THEN
                SELECT array_agg(coalesce(t.position, 0) ORDER BY x.j), array_agg(coalesce(x.previous, 0) ORDER BY x.j)
                    INTO tracking_stored, previous_job
                    FROM (SELECT u.name, u.j, lag(u.j) OVER (PARTITION BY u.name ORDER BY u.j) AS previous
                          FROM unnest(tracking_names) WITH ORDINALITY AS u(name, j)) x
                    LEFT JOIN eventstore.tracking t ON t.name = x.name AND x.name <> '';
                tracking_after := array_fill(0::bigint, ARRAY[job_count]);
                tracking_write := array_fill(-1::bigint, ARRAY[job_count]);
            END IF;

            FOR j IN 1 .. job_count LOOP
                first_part := job_first_part[j];
                last_part := first_part + job_part_count[j] - 1;
                accepted := true;
                recorded := false;

                -- The tracking position first: a retry of a reaction that committed is refused.
                IF has_tracking AND tracking_names[j] <> '' THEN
                    recorded_position := CASE WHEN previous_job[j] > 0 THEN tracking_after[previous_job[j]] ELSE tracking_stored[j] END;
                    tracking_after[j] := recorded_position;
                    IF tracking_positions[j] > head_position THEN
                        RETURN QUERY SELECT j, NULL::integer, 'beyondHead'::text, NULL::bigint[], NULL::bigint, NULL::bigint, head_position;
                        accepted := false;
                    ELSIF tracking_positions[j] <= recorded_position THEN
                        RETURN QUERY SELECT j, NULL::integer, 'processed'::text, NULL::bigint[], NULL::bigint, NULL::bigint, recorded_position;
                        accepted := false;
                    ELSIF tracking_previous[j] >= 0 AND tracking_previous[j] <> recorded_position THEN
                        RETURN QUERY SELECT j, NULL::integer, 'moved'::text, NULL::bigint[], NULL::bigint, NULL::bigint, recorded_position;
                        accepted := false;
                    END IF;
                END IF;

                -- Idempotency: every event of the job recorded with the same content returns the
                -- original results; some but not all is refused, and so is other content.
                IF accepted AND rec_event IS NOT NULL THEN
                    first_event := part_first_event[first_part];
                    last_event := part_first_event[last_part] + part_event_count[last_part] - 1;
                    SELECT count(*), min(r.e) FILTER (WHERE NOT r.same) INTO found_count, conflict_event
                        FROM unnest(rec_event, rec_same) AS r(e, same) WHERE r.e BETWEEN first_event AND last_event;
                    IF conflict_event IS NOT NULL THEN
                        RETURN QUERY SELECT j, event_part[conflict_event], 'idConflict'::text, NULL::bigint[],
                            rec_position[array_position(rec_event, conflict_event)], NULL::bigint, conflict_event::bigint;
                        accepted := false;
                    ELSIF found_count > 0 AND found_count < last_event - first_event + 1 THEN
                        RETURN QUERY SELECT j, NULL::integer, 'partial'::text, NULL::bigint[], NULL::bigint, NULL::bigint, NULL::bigint;
                        accepted := false;
                    ELSIF found_count > 0 THEN
                        recorded := true;
                        FOR p IN first_part .. last_part LOOP
                            SELECT array_agg(r.position ORDER BY r.e),
                                   coalesce((array_agg(r.version ORDER BY r.e DESC) FILTER (WHERE NOT r.deleted))[1],
                                            (array_agg(r.version ORDER BY r.e DESC))[1]),
                                   coalesce((array_agg(r.time ORDER BY r.e DESC) FILTER (WHERE NOT r.deleted))[1], 0),
                                   bool_or(r.deleted)
                                INTO part_positions, part_version, part_time, part_deleted
                                FROM unnest(rec_event, rec_position, rec_version, rec_time, rec_deleted) AS r(e, position, version, time, deleted)
                                WHERE r.e BETWEEN part_first_event[p] AND part_first_event[p] + part_event_count[p] - 1;
                            RETURN QUERY SELECT j, p, 'recorded'::text, part_positions, part_version, part_time,
                                CASE WHEN part_deleted THEN 1::bigint END;
                        END LOOP;
                    END IF;
                END IF;

                -- A tombstoned stream takes nothing, whatever the expectation.
                IF accepted AND NOT recorded THEN
                    FOR p IN first_part .. last_part LOOP
                        IF part_tombstoned[p] THEN
                            RETURN QUERY SELECT j, p, 'tombstoned'::text, NULL::bigint[], NULL::bigint, NULL::bigint, NULL::bigint;
                            accepted := false;
                            EXIT;
                        END IF;
                    END LOOP;
                END IF;

                -- Expected versions, on each stream's first part in the job; every failed one is named.
                IF accepted AND NOT recorded THEN
                    FOR p IN first_part .. last_part LOOP
                        CONTINUE WHEN part_expected[p] = -1 OR previous_part[p] >= first_part;
                        current_version := CASE WHEN previous_part[p] > 0 THEN version_after[previous_part[p]] ELSE base_version[p] END;
                        IF (part_expected[p] = -2 AND current_version <> 0) OR (part_expected[p] = -3 AND current_version = 0)
                            OR (part_expected[p] >= 0 AND current_version <> part_expected[p]) THEN
                            RETURN QUERY SELECT j, p, 'conflict'::text, NULL::bigint[], current_version, NULL::bigint, NULL::bigint;
                            accepted := false;
                        END IF;
                    END LOOP;
                END IF;

                -- Positions and versions: each part follows the head and its stream's version so far
                -- in this call; a part not written leaves its stream's version as it was.
                FOR p IN first_part .. last_part LOOP
                    current_version := CASE WHEN previous_part[p] > 0 THEN version_after[previous_part[p]] ELSE base_version[p] END;
                    IF accepted AND NOT recorded THEN
                        IF current_version = 0 THEN
                            stream_total := stream_total + 1;
                        END IF;
                        part_start[p] := head_position;
                        part_job[p] := j;
                        head_position := head_position + part_event_count[p];
                        version_after[p] := current_version + part_event_count[p];
                    ELSE
                        version_after[p] := current_version;
                    END IF;
                END LOOP;
                IF accepted AND has_tracking AND tracking_names[j] <> '' THEN
                    tracking_after[j] := tracking_positions[j];
                    tracking_write[j] := tracking_positions[j];
                END IF;
            END LOOP;

            -- The writes, set-wise: every written event in one statement, each stream's last version
            -- and each tracking name's last position in one upsert each.
            IF head_position > start_position THEN
                INSERT INTO eventstore.events (position, stream, version, id, type, recorded_at, data, metadata, checksum, schema_version, tags)
                    SELECT ps.start + (x.e - ps.first) + 1, ps.name, ps.after - ps.count + (x.e - ps.first) + 1,
                           x.id, x.type, x.recorded_at, x.data, x.metadata, x.checksum, x.schema_version,
                           CASE WHEN x.tag_count > 0 THEN tag_values[x.tag_first : x.tag_first + x.tag_count - 1] END
                    FROM unnest(event_ids, event_types, event_data, event_metadata, event_recorded_at, event_checksums,
                                event_schema_versions, event_part, event_tag_first, event_tag_count)
                            WITH ORDINALITY AS x(id, type, data, metadata, recorded_at, checksum, schema_version, p, tag_first, tag_count, e)
                    JOIN unnest(part_streams, part_first_event, part_event_count, part_start, version_after)
                            WITH ORDINALITY AS ps(name, first, count, start, after, p) ON ps.p = x.p
                    WHERE ps.start >= 0;
                INSERT INTO eventstore.streams (name, version)
                    SELECT DISTINCT ON (s.name) s.name, s.after
                    FROM unnest(part_streams, version_after, part_start) WITH ORDINALITY AS s(name, after, start, p)
                    WHERE s.start >= 0
                    ORDER BY s.name, s.p DESC
                    ON CONFLICT (name) DO UPDATE SET version = excluded.version;
                IF array_length(tag_values, 1) > 0 THEN
                    INSERT INTO eventstore.event_tags (tag, position)
                        SELECT t.tag, ev.position FROM eventstore.events ev, unnest(ev.tags) AS t(tag)
                        WHERE ev.position > start_position AND ev.tags IS NOT NULL;
                END IF;
                UPDATE eventstore.head SET position = head_position, streams = stream_total;
                PERFORM pg_notify('eventstore_head', head_position::text);
            END IF;
            IF has_tracking THEN
                INSERT INTO eventstore.tracking (name, position)
                    SELECT DISTINCT ON (t.name) t.name, t.position
                    FROM unnest(tracking_names, tracking_write) WITH ORDINALITY AS t(name, position, j)
                    WHERE t.position > 0
                    ORDER BY t.name, t.j DESC
                    ON CONFLICT (name) DO UPDATE SET position = excluded.position;
            END IF;
            RETURN QUERY
                SELECT w.j, w.p::integer, 'written'::text,
                       ARRAY(SELECT generate_series(w.start + 1, w.start + w.count)), w.after, now_micros,
                       (SELECT 1::bigint FROM eventstore.streams s WHERE s.name = part_streams[w.p]
                            AND (s.max_count IS NOT NULL OR s.max_age_micros IS NOT NULL OR s.truncate_before IS NOT NULL))
                FROM unnest(part_job, part_start, part_event_count, version_after) WITH ORDINALITY AS w(j, start, count, after, p)
                WHERE w.start >= 0
                ORDER BY w.p;
        END
        $fn$
        """
}
