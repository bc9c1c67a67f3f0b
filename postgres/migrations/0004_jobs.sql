-- The durable job queue (engram.JobQueue): asynchronous formation of the
-- memories of stored episodes. A job names its episodes by id and lives in
-- their namespace, keyed by tenant like every tenant table. seq is the
-- enqueue order, which jobs of one namespace run in. Workers of several
-- servers claim jobs with SELECT ... FOR UPDATE SKIP LOCKED; a claim looks
-- across tenants (it serves workers, never a client), so on a sharded
-- deployment it is a query over every shard.
CREATE TABLE jobs (
    seq         bigserial,
    tenant      text COLLATE "C" NOT NULL,
    org         text COLLATE "C" NOT NULL,
    project     text COLLATE "C" NOT NULL,
    user_id     text COLLATE "C" NOT NULL DEFAULT '',
    agent       text COLLATE "C" NOT NULL DEFAULT '',
    session     text COLLATE "C" NOT NULL DEFAULT '',
    id          text COLLATE "C" NOT NULL,
    episodes    text[] NOT NULL,
    state       text NOT NULL,
    attempts    integer NOT NULL DEFAULT 0,
    last_error  text NOT NULL DEFAULT '',
    lease_owner text NOT NULL DEFAULT '',
    lease_until timestamptz,
    run_after   timestamptz NOT NULL,
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL,
    PRIMARY KEY (tenant, id),
    CHECK (tenant = org || '/' || project)
);
CREATE INDEX jobs_by_user ON jobs (tenant, user_id, id);
-- Only unfinished jobs are looked at by claims, so finished ones cost them
-- nothing: a claim reads this partial index (few rows) and sorts by seq.
-- Like every index of tenant data it leads with the tenant.
CREATE INDEX jobs_open_by_namespace ON jobs (tenant, user_id, agent, session, seq)
    WHERE state IN ('queued', 'running');
