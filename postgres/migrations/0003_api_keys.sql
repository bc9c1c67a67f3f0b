-- API keys of the HTTP API (engram keys, /v1/keys). The secret itself is
-- never stored: hash is its SHA-256 (the secret is 256 random bits, so a
-- fast hash loses nothing), and a presented secret is looked up by the id
-- it starts with. Keys are looked up by id before the tenant is known, so
-- like meta this is a reference table, not tenant data: its key is the id.
CREATE TABLE api_keys (
    id         text COLLATE "C" PRIMARY KEY,
    name       text NOT NULL DEFAULT '',
    org        text COLLATE "C" NOT NULL,
    project    text COLLATE "C" NOT NULL,
    user_id    text COLLATE "C" NOT NULL DEFAULT '',
    role       text NOT NULL,
    hash       bytea NOT NULL,
    created_at timestamptz NOT NULL,
    revoked_at timestamptz
);
CREATE INDEX api_keys_by_tenant ON api_keys (org, project, id);
