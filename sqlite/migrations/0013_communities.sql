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
-- (cascades included), so no write path has to remember it. They use
-- ON CONFLICT DO NOTHING, not INSERT OR IGNORE: a trigger's OR clause
-- gives way to the conflict policy of the statement that fired it.

CREATE TABLE IF NOT EXISTS communities (
    org        TEXT    NOT NULL,
    project    TEXT    NOT NULL,
    user_id    TEXT    NOT NULL DEFAULT '',
    id         TEXT    NOT NULL,
    names      TEXT,
    summary    TEXT    NOT NULL DEFAULT '',
    abstract   TEXT    NOT NULL DEFAULT '',
    size       INTEGER NOT NULL,
    sources    INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (org, project, id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS communities_by_user ON communities (org, project, user_id, id);

CREATE TABLE IF NOT EXISTS community_members (
    org          TEXT NOT NULL,
    project      TEXT NOT NULL,
    entity_id    TEXT NOT NULL,
    community_id TEXT NOT NULL,
    PRIMARY KEY (org, project, entity_id),
    FOREIGN KEY (org, project, entity_id) REFERENCES entities (org, project, id) ON DELETE CASCADE,
    FOREIGN KEY (org, project, community_id) REFERENCES communities (org, project, id) ON DELETE CASCADE
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS community_members_by_community ON community_members (org, project, community_id);

CREATE TABLE IF NOT EXISTS community_sources (
    org          TEXT NOT NULL,
    project      TEXT NOT NULL,
    community_id TEXT NOT NULL,
    memory_id    TEXT NOT NULL,
    PRIMARY KEY (org, project, community_id, memory_id),
    FOREIGN KEY (org, project, community_id) REFERENCES communities (org, project, id) ON DELETE CASCADE,
    FOREIGN KEY (org, project, memory_id) REFERENCES memories (org, project, id) ON DELETE CASCADE
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS community_sources_by_memory ON community_sources (org, project, memory_id);

CREATE TABLE IF NOT EXISTS graph_dirty (
    org       TEXT NOT NULL,
    project   TEXT NOT NULL,
    user_id   TEXT NOT NULL DEFAULT '',
    entity_id TEXT NOT NULL,
    PRIMARY KEY (org, project, user_id, entity_id)
) WITHOUT ROWID;

CREATE TRIGGER IF NOT EXISTS relations_dirty_insert AFTER INSERT ON relations BEGIN
    INSERT INTO graph_dirty VALUES (NEW.org, NEW.project, NEW.user_id, NEW.source), (NEW.org, NEW.project, NEW.user_id, NEW.target)
        ON CONFLICT DO NOTHING;
END;
CREATE TRIGGER IF NOT EXISTS relations_dirty_update AFTER UPDATE ON relations BEGIN
    INSERT INTO graph_dirty VALUES (OLD.org, OLD.project, OLD.user_id, OLD.source), (OLD.org, OLD.project, OLD.user_id, OLD.target),
        (NEW.org, NEW.project, NEW.user_id, NEW.source), (NEW.org, NEW.project, NEW.user_id, NEW.target)
        ON CONFLICT DO NOTHING;
END;
CREATE TRIGGER IF NOT EXISTS relations_dirty_delete AFTER DELETE ON relations BEGIN
    INSERT INTO graph_dirty VALUES (OLD.org, OLD.project, OLD.user_id, OLD.source), (OLD.org, OLD.project, OLD.user_id, OLD.target)
        ON CONFLICT DO NOTHING;
END;
CREATE TRIGGER IF NOT EXISTS evidence_dirty_insert AFTER INSERT ON relation_evidence BEGIN
    INSERT INTO graph_dirty SELECT r.org, r.project, r.user_id, e.id FROM relations r, entities e
        WHERE r.org = NEW.org AND r.project = NEW.project AND r.id = NEW.relation_id
        AND e.org = r.org AND e.project = r.project AND e.id IN (r.source, r.target)
        ON CONFLICT DO NOTHING;
END;
CREATE TRIGGER IF NOT EXISTS evidence_dirty_update AFTER UPDATE ON relation_evidence BEGIN
    INSERT INTO graph_dirty SELECT r.org, r.project, r.user_id, e.id FROM relations r, entities e
        WHERE r.org = NEW.org AND r.project = NEW.project AND r.id = NEW.relation_id
        AND e.org = r.org AND e.project = r.project AND e.id IN (r.source, r.target)
        ON CONFLICT DO NOTHING;
END;
CREATE TRIGGER IF NOT EXISTS evidence_dirty_delete AFTER DELETE ON relation_evidence BEGIN
    INSERT INTO graph_dirty SELECT r.org, r.project, r.user_id, e.id FROM relations r, entities e
        WHERE r.org = OLD.org AND r.project = OLD.project AND r.id = OLD.relation_id
        AND e.org = r.org AND e.project = r.project AND e.id IN (r.source, r.target)
        ON CONFLICT DO NOTHING;
END;
