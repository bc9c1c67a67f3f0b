-- An episode's id is unique per user of a tenant, no longer per tenant: a
-- client may choose its episodes' ids, and with one key per tenant an id
-- another user held answered "already exists", which told the caller that
-- the id was in use outside its scope. Reads by id name the user (a scope's
-- user always matches exactly), so each user reaches only their own.
--
-- SQLite cannot drop a UNIQUE constraint, so the table is built again with
-- the new one; rid keeps its values (nothing else refers to it since
-- migration 15 dropped episodes_fts).
CREATE TABLE episodes_by_owner (
    rid         INTEGER PRIMARY KEY,
    org         TEXT    NOT NULL,
    project     TEXT    NOT NULL,
    user_id     TEXT    NOT NULL DEFAULT '',
    agent       TEXT    NOT NULL DEFAULT '',
    session     TEXT    NOT NULL DEFAULT '',
    id          TEXT    NOT NULL,
    role        TEXT    NOT NULL DEFAULT '',
    speaker     TEXT    NOT NULL DEFAULT '',
    content     TEXT    NOT NULL,
    modality    TEXT    NOT NULL DEFAULT '',
    occurred_at INTEGER NOT NULL,
    received_at INTEGER NOT NULL,
    metadata    TEXT,
    media       TEXT,
    UNIQUE (org, project, user_id, id)
);
INSERT INTO episodes_by_owner (rid, org, project, user_id, agent, session, id, role, speaker,
        content, modality, occurred_at, received_at, metadata, media)
    SELECT rid, org, project, user_id, agent, session, id, role, speaker,
        content, modality, occurred_at, received_at, metadata, media
    FROM episodes;
DROP TABLE episodes;
ALTER TABLE episodes_by_owner RENAME TO episodes;
CREATE INDEX episodes_by_session ON episodes (org, project, user_id, session, occurred_at, id);
CREATE INDEX episodes_by_user ON episodes (org, project, user_id, occurred_at, id);
