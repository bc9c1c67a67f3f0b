-- Entities' history (engram.EntityHistoryReader): one row per recorded
-- change. No foreign key to entities: a merged entity's versions outlive
-- it while the entity it went into (into_id) exists, and a delete leaves
-- one nameless version. pruneGraph removes the rest with their entities.
CREATE TABLE IF NOT EXISTS entity_versions (
    org       TEXT    NOT NULL,
    project   TEXT    NOT NULL,
    user_id   TEXT    NOT NULL DEFAULT '',
    entity_id TEXT    NOT NULL,
    version   INTEGER NOT NULL,
    op        TEXT    NOT NULL,
    into_id   TEXT,
    related   TEXT,
    entity    TEXT,
    actor     TEXT    NOT NULL DEFAULT '',
    at        INTEGER NOT NULL,
    PRIMARY KEY (org, project, entity_id, version)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS entity_versions_by_into ON entity_versions (org, project, into_id);
CREATE INDEX IF NOT EXISTS entity_versions_by_user ON entity_versions (org, project, user_id, entity_id);
