-- An episode's id is unique per user of a tenant, no longer per tenant: a
-- client may choose its episodes' ids, and with one key per tenant an id
-- another user held answered "already exists", which told the caller that
-- the id was in use outside its scope. Reads by id name the user (a scope's
-- user always matches exactly), so each user reaches only their own. The
-- key still leads with the tenant, the distribution column.
ALTER TABLE episodes DROP CONSTRAINT IF EXISTS episodes_pkey;
ALTER TABLE episodes ADD CONSTRAINT episodes_pkey PRIMARY KEY (tenant, user_id, id);
