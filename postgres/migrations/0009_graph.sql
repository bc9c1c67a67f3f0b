-- The entity graph (engram.GraphReader, engram.GraphWriter): entities of a
-- tenant's user, the names they are found under, the memories that mention
-- them, and relations between them with the memories that support each.
-- Everything is derived from memories: the foreign keys remove a mention
-- or a relation's evidence with its memory, and the program removes an
-- entity or relation left without any (PurgeMemory, PurgeScope). Every key
-- and index leads with tenant, and every foreign key includes it, so a
-- tenant's graph lives on its shard. IF NOT EXISTS keeps a replay harmless.

CREATE TABLE IF NOT EXISTS entities (
    tenant     text COLLATE "C" NOT NULL,
    org        text COLLATE "C" NOT NULL,
    project    text COLLATE "C" NOT NULL,
    user_id    text COLLATE "C" NOT NULL DEFAULT '',
    id         text COLLATE "C" NOT NULL,
    name       text NOT NULL,
    norm       text COLLATE "C" NOT NULL,
    type       text NOT NULL DEFAULT '',
    aliases    text[],
    summary    text NOT NULL DEFAULT '',
    status     text NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (tenant, id),
    CHECK (tenant = org || '/' || project)
);
CREATE INDEX IF NOT EXISTS entities_by_norm ON entities (tenant, user_id, norm, id);

-- kind 'n': a normalised name or alias; kind 't': one of their words.
CREATE TABLE IF NOT EXISTS entity_keys (
    tenant    text COLLATE "C" NOT NULL,
    user_id   text COLLATE "C" NOT NULL DEFAULT '',
    kind      text COLLATE "C" NOT NULL,
    key       text COLLATE "C" NOT NULL,
    entity_id text COLLATE "C" NOT NULL,
    PRIMARY KEY (tenant, user_id, kind, key, entity_id),
    FOREIGN KEY (tenant, entity_id) REFERENCES entities (tenant, id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS entity_keys_by_entity ON entity_keys (tenant, entity_id);

CREATE TABLE IF NOT EXISTS entity_mentions (
    tenant    text COLLATE "C" NOT NULL,
    user_id   text COLLATE "C" NOT NULL DEFAULT '',
    entity_id text COLLATE "C" NOT NULL,
    memory_id text COLLATE "C" NOT NULL,
    at        timestamptz NOT NULL,
    PRIMARY KEY (tenant, entity_id, memory_id),
    FOREIGN KEY (tenant, entity_id) REFERENCES entities (tenant, id) ON DELETE CASCADE,
    FOREIGN KEY (tenant, memory_id) REFERENCES memories (tenant, id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS entity_mentions_by_memory ON entity_mentions (tenant, memory_id);
CREATE INDEX IF NOT EXISTS entity_mentions_by_time ON entity_mentions (tenant, entity_id, at);

CREATE TABLE IF NOT EXISTS relations (
    tenant     text COLLATE "C" NOT NULL,
    user_id    text COLLATE "C" NOT NULL DEFAULT '',
    id         text COLLATE "C" NOT NULL,
    source     text COLLATE "C" NOT NULL,
    target     text COLLATE "C" NOT NULL,
    label      text NOT NULL,
    valid_at   timestamptz,
    invalid_at timestamptz,
    created_at timestamptz NOT NULL,
    expired_at timestamptz,
    PRIMARY KEY (tenant, id),
    FOREIGN KEY (tenant, source) REFERENCES entities (tenant, id) ON DELETE CASCADE,
    FOREIGN KEY (tenant, target) REFERENCES entities (tenant, id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS relations_by_source ON relations (tenant, source, target);
CREATE INDEX IF NOT EXISTS relations_by_target ON relations (tenant, target);
CREATE INDEX IF NOT EXISTS relations_by_user ON relations (tenant, user_id, id);

CREATE TABLE IF NOT EXISTS relation_evidence (
    tenant      text COLLATE "C" NOT NULL,
    relation_id text COLLATE "C" NOT NULL,
    memory_id   text COLLATE "C" NOT NULL,
    weight      double precision NOT NULL,
    PRIMARY KEY (tenant, relation_id, memory_id),
    FOREIGN KEY (tenant, relation_id) REFERENCES relations (tenant, id) ON DELETE CASCADE,
    FOREIGN KEY (tenant, memory_id) REFERENCES memories (tenant, id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS relation_evidence_by_memory ON relation_evidence (tenant, memory_id);
