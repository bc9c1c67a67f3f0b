-- Entities' history (engram.EntityHistoryReader): one row per recorded
-- change. No foreign key to entities: a merged entity's versions outlive
-- it while the entity it went into (into_id) exists, and a delete leaves
-- one nameless version. pruneGraph removes the rest with their entities.
CREATE TABLE IF NOT EXISTS entity_versions (
    tenant    text COLLATE "C" NOT NULL,
    org       text COLLATE "C" NOT NULL,
    project   text COLLATE "C" NOT NULL,
    user_id   text COLLATE "C" NOT NULL DEFAULT '',
    entity_id text COLLATE "C" NOT NULL,
    version   integer NOT NULL,
    op        text NOT NULL,
    into_id   text COLLATE "C",
    related   text[],
    entity    jsonb,
    actor     text NOT NULL DEFAULT '',
    at        timestamptz NOT NULL,
    PRIMARY KEY (tenant, entity_id, version),
    CHECK (tenant = org || '/' || project)
);
CREATE INDEX IF NOT EXISTS entity_versions_by_into ON entity_versions (tenant, into_id);
CREATE INDEX IF NOT EXISTS entity_versions_by_user ON entity_versions (tenant, user_id, entity_id);
