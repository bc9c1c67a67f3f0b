-- Identities (see identity.go): modalities declared per user, the
-- observations (embeddings as little-endian float32 bytea), the
-- identities they cluster into, persons that link identities and a name,
-- and the history of merges, splits, links and unlinks (ids only).
CREATE TABLE IF NOT EXISTS identity_modalities (
    tenant     text COLLATE "C" NOT NULL,
    user_id    text COLLATE "C" NOT NULL,
    name       text COLLATE "C" NOT NULL,
    dim        integer NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (tenant, user_id, name)
);

CREATE TABLE IF NOT EXISTS identities (
    tenant     text COLLATE "C" NOT NULL,
    user_id    text COLLATE "C" NOT NULL,
    id         text COLLATE "C" NOT NULL,
    modality   text COLLATE "C" NOT NULL,
    label      text NOT NULL DEFAULT '',
    centroid   bytea NOT NULL,
    count      integer NOT NULL,
    person_id  text COLLATE "C" NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (tenant, id)
);
CREATE INDEX IF NOT EXISTS identities_by_user ON identities (tenant, user_id, modality);

CREATE TABLE IF NOT EXISTS identity_observations (
    tenant      text COLLATE "C" NOT NULL,
    user_id     text COLLATE "C" NOT NULL,
    id          text COLLATE "C" NOT NULL,
    identity_id text COLLATE "C" NOT NULL,
    modality    text COLLATE "C" NOT NULL,
    embedding   bytea NOT NULL,
    episode_id  text COLLATE "C" NOT NULL DEFAULT '',
    span_start  bigint,
    span_end    bigint,
    at          timestamptz NOT NULL,
    PRIMARY KEY (tenant, id)
);
CREATE INDEX IF NOT EXISTS identity_observations_by_identity ON identity_observations (tenant, identity_id, at);
CREATE INDEX IF NOT EXISTS identity_observations_by_user ON identity_observations (tenant, user_id);

CREATE TABLE IF NOT EXISTS persons (
    tenant     text COLLATE "C" NOT NULL,
    user_id    text COLLATE "C" NOT NULL,
    id         text COLLATE "C" NOT NULL,
    name       text NOT NULL DEFAULT '',
    aliases    text[],
    entity_id  text COLLATE "C" NOT NULL DEFAULT '',
    source     text NOT NULL,
    episode_id text COLLATE "C" NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (tenant, id)
);
CREATE INDEX IF NOT EXISTS persons_by_user ON persons (tenant, user_id);

-- subjects holds every id the event names, for the history of any of them.
CREATE TABLE IF NOT EXISTS identity_events (
    tenant       text COLLATE "C" NOT NULL,
    user_id      text COLLATE "C" NOT NULL,
    id           text COLLATE "C" NOT NULL,
    op           text NOT NULL,
    identities   text[],
    observations text[],
    person_id    text COLLATE "C" NOT NULL DEFAULT '',
    source       text NOT NULL DEFAULT '',
    episode_id   text COLLATE "C" NOT NULL DEFAULT '',
    actor        text NOT NULL DEFAULT '',
    subjects     text[] NOT NULL,
    at           timestamptz NOT NULL,
    PRIMARY KEY (tenant, id)
);
CREATE INDEX IF NOT EXISTS identity_events_by_user ON identity_events (tenant, user_id, at);
