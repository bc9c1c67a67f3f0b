-- The vault's data keys, one per tenant, each wrapped (AES-GCM) by the
-- master key the server is given (ENGRAM_VAULT_KEY or --vault-key-file).
-- The data key itself is never stored in the clear.
CREATE TABLE vault_keys (
    org        text COLLATE "C" NOT NULL,
    project    text COLLATE "C" NOT NULL,
    wrapped    bytea NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (org, project)
);
