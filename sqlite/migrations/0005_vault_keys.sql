-- The vault's data keys, one per tenant, each wrapped (AES-GCM) by the
-- master key the server is given (ENGRAM_VAULT_KEY or --vault-key-file).
-- The data key itself is never stored in the clear.
CREATE TABLE vault_keys (
    org        TEXT    NOT NULL,
    project    TEXT    NOT NULL,
    wrapped    BLOB    NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (org, project)
) WITHOUT ROWID;
