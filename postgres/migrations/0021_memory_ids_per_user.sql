-- A memory's id is unique per user of a tenant, as an episode's is since
-- migration 19: a client may choose its memories' ids (an add, an import,
-- the Mem0 API), and with one key per tenant an id another user held
-- answered "already exists" or was renamed by an import, which told the
-- caller that the id was in use outside its scope. Every table that names a
-- memory now names its user too, so each user reaches only their own. Keys
-- still lead with the tenant, the distribution column.
--
-- The tables that lacked the user take it from their memory; dropping the
-- memories' old key with CASCADE drops the foreign keys that named it,
-- which are made again on the new one. It may run again over its own
-- result (a test replays the migrations), so it checks what it adds.
ALTER TABLE memory_vectors ADD COLUMN IF NOT EXISTS user_id text COLLATE "C" NOT NULL DEFAULT '';
UPDATE memory_vectors v SET user_id = m.user_id FROM memories m
    WHERE m.tenant = v.tenant AND m.id = v.memory_id AND m.user_id <> '';
ALTER TABLE relation_evidence ADD COLUMN IF NOT EXISTS user_id text COLLATE "C" NOT NULL DEFAULT '';
UPDATE relation_evidence ev SET user_id = m.user_id FROM memories m
    WHERE m.tenant = ev.tenant AND m.id = ev.memory_id AND m.user_id <> '';
ALTER TABLE community_sources ADD COLUMN IF NOT EXISTS user_id text COLLATE "C" NOT NULL DEFAULT '';
UPDATE community_sources cs SET user_id = m.user_id FROM memories m
    WHERE m.tenant = cs.tenant AND m.id = cs.memory_id AND m.user_id <> '';

ALTER TABLE memories DROP CONSTRAINT IF EXISTS memories_pkey CASCADE;
ALTER TABLE memories ADD CONSTRAINT memories_pkey PRIMARY KEY (tenant, user_id, id);
DROP INDEX IF EXISTS memories_by_key;
-- The maintenance scan walks every tenant in (org, project, user, id) order.
CREATE INDEX memories_by_key ON memories (org, project, user_id, id);

ALTER TABLE memory_versions DROP CONSTRAINT IF EXISTS memory_versions_pkey;
ALTER TABLE memory_versions ADD CONSTRAINT memory_versions_pkey PRIMARY KEY (tenant, user_id, memory_id, version);

ALTER TABLE memory_vectors DROP CONSTRAINT IF EXISTS memory_vectors_pkey;
ALTER TABLE memory_vectors ADD CONSTRAINT memory_vectors_pkey PRIMARY KEY (tenant, user_id, memory_id, embedder, field);
ALTER TABLE memory_vectors ADD CONSTRAINT memory_vectors_memory_fkey
    FOREIGN KEY (tenant, user_id, memory_id) REFERENCES memories (tenant, user_id, id) ON DELETE CASCADE;

ALTER TABLE entity_mentions ADD CONSTRAINT entity_mentions_memory_fkey
    FOREIGN KEY (tenant, user_id, memory_id) REFERENCES memories (tenant, user_id, id) ON DELETE CASCADE;
DROP INDEX IF EXISTS entity_mentions_by_memory;
CREATE INDEX entity_mentions_by_memory ON entity_mentions (tenant, user_id, memory_id);

ALTER TABLE relation_evidence ADD CONSTRAINT relation_evidence_memory_fkey
    FOREIGN KEY (tenant, user_id, memory_id) REFERENCES memories (tenant, user_id, id) ON DELETE CASCADE;
DROP INDEX IF EXISTS relation_evidence_by_memory;
CREATE INDEX relation_evidence_by_memory ON relation_evidence (tenant, user_id, memory_id);

ALTER TABLE community_sources ADD CONSTRAINT community_sources_memory_fkey
    FOREIGN KEY (tenant, user_id, memory_id) REFERENCES memories (tenant, user_id, id) ON DELETE CASCADE;
DROP INDEX IF EXISTS community_sources_by_memory;
CREATE INDEX community_sources_by_memory ON community_sources (tenant, user_id, memory_id);
