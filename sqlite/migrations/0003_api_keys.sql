-- API keys of the HTTP API (engram keys, /v1/keys). The secret itself is
-- never stored: hash is its SHA-256 (the secret is 256 random bits, so a
-- fast hash loses nothing), and a presented secret is looked up by the id
-- it starts with. A key is bound to a tenant and optionally a user; rows
-- are looked up by id across tenants, so the key is the id alone.
CREATE TABLE api_keys (
    id         TEXT    PRIMARY KEY,
    name       TEXT    NOT NULL DEFAULT '',
    org        TEXT    NOT NULL,
    project    TEXT    NOT NULL,
    user_id    TEXT    NOT NULL DEFAULT '',
    role       TEXT    NOT NULL,
    hash       BLOB    NOT NULL,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
) WITHOUT ROWID;
CREATE INDEX api_keys_by_tenant ON api_keys (org, project, id);
