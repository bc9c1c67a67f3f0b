-- A memory's id is unique per user of a tenant, as an episode's is since
-- migration 19: a client may choose its memories' ids (an add, an import,
-- the Mem0 API), and with one key per tenant an id another user held
-- answered "already exists" or was renamed by an import, which told the
-- caller that the id was in use outside its scope. Every table that names a
-- memory now names its user too, so each user reaches only their own.
--
-- SQLite cannot change a key, so the tables are built again. Each new
-- table that refers to memories names memories_by_owner, which the rename
-- at the end turns into memories in their foreign keys; the old tables are
-- dropped children first, so dropping the old memories cascades into
-- nothing. rid keeps its values, since memories_fts is keyed by it. The
-- new UNIQUE key is what memories_by_user was, which is not made again.
CREATE TABLE memories_by_owner (
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
    UNIQUE (org, project, user_id, id)
);
INSERT INTO memories_by_owner SELECT rid, org, project, user_id, agent, session, id, kind, abstraction,
    cues, value, language, confidence, importance, status, valid_from, valid_to, created_at, updated_at,
    expired_at, expires_at, sources, superseded_by, metadata, version, access_count, last_accessed
    FROM memories;

CREATE TABLE memory_sources_by_owner (
    org        TEXT NOT NULL,
    project    TEXT NOT NULL,
    user_id    TEXT NOT NULL DEFAULT '',
    episode_id TEXT NOT NULL,
    memory_id  TEXT NOT NULL,
    PRIMARY KEY (org, project, user_id, episode_id, memory_id),
    FOREIGN KEY (org, project, user_id, memory_id) REFERENCES memories_by_owner (org, project, user_id, id) ON DELETE CASCADE
) WITHOUT ROWID;
INSERT INTO memory_sources_by_owner SELECT s.org, s.project, m.user_id, s.episode_id, s.memory_id
    FROM memory_sources s JOIN memories m ON m.org = s.org AND m.project = s.project AND m.id = s.memory_id;

CREATE TABLE memory_versions_by_owner (
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
    PRIMARY KEY (org, project, user_id, memory_id, version)
) WITHOUT ROWID;
INSERT INTO memory_versions_by_owner SELECT org, project, user_id, agent, session, memory_id, version,
    op, old, new, actor, reason, at FROM memory_versions;

CREATE TABLE memory_vectors_by_owner (
    org       TEXT    NOT NULL,
    project   TEXT    NOT NULL,
    user_id   TEXT    NOT NULL DEFAULT '',
    memory_id TEXT    NOT NULL,
    embedder  TEXT    NOT NULL,
    field     TEXT    NOT NULL CHECK (field IN ('abstraction', 'value')),
    dim       INTEGER NOT NULL CHECK (dim > 0),
    vec       BLOB    NOT NULL CHECK (length(vec) = 4 * dim),
    PRIMARY KEY (org, project, user_id, memory_id, embedder, field),
    FOREIGN KEY (org, project, user_id, memory_id) REFERENCES memories_by_owner (org, project, user_id, id) ON DELETE CASCADE
);
INSERT INTO memory_vectors_by_owner SELECT v.org, v.project, m.user_id, v.memory_id, v.embedder, v.field, v.dim, v.vec
    FROM memory_vectors v JOIN memories m ON m.org = v.org AND m.project = v.project AND m.id = v.memory_id;

CREATE TABLE entity_mentions_by_owner (
    org       TEXT    NOT NULL,
    project   TEXT    NOT NULL,
    user_id   TEXT    NOT NULL DEFAULT '',
    entity_id TEXT    NOT NULL,
    memory_id TEXT    NOT NULL,
    at        INTEGER NOT NULL,
    PRIMARY KEY (org, project, entity_id, memory_id),
    FOREIGN KEY (org, project, entity_id) REFERENCES entities (org, project, id) ON DELETE CASCADE,
    FOREIGN KEY (org, project, user_id, memory_id) REFERENCES memories_by_owner (org, project, user_id, id) ON DELETE CASCADE
) WITHOUT ROWID;
INSERT INTO entity_mentions_by_owner SELECT org, project, user_id, entity_id, memory_id, at FROM entity_mentions;

CREATE TABLE relation_evidence_by_owner (
    org         TEXT NOT NULL,
    project     TEXT NOT NULL,
    user_id     TEXT NOT NULL DEFAULT '',
    relation_id TEXT NOT NULL,
    memory_id   TEXT NOT NULL,
    weight      REAL NOT NULL,
    PRIMARY KEY (org, project, relation_id, memory_id),
    FOREIGN KEY (org, project, relation_id) REFERENCES relations (org, project, id) ON DELETE CASCADE,
    FOREIGN KEY (org, project, user_id, memory_id) REFERENCES memories_by_owner (org, project, user_id, id) ON DELETE CASCADE
) WITHOUT ROWID;
INSERT INTO relation_evidence_by_owner SELECT ev.org, ev.project, m.user_id, ev.relation_id, ev.memory_id, ev.weight
    FROM relation_evidence ev JOIN memories m ON m.org = ev.org AND m.project = ev.project AND m.id = ev.memory_id;

CREATE TABLE community_sources_by_owner (
    org          TEXT NOT NULL,
    project      TEXT NOT NULL,
    user_id      TEXT NOT NULL DEFAULT '',
    community_id TEXT NOT NULL,
    memory_id    TEXT NOT NULL,
    PRIMARY KEY (org, project, community_id, memory_id),
    FOREIGN KEY (org, project, community_id) REFERENCES communities (org, project, id) ON DELETE CASCADE,
    FOREIGN KEY (org, project, user_id, memory_id) REFERENCES memories_by_owner (org, project, user_id, id) ON DELETE CASCADE
) WITHOUT ROWID;
INSERT INTO community_sources_by_owner SELECT cs.org, cs.project, m.user_id, cs.community_id, cs.memory_id
    FROM community_sources cs JOIN memories m ON m.org = cs.org AND m.project = cs.project AND m.id = cs.memory_id;

DROP TABLE memory_sources;
DROP TABLE memory_versions;
DROP TABLE memory_vectors;
DROP TABLE entity_mentions;
DROP TABLE relation_evidence;
DROP TABLE community_sources;
DROP TABLE memories;
ALTER TABLE memories_by_owner RENAME TO memories;
ALTER TABLE memory_sources_by_owner RENAME TO memory_sources;
ALTER TABLE memory_versions_by_owner RENAME TO memory_versions;
ALTER TABLE memory_vectors_by_owner RENAME TO memory_vectors;
ALTER TABLE entity_mentions_by_owner RENAME TO entity_mentions;
ALTER TABLE relation_evidence_by_owner RENAME TO relation_evidence;
ALTER TABLE community_sources_by_owner RENAME TO community_sources;

CREATE INDEX memories_by_status ON memories (org, project, user_id, status, id);
CREATE INDEX memories_by_kind ON memories (org, project, user_id, kind, id);
CREATE INDEX memories_lapsing ON memories (expires_at, org, project, id)
    WHERE status = 'active' AND expires_at IS NOT NULL;
CREATE INDEX memories_by_fingerprint
    ON memories (org, project, user_id, json_extract(metadata, '$."fingerprint"'));
CREATE INDEX memory_sources_by_memory ON memory_sources (org, project, user_id, memory_id);
CREATE INDEX entity_mentions_by_memory ON entity_mentions (org, project, user_id, memory_id);
CREATE INDEX entity_mentions_by_time ON entity_mentions (org, project, entity_id, at);
CREATE INDEX relation_evidence_by_memory ON relation_evidence (org, project, user_id, memory_id);
CREATE INDEX community_sources_by_memory ON community_sources (org, project, user_id, memory_id);

-- The triggers of relation_evidence went with the old table.
CREATE TRIGGER evidence_dirty_insert AFTER INSERT ON relation_evidence BEGIN
    INSERT INTO graph_dirty SELECT r.org, r.project, r.user_id, e.id FROM relations r, entities e
        WHERE r.org = NEW.org AND r.project = NEW.project AND r.id = NEW.relation_id
        AND e.org = r.org AND e.project = r.project AND e.id IN (r.source, r.target)
        ON CONFLICT DO NOTHING;
END;
CREATE TRIGGER evidence_dirty_update AFTER UPDATE ON relation_evidence BEGIN
    INSERT INTO graph_dirty SELECT r.org, r.project, r.user_id, e.id FROM relations r, entities e
        WHERE r.org = NEW.org AND r.project = NEW.project AND r.id = NEW.relation_id
        AND e.org = r.org AND e.project = r.project AND e.id IN (r.source, r.target)
        ON CONFLICT DO NOTHING;
END;
CREATE TRIGGER evidence_dirty_delete AFTER DELETE ON relation_evidence BEGIN
    INSERT INTO graph_dirty SELECT r.org, r.project, r.user_id, e.id FROM relations r, entities e
        WHERE r.org = OLD.org AND r.project = OLD.project AND r.id = OLD.relation_id
        AND e.org = r.org AND e.project = r.project AND e.id IN (r.source, r.target)
        ON CONFLICT DO NOTHING;
END;
