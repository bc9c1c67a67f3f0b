-- Audit entries' and identity observations' ids are unique per user of a
-- tenant, as episodes' are since migration 19: an import may carry audit
-- ids and a client may choose its observations' ids, and an id another
-- user held answered "already exists" (or was renamed by an import), which
-- told the caller it was in use outside its scope. Both are read only
-- within a user, so each user reaches only their own.
--
-- SQLite cannot change a primary key, so both tables are built again.
CREATE TABLE audit_by_owner (
    org     TEXT    NOT NULL,
    project TEXT    NOT NULL,
    user_id TEXT    NOT NULL DEFAULT '',
    agent   TEXT    NOT NULL DEFAULT '',
    session TEXT    NOT NULL DEFAULT '',
    id      TEXT    NOT NULL,
    actor   TEXT    NOT NULL DEFAULT '',
    op      TEXT    NOT NULL,
    ids     TEXT,
    detail  TEXT    NOT NULL DEFAULT '',
    at      INTEGER NOT NULL,
    PRIMARY KEY (org, project, user_id, id)
) WITHOUT ROWID;
INSERT INTO audit_by_owner (org, project, user_id, agent, session, id, actor, op, ids, detail, at)
    SELECT org, project, user_id, agent, session, id, actor, op, ids, detail, at FROM audit;
DROP TABLE audit;
ALTER TABLE audit_by_owner RENAME TO audit;
CREATE INDEX audit_by_user ON audit (org, project, user_id, id);

CREATE TABLE identity_observations_by_owner (
    org         TEXT    NOT NULL,
    project     TEXT    NOT NULL,
    user_id     TEXT    NOT NULL,
    id          TEXT    NOT NULL,
    identity_id TEXT    NOT NULL,
    modality    TEXT    NOT NULL,
    embedding   BLOB    NOT NULL,
    episode_id  TEXT    NOT NULL DEFAULT '',
    span_start  INTEGER,
    span_end    INTEGER,
    at          INTEGER NOT NULL,
    PRIMARY KEY (org, project, user_id, id)
);
INSERT INTO identity_observations_by_owner (org, project, user_id, id, identity_id, modality,
        embedding, episode_id, span_start, span_end, at)
    SELECT org, project, user_id, id, identity_id, modality, embedding, episode_id, span_start, span_end, at
    FROM identity_observations;
DROP TABLE identity_observations;
ALTER TABLE identity_observations_by_owner RENAME TO identity_observations;
CREATE INDEX identity_observations_by_identity ON identity_observations (org, project, identity_id, at);
CREATE INDEX identity_observations_by_user ON identity_observations (org, project, user_id);
