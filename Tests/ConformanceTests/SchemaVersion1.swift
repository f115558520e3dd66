/// The append function of schema version 1, as that version of the program created it: the
/// upgrade test puts it back into a store to make a database as version 1 left it. (Version 1's
/// tables are those of version 2; only the function and the version row differ.)
enum SchemaVersion1 {
    static let appendFunction = """
        CREATE OR REPLACE FUNCTION eventstore.append(
            job_first_part integer[], job_part_count integer[],
            tracking_names text[], tracking_positions bigint[], tracking_previous bigint[],
            part_streams text[], part_expected bigint[], part_first_event integer[], part_event_count integer[],
            event_ids uuid[], event_given boolean[], event_types text[], event_data bytea[], event_metadata bytea[],
            event_recorded_at bigint[], event_checksums integer[], now_micros bigint)
        RETURNS TABLE (job integer, part integer, outcome text, positions bigint[], version bigint, recorded_at bigint, detail bigint)
        LANGUAGE plpgsql AS $fn$
        #variable_conflict use_column
        DECLARE
            head_position bigint;
            start_position bigint;
            stream_total bigint;
            j integer; p integer; e integer; first_event integer; last_event integer;
            total integer; found_count integer;
            recorded_position bigint;
            stream_version bigint;
            expected bigint;
            refused boolean;
            r record;
            seen text[];
            part_positions bigint[]; part_version bigint; part_time bigint;
        BEGIN
            SELECT h.position, h.streams INTO head_position, stream_total FROM eventstore.head h FOR UPDATE;
            start_position := head_position;
            FOR j IN 1 .. coalesce(array_length(job_first_part, 1), 0) LOOP
                -- The tracking position first: a retry of a reaction that committed is refused.
                IF tracking_names[j] <> '' THEN
                    IF tracking_positions[j] > head_position THEN
                        RETURN QUERY SELECT j, NULL::integer, 'beyondHead'::text, NULL::bigint[], NULL::bigint, NULL::bigint, head_position;
                        CONTINUE;
                    END IF;
                    SELECT t.position INTO recorded_position FROM eventstore.tracking t WHERE t.name = tracking_names[j];
                    recorded_position := coalesce(recorded_position, 0);
                    IF tracking_positions[j] <= recorded_position THEN
                        RETURN QUERY SELECT j, NULL::integer, 'processed'::text, NULL::bigint[], NULL::bigint, NULL::bigint, recorded_position;
                        CONTINUE;
                    END IF;
                    IF tracking_previous[j] >= 0 AND tracking_previous[j] <> recorded_position THEN
                        RETURN QUERY SELECT j, NULL::integer, 'moved'::text, NULL::bigint[], NULL::bigint, NULL::bigint, recorded_position;
                        CONTINUE;
                    END IF;
                END IF;

                -- Idempotency: every given id recorded with the same content returns the
                -- original results; some but not all is refused.
                total := 0; found_count := 0; refused := false;
                <<ids>>
                FOR p IN job_first_part[j] .. job_first_part[j] + job_part_count[j] - 1 LOOP
                    first_event := part_first_event[p];
                    last_event := first_event + part_event_count[p] - 1;
                    FOR e IN first_event .. last_event LOOP
                        total := total + 1;
                        CONTINUE WHEN NOT event_given[e];
                        SELECT ev.position, ev.stream, ev.type, ev.data, ev.metadata INTO r
                            FROM eventstore.events ev WHERE ev.id = event_ids[e];
                        CONTINUE WHEN NOT FOUND;
                        IF r.stream <> part_streams[p] OR r.type <> event_types[e] OR r.data <> event_data[e]
                            OR r.metadata <> event_metadata[e] THEN
                            RETURN QUERY SELECT j, p, 'idConflict'::text, NULL::bigint[], r.position, NULL::bigint, e::bigint;
                            refused := true;
                            EXIT ids;
                        END IF;
                        found_count := found_count + 1;
                    END LOOP;
                END LOOP;
                CONTINUE WHEN refused;
                IF found_count > 0 AND found_count < total THEN
                    RETURN QUERY SELECT j, NULL::integer, 'partial'::text, NULL::bigint[], NULL::bigint, NULL::bigint, NULL::bigint;
                    CONTINUE;
                END IF;
                IF found_count > 0 THEN
                    FOR p IN job_first_part[j] .. job_first_part[j] + job_part_count[j] - 1 LOOP
                        SELECT array_agg(ev.position ORDER BY x.o), (array_agg(ev.version ORDER BY x.o DESC))[1],
                               (array_agg(ev.recorded_at ORDER BY x.o DESC))[1]
                            INTO part_positions, part_version, part_time
                            FROM unnest(event_ids[part_first_event[p] : part_first_event[p] + part_event_count[p] - 1])
                                WITH ORDINALITY AS x(id, o)
                            JOIN eventstore.events ev ON ev.id = x.id;
                        RETURN QUERY SELECT j, p, 'recorded'::text, part_positions, part_version, part_time, NULL::bigint;
                    END LOOP;
                    IF tracking_names[j] <> '' THEN
                        INSERT INTO eventstore.tracking (name, position) VALUES (tracking_names[j], tracking_positions[j])
                            ON CONFLICT (name) DO UPDATE SET position = excluded.position;
                    END IF;
                    CONTINUE;
                END IF;

                -- Expected versions, on each stream's first part; every failed one is named.
                seen := '{}'; refused := false;
                FOR p IN job_first_part[j] .. job_first_part[j] + job_part_count[j] - 1 LOOP
                    CONTINUE WHEN part_streams[p] = ANY (seen);
                    seen := seen || part_streams[p];
                    SELECT s.version INTO stream_version FROM eventstore.streams s WHERE s.name = part_streams[p];
                    stream_version := coalesce(stream_version, 0);
                    expected := part_expected[p];
                    IF (expected = -2 AND stream_version <> 0) OR (expected = -3 AND stream_version = 0)
                        OR (expected >= 0 AND stream_version <> expected) THEN
                        RETURN QUERY SELECT j, p, 'conflict'::text, NULL::bigint[], stream_version, NULL::bigint, NULL::bigint;
                        refused := true;
                    END IF;
                END LOOP;
                CONTINUE WHEN refused;

                -- The writes: positions and versions follow the head and each stream's version.
                FOR p IN job_first_part[j] .. job_first_part[j] + job_part_count[j] - 1 LOOP
                    first_event := part_first_event[p];
                    last_event := first_event + part_event_count[p] - 1;
                    SELECT s.version INTO stream_version FROM eventstore.streams s WHERE s.name = part_streams[p];
                    IF NOT FOUND THEN
                        stream_version := 0;
                        stream_total := stream_total + 1;
                    END IF;
                    INSERT INTO eventstore.events (position, stream, version, id, type, recorded_at, data, metadata, checksum)
                        SELECT head_position + x.o, part_streams[p], stream_version + x.o, x.id, x.type,
                               x.recorded_at, x.data, x.metadata, x.checksum
                        FROM unnest(event_ids[first_event : last_event], event_types[first_event : last_event],
                                    event_data[first_event : last_event], event_metadata[first_event : last_event],
                                    event_recorded_at[first_event : last_event], event_checksums[first_event : last_event])
                            WITH ORDINALITY AS x(id, type, data, metadata, recorded_at, checksum, o);
                    INSERT INTO eventstore.streams (name, version) VALUES (part_streams[p], stream_version + part_event_count[p])
                        ON CONFLICT (name) DO UPDATE SET version = excluded.version;
                    RETURN QUERY SELECT j, p, 'written'::text,
                        ARRAY(SELECT generate_series(head_position + 1, head_position + part_event_count[p])),
                        stream_version + part_event_count[p], now_micros, NULL::bigint;
                    head_position := head_position + part_event_count[p];
                END LOOP;
                IF tracking_names[j] <> '' THEN
                    INSERT INTO eventstore.tracking (name, position) VALUES (tracking_names[j], tracking_positions[j])
                        ON CONFLICT (name) DO UPDATE SET position = excluded.position;
                END IF;
            END LOOP;
            IF head_position > start_position THEN
                UPDATE eventstore.head SET position = head_position, streams = stream_total;
                PERFORM pg_notify('eventstore_head', head_position::text);
            END IF;
        END
        $fn$
        """
}
