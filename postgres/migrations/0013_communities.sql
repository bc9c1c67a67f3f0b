-- Communities of the entity graph (engram.CommunityReader,
-- engram.CommunityWriter): groups of a user's entities with a summary that
-- quotes the memories in community_sources. A member or a source going
-- removes its row here; the program then removes the community left short
-- of one (pruneCommunities), so a purged memory's text or a deleted
-- entity's name does not outlive it in a summary.
--
-- graph_dirty is the set of entities whose relations changed since the
-- last refresh: the triggers below add both ends of every relation
-- written or removed and of every change to a relation's evidence
-- (cascades included), so no write path has to remember it.

CREATE TABLE IF NOT EXISTS communities (
    tenant     text COLLATE "C" NOT NULL,
    user_id    text COLLATE "C" NOT NULL DEFAULT '',
    id         text COLLATE "C" NOT NULL,
    names      text[],
    summary    text NOT NULL DEFAULT '',
    abstract   text NOT NULL DEFAULT '',
    size       integer NOT NULL,
    sources    integer NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (tenant, id)
);
CREATE INDEX IF NOT EXISTS communities_by_user ON communities (tenant, user_id, id);

CREATE TABLE IF NOT EXISTS community_members (
    tenant       text COLLATE "C" NOT NULL,
    entity_id    text COLLATE "C" NOT NULL,
    community_id text COLLATE "C" NOT NULL,
    PRIMARY KEY (tenant, entity_id),
    FOREIGN KEY (tenant, entity_id) REFERENCES entities (tenant, id) ON DELETE CASCADE,
    FOREIGN KEY (tenant, community_id) REFERENCES communities (tenant, id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS community_members_by_community ON community_members (tenant, community_id);

CREATE TABLE IF NOT EXISTS community_sources (
    tenant       text COLLATE "C" NOT NULL,
    community_id text COLLATE "C" NOT NULL,
    memory_id    text COLLATE "C" NOT NULL,
    PRIMARY KEY (tenant, community_id, memory_id),
    FOREIGN KEY (tenant, community_id) REFERENCES communities (tenant, id) ON DELETE CASCADE,
    FOREIGN KEY (tenant, memory_id) REFERENCES memories (tenant, id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS community_sources_by_memory ON community_sources (tenant, memory_id);

CREATE TABLE IF NOT EXISTS graph_dirty (
    tenant    text COLLATE "C" NOT NULL,
    user_id   text COLLATE "C" NOT NULL DEFAULT '',
    entity_id text COLLATE "C" NOT NULL,
    PRIMARY KEY (tenant, user_id, entity_id)
);

CREATE OR REPLACE FUNCTION graph_dirty_relation() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        INSERT INTO graph_dirty VALUES (OLD.tenant, OLD.user_id, OLD.source), (OLD.tenant, OLD.user_id, OLD.target)
            ON CONFLICT DO NOTHING;
    END IF;
    IF TG_OP IN ('UPDATE', 'INSERT') THEN
        INSERT INTO graph_dirty VALUES (NEW.tenant, NEW.user_id, NEW.source), (NEW.tenant, NEW.user_id, NEW.target)
            ON CONFLICT DO NOTHING;
    END IF;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION graph_dirty_evidence() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    t text;
    rid text;
BEGIN
    IF TG_OP = 'DELETE' THEN
        t := OLD.tenant; rid := OLD.relation_id;
    ELSE
        t := NEW.tenant; rid := NEW.relation_id;
    END IF;
    INSERT INTO graph_dirty SELECT r.tenant, r.user_id, e.id FROM relations r, entities e
        WHERE r.tenant = t AND r.id = rid AND e.tenant = r.tenant AND e.id IN (r.source, r.target)
        ON CONFLICT DO NOTHING;
    RETURN NULL;
END $$;

DROP TRIGGER IF EXISTS relations_dirty ON relations;
CREATE TRIGGER relations_dirty AFTER INSERT OR UPDATE OR DELETE ON relations
    FOR EACH ROW EXECUTE FUNCTION graph_dirty_relation();
DROP TRIGGER IF EXISTS evidence_dirty ON relation_evidence;
CREATE TRIGGER evidence_dirty AFTER INSERT OR UPDATE OR DELETE ON relation_evidence
    FOR EACH ROW EXECUTE FUNCTION graph_dirty_evidence();
