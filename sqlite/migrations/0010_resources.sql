-- Resources: files a client uploads. The metadata row is written when an
-- upload starts (complete = 0, invisible to reads) and completed after the
-- last chunk; the content lives in resource_chunks, one row per chunk of
-- at most 1 MiB, so that uploads and downloads go one chunk at a time.
-- Keeping the bytes in the database (rather than in files beside it) makes
-- a resource part of the same transactions, backups and purges as every
-- other record; see doc.go for the measurement.
CREATE TABLE IF NOT EXISTS resources (
    org        TEXT    NOT NULL,
    project    TEXT    NOT NULL,
    user_id    TEXT    NOT NULL DEFAULT '',
    agent      TEXT    NOT NULL DEFAULT '',
    session    TEXT    NOT NULL DEFAULT '',
    id         TEXT    NOT NULL,
    name       TEXT    NOT NULL,
    mime_type  TEXT    NOT NULL,
    source     TEXT    NOT NULL DEFAULT '',
    size       INTEGER NOT NULL DEFAULT 0,
    sha256     TEXT    NOT NULL DEFAULT '',
    memories   INTEGER NOT NULL DEFAULT 0,
    complete   INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (org, project, id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS resources_by_user ON resources (org, project, user_id, id);

-- A rowid table: chunks are large, and SQLite keeps large rows best out of
-- a WITHOUT ROWID b-tree.
CREATE TABLE IF NOT EXISTS resource_chunks (
    org         TEXT    NOT NULL,
    project     TEXT    NOT NULL,
    resource_id TEXT    NOT NULL,
    seq         INTEGER NOT NULL,
    data        BLOB    NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS resource_chunks_by_resource ON resource_chunks (org, project, resource_id, seq);
