-- Initial schema of the PostgreSQL store.
--
-- tenant is org || '/' || project (neither may contain '/'), written by the
-- program and checked here. It leads every primary key and every index, and
-- it is the distribution column of a sharded deployment (see doc.go): every
-- row of one tenant, and every query that names one, lives on one shard.
-- org and project are kept as columns of their own for reading back a
-- namespace and for the maintenance scan, which orders by them.
--
-- Names and ids use the "C" collation: comparisons are by bytes, as in
-- the embedded store and in Go, whatever the database's default collation.
--
-- Metadata and version snapshots are json, not jsonb: json keeps the text
-- encoding/json wrote (number spellings, key order), so they read back
-- exactly; filters cast to jsonb where they compare values.

CREATE TABLE episodes (
    tenant      text COLLATE "C" NOT NULL,
    org         text COLLATE "C" NOT NULL,
    project     text COLLATE "C" NOT NULL,
    user_id     text COLLATE "C" NOT NULL DEFAULT '',
    agent       text COLLATE "C" NOT NULL DEFAULT '',
    session     text COLLATE "C" NOT NULL DEFAULT '',
    id          text COLLATE "C" NOT NULL,
    role        text NOT NULL DEFAULT '',
    speaker     text NOT NULL DEFAULT '',
    content     text NOT NULL,
    modality    text NOT NULL DEFAULT '',
    occurred_at timestamptz NOT NULL,
    received_at timestamptz NOT NULL,
    metadata    json,
    PRIMARY KEY (tenant, id),
    CHECK (tenant = org || '/' || project)
);
CREATE INDEX episodes_by_user ON episodes (tenant, user_id, occurred_at, id);
CREATE INDEX episodes_by_session ON episodes (tenant, user_id, session, occurred_at, id);

-- The search_* columns hold the text the full-text index is built from:
-- value, abstraction and cues reduced by the program to lower-case words
-- with CJK runs split into bigrams (package textsearch), the same way the
-- embedded store prepares them. A generated column cannot call the
-- program, so it builds the tsvector from these. The 'simple' configuration
-- neither stems nor drops stop words, which would be wrong for text that is
-- not English; weights rank a term in the abstraction (A) above one in a
-- cue (B) above one in the value (C).
CREATE TABLE memories (
    tenant             text COLLATE "C" NOT NULL,
    org                text COLLATE "C" NOT NULL,
    project            text COLLATE "C" NOT NULL,
    user_id            text COLLATE "C" NOT NULL DEFAULT '',
    agent              text COLLATE "C" NOT NULL DEFAULT '',
    session            text COLLATE "C" NOT NULL DEFAULT '',
    id                 text COLLATE "C" NOT NULL,
    kind               text NOT NULL,
    abstraction        text NOT NULL DEFAULT '',
    cues               text[],
    value              text NOT NULL,
    language           text NOT NULL DEFAULT '',
    confidence         double precision NOT NULL DEFAULT 0,
    importance         double precision NOT NULL DEFAULT 0,
    status             text NOT NULL,
    valid_from         timestamptz,
    valid_to           timestamptz,
    created_at         timestamptz NOT NULL,
    updated_at         timestamptz NOT NULL,
    expired_at         timestamptz,
    expires_at         timestamptz,
    sources            text[],
    superseded_by      text NOT NULL DEFAULT '',
    metadata           json,
    version            integer NOT NULL DEFAULT 0,
    access_count       bigint NOT NULL DEFAULT 0,
    last_accessed      timestamptz,
    search_abstraction text NOT NULL DEFAULT '',
    search_cues        text NOT NULL DEFAULT '',
    search_value       text NOT NULL DEFAULT '',
    tsv                tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('simple'::regconfig, search_abstraction), 'A') ||
        setweight(to_tsvector('simple'::regconfig, search_cues), 'B') ||
        setweight(to_tsvector('simple'::regconfig, search_value), 'C')
    ) STORED,
    PRIMARY KEY (tenant, id),
    CHECK (tenant = org || '/' || project)
);
-- Lists (newest id first within a status) and scoped scans.
CREATE INDEX memories_by_status ON memories (tenant, user_id, status, id);
-- The maintenance scan walks every tenant in (org, project, id) order.
CREATE INDEX memories_by_key ON memories (org, project, id);

-- The full-text index leads with the tenant too when btree_gin is
-- available (it ships with PostgreSQL's contrib modules and is a trusted
-- extension, so the database owner may create it): a search then reads
-- only its tenant's part of each term's posting list. Without it the index
-- covers tsv alone, which is correct but reads every tenant's matches.
DO $$
BEGIN
    BEGIN
        CREATE EXTENSION IF NOT EXISTS btree_gin;
    EXCEPTION WHEN OTHERS THEN
        RAISE NOTICE 'engram: btree_gin is not available (%); the full-text index will not lead with the tenant', SQLERRM;
    END;
    IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'btree_gin') THEN
        CREATE INDEX memories_text ON memories USING gin (tenant, tsv);
    ELSE
        CREATE INDEX memories_text ON memories USING gin (tsv);
    END IF;
END
$$;

CREATE TABLE memory_versions (
    tenant    text COLLATE "C" NOT NULL,
    org       text COLLATE "C" NOT NULL,
    project   text COLLATE "C" NOT NULL,
    user_id   text COLLATE "C" NOT NULL DEFAULT '',
    agent     text COLLATE "C" NOT NULL DEFAULT '',
    session   text COLLATE "C" NOT NULL DEFAULT '',
    memory_id text COLLATE "C" NOT NULL,
    version   integer NOT NULL,
    op        text NOT NULL,
    old       json,
    new       json,
    actor     text NOT NULL DEFAULT '',
    reason    text NOT NULL DEFAULT '',
    at        timestamptz NOT NULL,
    PRIMARY KEY (tenant, memory_id, version),
    CHECK (tenant = org || '/' || project)
);

CREATE TABLE audit (
    tenant  text COLLATE "C" NOT NULL,
    org     text COLLATE "C" NOT NULL,
    project text COLLATE "C" NOT NULL,
    user_id text COLLATE "C" NOT NULL DEFAULT '',
    agent   text COLLATE "C" NOT NULL DEFAULT '',
    session text COLLATE "C" NOT NULL DEFAULT '',
    id      text COLLATE "C" NOT NULL,
    actor   text NOT NULL DEFAULT '',
    op      text NOT NULL,
    ids     text[],
    detail  text NOT NULL DEFAULT '',
    at      timestamptz NOT NULL,
    PRIMARY KEY (tenant, id),
    CHECK (tenant = org || '/' || project)
);
CREATE INDEX audit_by_user ON audit (tenant, user_id, id);

-- Embeddings of a memory's abstraction and value, one row per field and
-- embedder, dim little-endian float32s each; no vector extension is needed,
-- since the engine searches its own in-memory index built from these. The
-- foreign key removes them with their memory.
CREATE TABLE memory_vectors (
    tenant    text COLLATE "C" NOT NULL,
    memory_id text COLLATE "C" NOT NULL,
    embedder  text COLLATE "C" NOT NULL,
    field     text NOT NULL CHECK (field IN ('abstraction', 'value')),
    dim       integer NOT NULL CHECK (dim > 0),
    vec       bytea NOT NULL CHECK (length(vec) = 4 * dim),
    PRIMARY KEY (tenant, memory_id, embedder, field),
    FOREIGN KEY (tenant, memory_id) REFERENCES memories (tenant, id) ON DELETE CASCADE
);

-- The change log that keeps every server's in-memory vector indexes fresh
-- (Reader.Changes). Each transaction that changes memories of a (tenant,
-- user) takes the next number from that partition's counter row just
-- before it commits; the row stays locked until the commit, so numbers
-- become visible in order. changes lists the memories each number touched;
-- rows at or below pruned_through may have been deleted.
CREATE TABLE change_counters (
    tenant         text COLLATE "C" NOT NULL,
    user_id        text COLLATE "C" NOT NULL,
    seq            bigint NOT NULL,
    pruned_through bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant, user_id)
);
CREATE TABLE changes (
    tenant    text COLLATE "C" NOT NULL,
    user_id   text COLLATE "C" NOT NULL,
    seq       bigint NOT NULL,
    memory_id text COLLATE "C" NOT NULL,
    PRIMARY KEY (tenant, user_id, seq, memory_id)
);

-- Store-wide settings, such as which embedder made the stored vectors. Not
-- per tenant: a sharded deployment makes it a reference table.
CREATE TABLE meta (
    key   text COLLATE "C" PRIMARY KEY,
    value text NOT NULL
);
