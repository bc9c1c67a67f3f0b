-- Initial schema of the embedded store.
--
-- Every key and index leads with (org, project), the tenant. Episodes and
-- memories additionally carry rid, an INTEGER PRIMARY KEY (an alias of the
-- rowid), because their full-text rows are keyed by it: VACUUM may renumber an
-- implicit rowid, but never an explicit INTEGER PRIMARY KEY. Their natural key
-- (org, project, id) is a UNIQUE constraint, and nothing outside this package
-- ever sees rid.
--
-- Times are INTEGER unix microseconds (UTC); JSON columns hold text written
-- by encoding/json and are NULL when the Go value is empty.

CREATE TABLE episodes (
    rid         INTEGER PRIMARY KEY,
    org         TEXT    NOT NULL,
    project     TEXT    NOT NULL,
    user_id     TEXT    NOT NULL DEFAULT '',
    agent       TEXT    NOT NULL DEFAULT '',
    session     TEXT    NOT NULL DEFAULT '',
    id          TEXT    NOT NULL,
    role        TEXT    NOT NULL DEFAULT '',
    speaker     TEXT    NOT NULL DEFAULT '',
    content     TEXT    NOT NULL,
    modality    TEXT    NOT NULL DEFAULT '',
    occurred_at INTEGER NOT NULL,
    received_at INTEGER NOT NULL,
    metadata    TEXT,
    UNIQUE (org, project, id)
);
CREATE INDEX episodes_by_session ON episodes (org, project, user_id, session, occurred_at, id);
CREATE INDEX episodes_by_user ON episodes (org, project, user_id, occurred_at, id);

CREATE TABLE memories (
    rid           INTEGER PRIMARY KEY,
    org           TEXT    NOT NULL,
    project       TEXT    NOT NULL,
    user_id       TEXT    NOT NULL DEFAULT '',
    agent         TEXT    NOT NULL DEFAULT '',
    session       TEXT    NOT NULL DEFAULT '',
    id            TEXT    NOT NULL,
    kind          TEXT    NOT NULL,
    abstraction   TEXT    NOT NULL DEFAULT '',
    cues          TEXT,
    value         TEXT    NOT NULL,
    language      TEXT    NOT NULL DEFAULT '',
    confidence    REAL    NOT NULL DEFAULT 0,
    importance    REAL    NOT NULL DEFAULT 0,
    status        TEXT    NOT NULL,
    valid_from    INTEGER,
    valid_to      INTEGER,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL,
    expired_at    INTEGER,
    expires_at    INTEGER,
    sources       TEXT,
    superseded_by TEXT    NOT NULL DEFAULT '',
    metadata      TEXT,
    version       INTEGER NOT NULL DEFAULT 0,
    access_count  INTEGER NOT NULL DEFAULT 0,
    last_accessed INTEGER,
    UNIQUE (org, project, id)
);
CREATE INDEX memories_by_user ON memories (org, project, user_id, id);
CREATE INDEX memories_by_status ON memories (org, project, user_id, status, id);
CREATE INDEX memories_by_kind ON memories (org, project, user_id, kind, id);

-- Which memories cite an episode. Derived from memories.sources and removed
-- with the memory (the foreign key cascades); an episode purge leaves it, as
-- it leaves the memory's sources.
CREATE TABLE memory_sources (
    org        TEXT NOT NULL,
    project    TEXT NOT NULL,
    episode_id TEXT NOT NULL,
    memory_id  TEXT NOT NULL,
    PRIMARY KEY (org, project, episode_id, memory_id),
    FOREIGN KEY (org, project, memory_id) REFERENCES memories (org, project, id) ON DELETE CASCADE
) WITHOUT ROWID;
CREATE INDEX memory_sources_by_memory ON memory_sources (org, project, memory_id);

CREATE TABLE memory_versions (
    org       TEXT    NOT NULL,
    project   TEXT    NOT NULL,
    user_id   TEXT    NOT NULL DEFAULT '',
    agent     TEXT    NOT NULL DEFAULT '',
    session   TEXT    NOT NULL DEFAULT '',
    memory_id TEXT    NOT NULL,
    version   INTEGER NOT NULL,
    op        TEXT    NOT NULL,
    old       TEXT,
    new       TEXT,
    actor     TEXT    NOT NULL DEFAULT '',
    reason    TEXT    NOT NULL DEFAULT '',
    at        INTEGER NOT NULL,
    PRIMARY KEY (org, project, memory_id, version)
) WITHOUT ROWID;

CREATE TABLE audit (
    org     TEXT    NOT NULL,
    project TEXT    NOT NULL,
    user_id TEXT    NOT NULL DEFAULT '',
    agent   TEXT    NOT NULL DEFAULT '',
    session TEXT    NOT NULL DEFAULT '',
    id      TEXT    NOT NULL,
    actor   TEXT    NOT NULL DEFAULT '',
    op      TEXT    NOT NULL,
    ids     TEXT,
    detail  TEXT    NOT NULL DEFAULT '',
    at      INTEGER NOT NULL,
    PRIMARY KEY (org, project, id)
) WITHOUT ROWID;
CREATE INDEX audit_by_user ON audit (org, project, user_id, id);

-- Embeddings of a memory's abstraction and value, one row per field and
-- embedder: during a re-embedding the vectors of the old and the new model
-- coexist until the old ones are deleted. The foreign key removes them
-- whenever their memory is deleted; its lookups use the primary key.
--
-- A vector scan of a scope is driven from memories (memories_by_status
-- picks the scope's active memories) and finds each memory's vectors by the
-- primary key, which is why embedder precedes field in it; no other index is
-- needed. Dropping the vectors of an old embedder scans the table, but that
-- happens once per re-embedding and removes about half of it anyway.
--
-- Unlike the other keyed tables this one keeps its rowid: a row of 512
-- float32s is over 2 KB, and a WITHOUT ROWID table keeps only about 1 KB of
-- a row on a 4 KB page and moves the rest to an overflow page, which made a
-- scan 2.4 times slower (BenchmarkScanVectors).
CREATE TABLE memory_vectors (
    org       TEXT    NOT NULL,
    project   TEXT    NOT NULL,
    memory_id TEXT    NOT NULL,
    embedder  TEXT    NOT NULL,
    field     TEXT    NOT NULL CHECK (field IN ('abstraction', 'value')),
    dim       INTEGER NOT NULL CHECK (dim > 0),
    vec       BLOB    NOT NULL CHECK (length(vec) = 4 * dim), -- dim little-endian float32s
    PRIMARY KEY (org, project, memory_id, embedder, field),
    FOREIGN KEY (org, project, memory_id) REFERENCES memories (org, project, id) ON DELETE CASCADE
);

-- Store-wide settings, such as which embedder made the stored vectors.
-- Which memories each transaction changed, in commit order (one writer),
-- so caches of derived data (vector indexes, possibly in other processes)
-- catch up without reloading. Pruned to the newest rows; meta
-- 'changes.horizon' holds the newest pruned sequence number.
CREATE TABLE memory_changes (
    seq       INTEGER PRIMARY KEY AUTOINCREMENT,
    org       TEXT NOT NULL,
    project   TEXT NOT NULL,
    user_id   TEXT NOT NULL,
    memory_id TEXT NOT NULL
);
CREATE INDEX memory_changes_by_user ON memory_changes (org, project, user_id, seq);

CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;

-- Contentless full-text indexes keyed by the rid of their row. They hold the
-- text after the CJK bigram transform (see fts.go), which is why they cannot
-- read the original columns as external-content tables would.
-- contentless_delete lets a row be removed by rowid alone.
CREATE VIRTUAL TABLE memories_fts USING fts5(
    value, abstraction, cues,
    content = '', contentless_delete = 1,
    tokenize = 'unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE episodes_fts USING fts5(
    content,
    content = '', contentless_delete = 1,
    tokenize = 'unicode61 remove_diacritics 2'
);
