-- The entity graph (engram.GraphReader, engram.GraphWriter): entities of a
-- tenant's user, the names they are found under, the memories that mention
-- them, and relations between them with the memories that support each.
-- Everything is derived from memories: the foreign keys remove a mention
-- or a relation's evidence with its memory, and the program removes an
-- entity or relation left without any (PurgeMemory, PurgeScope), so a
-- purge leaves no name behind. Written with IF NOT EXISTS so that a replay
-- of the migrations (a test replays them from version 2) is harmless.

CREATE TABLE IF NOT EXISTS entities (
    org        TEXT    NOT NULL,
    project    TEXT    NOT NULL,
    user_id    TEXT    NOT NULL DEFAULT '',
    id         TEXT    NOT NULL,
    name       TEXT    NOT NULL,
    norm       TEXT    NOT NULL,
    type       TEXT    NOT NULL DEFAULT '',
    aliases    TEXT,
    summary    TEXT    NOT NULL DEFAULT '',
    status     TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (org, project, id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS entities_by_norm ON entities (org, project, user_id, norm, id);

-- The keys an entity is found under: kind 'n' for its normalised name and
-- aliases, kind 't' for each of their words (fuzzy resolution's
-- candidates).
CREATE TABLE IF NOT EXISTS entity_keys (
    org       TEXT NOT NULL,
    project   TEXT NOT NULL,
    user_id   TEXT NOT NULL DEFAULT '',
    kind      TEXT NOT NULL,
    key       TEXT NOT NULL,
    entity_id TEXT NOT NULL,
    PRIMARY KEY (org, project, user_id, kind, key, entity_id),
    FOREIGN KEY (org, project, entity_id) REFERENCES entities (org, project, id) ON DELETE CASCADE
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS entity_keys_by_entity ON entity_keys (org, project, entity_id);

CREATE TABLE IF NOT EXISTS entity_mentions (
    org       TEXT    NOT NULL,
    project   TEXT    NOT NULL,
    user_id   TEXT    NOT NULL DEFAULT '',
    entity_id TEXT    NOT NULL,
    memory_id TEXT    NOT NULL,
    at        INTEGER NOT NULL,
    PRIMARY KEY (org, project, entity_id, memory_id),
    FOREIGN KEY (org, project, entity_id) REFERENCES entities (org, project, id) ON DELETE CASCADE,
    FOREIGN KEY (org, project, memory_id) REFERENCES memories (org, project, id) ON DELETE CASCADE
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS entity_mentions_by_memory ON entity_mentions (org, project, memory_id);
CREATE INDEX IF NOT EXISTS entity_mentions_by_time ON entity_mentions (org, project, entity_id, at);

CREATE TABLE IF NOT EXISTS relations (
    org        TEXT    NOT NULL,
    project    TEXT    NOT NULL,
    user_id    TEXT    NOT NULL DEFAULT '',
    id         TEXT    NOT NULL,
    source     TEXT    NOT NULL,
    target     TEXT    NOT NULL,
    label      TEXT    NOT NULL,
    valid_at   INTEGER,
    invalid_at INTEGER,
    created_at INTEGER NOT NULL,
    expired_at INTEGER,
    PRIMARY KEY (org, project, id),
    FOREIGN KEY (org, project, source) REFERENCES entities (org, project, id) ON DELETE CASCADE,
    FOREIGN KEY (org, project, target) REFERENCES entities (org, project, id) ON DELETE CASCADE
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS relations_by_source ON relations (org, project, source, target);
CREATE INDEX IF NOT EXISTS relations_by_target ON relations (org, project, target);
CREATE INDEX IF NOT EXISTS relations_by_user ON relations (org, project, user_id, id);

CREATE TABLE IF NOT EXISTS relation_evidence (
    org         TEXT NOT NULL,
    project     TEXT NOT NULL,
    relation_id TEXT NOT NULL,
    memory_id   TEXT NOT NULL,
    weight      REAL NOT NULL,
    PRIMARY KEY (org, project, relation_id, memory_id),
    FOREIGN KEY (org, project, relation_id) REFERENCES relations (org, project, id) ON DELETE CASCADE,
    FOREIGN KEY (org, project, memory_id) REFERENCES memories (org, project, id) ON DELETE CASCADE
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS relation_evidence_by_memory ON relation_evidence (org, project, memory_id);
