-- Resources: files a client uploads. The metadata row is written when an
-- upload starts (complete = false, invisible to reads) and completed after
-- the last chunk; the content lives in resource_chunks as bytea rows of at
-- most 1 MiB, so that uploads and downloads go one chunk at a time and a
-- large file is never one value the server or the program holds whole.
CREATE TABLE IF NOT EXISTS resources (
    tenant     text COLLATE "C" NOT NULL,
    org        text COLLATE "C" NOT NULL,
    project    text COLLATE "C" NOT NULL,
    user_id    text COLLATE "C" NOT NULL DEFAULT '',
    agent      text COLLATE "C" NOT NULL DEFAULT '',
    session    text COLLATE "C" NOT NULL DEFAULT '',
    id         text COLLATE "C" NOT NULL,
    name       text NOT NULL,
    mime_type  text NOT NULL,
    source     text NOT NULL DEFAULT '',
    size       bigint NOT NULL DEFAULT 0,
    sha256     text NOT NULL DEFAULT '',
    memories   integer NOT NULL DEFAULT 0,
    complete   boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (tenant, id),
    CHECK (tenant = org || '/' || project)
);
CREATE INDEX IF NOT EXISTS resources_by_user ON resources (tenant, user_id, id);

-- Chunks are stored out of line (EXTERNAL: no compression attempt on bytes
-- that are usually compressed already).
CREATE TABLE IF NOT EXISTS resource_chunks (
    tenant      text COLLATE "C" NOT NULL,
    resource_id text COLLATE "C" NOT NULL,
    seq         integer NOT NULL,
    data        bytea NOT NULL,
    PRIMARY KEY (tenant, resource_id, seq)
);
ALTER TABLE resource_chunks ALTER COLUMN data SET STORAGE EXTERNAL;
