-- Audit entries' and identity observations' ids are unique per user of a
-- tenant, as episodes' are since migration 19: an import may carry audit
-- ids and a client may choose its observations' ids, and an id another
-- user held answered "already exists" (or was renamed by an import), which
-- told the caller it was in use outside its scope. Both are read only
-- within a user, so each user reaches only their own.
ALTER TABLE audit DROP CONSTRAINT IF EXISTS audit_pkey;
ALTER TABLE audit ADD CONSTRAINT audit_pkey PRIMARY KEY (tenant, user_id, id);
ALTER TABLE identity_observations DROP CONSTRAINT IF EXISTS identity_observations_pkey;
ALTER TABLE identity_observations ADD CONSTRAINT identity_observations_pkey PRIMARY KEY (tenant, user_id, id);
