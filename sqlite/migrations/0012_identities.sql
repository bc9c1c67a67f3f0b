-- Identities (see identity.go): modalities declared per user, the
-- observations (embeddings as little-endian float32 blobs), the
-- identities they cluster into, persons that link identities and a name,
-- and the history of merges, splits, links and unlinks (ids only).
CREATE TABLE IF NOT EXISTS identity_modalities (
    org        TEXT    NOT NULL,
    project    TEXT    NOT NULL,
    user_id    TEXT    NOT NULL,
    name       TEXT    NOT NULL,
    dim        INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (org, project, user_id, name)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS identities (
    org        TEXT    NOT NULL,
    project    TEXT    NOT NULL,
    user_id    TEXT    NOT NULL,
    id         TEXT    NOT NULL,
    modality   TEXT    NOT NULL,
    label      TEXT    NOT NULL DEFAULT '',
    centroid   BLOB    NOT NULL,
    count      INTEGER NOT NULL,
    person_id  TEXT    NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (org, project, id)
);
CREATE INDEX IF NOT EXISTS identities_by_user ON identities (org, project, user_id, modality);

CREATE TABLE IF NOT EXISTS identity_observations (
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
    PRIMARY KEY (org, project, id)
);
CREATE INDEX IF NOT EXISTS identity_observations_by_identity ON identity_observations (org, project, identity_id, at);
CREATE INDEX IF NOT EXISTS identity_observations_by_user ON identity_observations (org, project, user_id);

CREATE TABLE IF NOT EXISTS persons (
    org        TEXT    NOT NULL,
    project    TEXT    NOT NULL,
    user_id    TEXT    NOT NULL,
    id         TEXT    NOT NULL,
    name       TEXT    NOT NULL DEFAULT '',
    aliases    TEXT,
    entity_id  TEXT    NOT NULL DEFAULT '',
    source     TEXT    NOT NULL,
    episode_id TEXT    NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (org, project, id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS persons_by_user ON persons (org, project, user_id);

-- subjects is a JSON array of every id the event names, for the history
-- of any of them.
CREATE TABLE IF NOT EXISTS identity_events (
    org        TEXT    NOT NULL,
    project    TEXT    NOT NULL,
    user_id    TEXT    NOT NULL,
    id         TEXT    NOT NULL,
    op         TEXT    NOT NULL,
    identities TEXT,
    observations TEXT,
    person_id  TEXT    NOT NULL DEFAULT '',
    source     TEXT    NOT NULL DEFAULT '',
    episode_id TEXT    NOT NULL DEFAULT '',
    actor      TEXT    NOT NULL DEFAULT '',
    subjects   TEXT    NOT NULL,
    at         INTEGER NOT NULL,
    PRIMARY KEY (org, project, id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS identity_events_by_user ON identity_events (org, project, user_id, at);
