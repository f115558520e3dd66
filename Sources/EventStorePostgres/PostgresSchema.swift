/// The tables and the append function of a store in a PostgreSQL database, all in the schema
/// `eventstore` (docs/FORMAT.md, "On PostgreSQL").
///
/// Every append goes through one server-side function, called as one statement: it locks the
/// single `head` row, takes positions head+1 … head+n under that lock, writes, and the lock is
/// held to commit. So positions are gapless and in commit order: no reader ever sees P+1 before
/// P, and readers stay a plain `WHERE position > $1 ORDER BY position`.
enum PostgresSchema {
    /// The schema version this build writes; a database of a newer one is refused, an older one
    /// is upgraded in place.
    static let version = 6

    /// The PostgreSQL schema (namespace) the store's tables live in.
    static let name = "eventstore"

    /// The advisory lock every table write transaction takes first: table writes of all
    /// processes run one at a time, as under LMDB's single writer.
    static let tablesLockKey: Int64 = 0x6573_7461_626c_6573 // "estables"

    /// The channel `append` notifies with the new head when the head moves.
    static let channel = "eventstore_head"

    /// Creates everything, in one transaction with `version`'s row; run under an advisory lock
    /// so two processes creating the store at once do not collide.
    static let creation: [String] = [
        "CREATE SCHEMA IF NOT EXISTS eventstore",
        """
        CREATE TABLE eventstore.schema_version (
            singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
            version integer NOT NULL)
        """,
        // The head: the last position and the number of streams, updated by every append
        // under the row lock that orders appends.
        """
        CREATE TABLE eventstore.head (
            singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
            position bigint NOT NULL CHECK (position >= 0),
            streams bigint NOT NULL CHECK (streams >= 0),
            deleted bigint NOT NULL DEFAULT 0 CHECK (deleted >= 0))
        """,
        "INSERT INTO eventstore.head (position, streams) VALUES (0, 0)",
        """
        CREATE TABLE eventstore.streams (
            name text COLLATE "C" PRIMARY KEY,
            version bigint NOT NULL CHECK (version > 0),
            \(streamStateColumns))
        """,
        deletedIDsTable,
        deletedTypesTable,
        // One row per event. The checksum is the CRC-32C the client computed over the event's
        // content (docs/FORMAT.md); the category is derived for filtered reads.
        """
        CREATE TABLE eventstore.events (
            position bigint PRIMARY KEY CHECK (position > 0),
            stream text COLLATE "C" NOT NULL,
            version bigint NOT NULL CHECK (version > 0),
            id uuid NOT NULL,
            type text COLLATE "C" NOT NULL,
            recorded_at bigint NOT NULL,
            data bytea NOT NULL,
            metadata bytea NOT NULL,
            checksum integer NOT NULL,
            schema_version integer NOT NULL DEFAULT 1 CHECK (schema_version BETWEEN 1 AND 65535),
            category text COLLATE "C" GENERATED ALWAYS AS (split_part(stream, '-', 1)) STORED,
            tags text[],
            binary_data boolean NOT NULL DEFAULT false)
        """,
        eventTagsTable,
        eventTagsPositionIndex,
        "CREATE UNIQUE INDEX events_stream_version ON eventstore.events (stream, version)",
        "CREATE UNIQUE INDEX events_id ON eventstore.events (id)",
        "CREATE INDEX events_category ON eventstore.events (category, position)",
        "CREATE INDEX events_type ON eventstore.events (type, position)",
        """
        CREATE TABLE eventstore.tracking (
            name text COLLATE "C" PRIMARY KEY,
            position bigint NOT NULL CHECK (position > 0))
        """,
        // The tables beside the log (projection state, checkpoints, snapshots): one row per
        // entry, keys compared byte by byte as LMDB compares them.
        """
        CREATE TABLE eventstore.table_names (name text COLLATE "C" PRIMARY KEY)
        """,
        """
        CREATE TABLE eventstore.tables (
            name text COLLATE "C" NOT NULL,
            key bytea NOT NULL CHECK (octet_length(key) BETWEEN 1 AND 511),
            value bytea NOT NULL,
            PRIMARY KEY (name, key))
        """,
        appendFunction,
        "INSERT INTO eventstore.schema_version (version) VALUES (\(version))",
    ]

    /// The steps that bring a database of an earlier version to the next one, by the version they
    /// start from; each runs in one transaction with its version row's update, so a database is
    /// always at one version or the next, never between.
    /// What deletion and retention keep per stream (schema version 4): the first version still in
    /// the log, the tombstone, and the retention policy (null parts: no limit).
    static let streamStateColumns = """
        first_version bigint NOT NULL DEFAULT 1 CHECK (first_version > 0),
            tombstoned boolean NOT NULL DEFAULT false,
            max_count bigint CHECK (max_count > 0),
            max_age_micros bigint CHECK (max_age_micros > 0),
            truncate_before bigint CHECK (truncate_before > 0)
        """

    /// The id of every deleted event, kept forever: appending it again answers "recorded".
    static let deletedIDsTable = """
        CREATE TABLE eventstore.deleted_ids (
            id uuid PRIMARY KEY,
            position bigint NOT NULL UNIQUE CHECK (position > 0),
            stream text COLLATE "C" NOT NULL)
        """

    /// How many deletions, and how many of them trims by retention, removed events of each type
    /// ('' counts every deletion).
    static let deletedTypesTable = """
        CREATE TABLE eventstore.deleted_types (
            type text COLLATE "C" PRIMARY KEY,
            deletions bigint NOT NULL CHECK (deletions >= 0),
            trims bigint NOT NULL DEFAULT 0 CHECK (trims >= 0))
        """

    /// Each tag of each event (schema version 5): what queries and conditional appends seek, by
    /// tag then position. A deleted event's rows go with it.
    static let eventTagsTable = """
        CREATE TABLE eventstore.event_tags (
            tag text COLLATE "C" NOT NULL,
            position bigint NOT NULL REFERENCES eventstore.events (position) ON DELETE CASCADE,
            PRIMARY KEY (tag, position))
        """

    /// What makes a deletion's cascade find an event's tag rows without a scan.
    static let eventTagsPositionIndex = "CREATE INDEX event_tags_position ON eventstore.event_tags (position)"

    /// The append function's argument types before schema version 5 (which added the tags).
    static let appendArgumentsBeforeTags = """
        integer[], integer[], text[], bigint[], bigint[], text[], bigint[], integer[], integer[],
            uuid[], boolean[], text[], bytea[], bytea[], bigint[], integer[], integer[], bigint
        """

    /// The append function's argument types in schema version 5 (dropped by the upgrade to 6).
    static let appendArgumentsBeforeBinary = """
        integer[], integer[], text[], bigint[], bigint[], text[], bigint[], integer[], integer[],
            uuid[], boolean[], text[], bytea[], bytea[], bigint[], integer[], integer[], integer[], integer[], text[], bigint
        """

    static let upgrades: [Int: [String]] = [
        // 1 → 2: the append function checks job by job but writes set-wise (same arguments,
        // same answers; docs/FORMAT.md).
        1: [appendFunction],
        // 2 → 3: each event's schema version (1 for the events before), passed to the append
        // function, which gains that argument.
        2: [
            "ALTER TABLE eventstore.events ADD COLUMN schema_version integer NOT NULL DEFAULT 1 CHECK (schema_version BETWEEN 1 AND 65535)",
            """
            DROP FUNCTION IF EXISTS eventstore.append(integer[], integer[], text[], bigint[], bigint[], text[], bigint[], integer[], integer[],
                uuid[], boolean[], text[], bytea[], bytea[], bigint[], integer[], bigint)
            """,
            appendFunction,
        ],
        // 3 → 4: deletion and retention: the head counts deleted events, each stream keeps its
        // first version, tombstone and policy, deleted ids stay known; the append function
        // refuses tombstoned streams, answers deleted ids as recorded, and flags streams with a
        // policy.
        3: [
            "ALTER TABLE eventstore.head ADD COLUMN deleted bigint NOT NULL DEFAULT 0 CHECK (deleted >= 0)",
            "ALTER TABLE eventstore.streams ADD COLUMN \(streamStateColumns.replacingOccurrences(of: ",\n    ", with: ", ADD COLUMN "))",
            deletedIDsTable,
            deletedTypesTable,
            appendFunction,
        ],
        // 4 → 5: tags: each event's (null: none), indexed by tag in `event_tags`; the append
        // function takes them (its arguments change) and compares them on a retry.
        4: [
            "ALTER TABLE eventstore.events ADD COLUMN tags text[]",
            eventTagsTable,
            eventTagsPositionIndex,
            "DROP FUNCTION IF EXISTS eventstore.append(\(appendArgumentsBeforeTags))",
            appendFunction,
        ],
        // 5 → 6: binary data (the record's flag: never parsed, compared as bytes) and upstream
        // tracking positions (not bounded by the head); the append function takes both.
        5: [
            "ALTER TABLE eventstore.events ADD COLUMN binary_data boolean NOT NULL DEFAULT false",
            "DROP FUNCTION IF EXISTS eventstore.append(\(appendArgumentsBeforeBinary))",
            appendFunction,
        ],
    ]
}
