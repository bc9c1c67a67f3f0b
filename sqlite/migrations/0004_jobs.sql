-- The durable job queue (engram.JobQueue): asynchronous formation of the
-- memories of stored episodes. A job names its episodes by id (a JSON
-- array) and lives in their namespace. seq is the enqueue order, which
-- jobs of one namespace run in; the id is the job's name for clients.
-- Written with IF NOT EXISTS so that a test which replays migrations over
-- an existing file can run it again.
CREATE TABLE IF NOT EXISTS jobs (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    id          TEXT    NOT NULL,
    org         TEXT    NOT NULL,
    project     TEXT    NOT NULL,
    user_id     TEXT    NOT NULL DEFAULT '',
    agent       TEXT    NOT NULL DEFAULT '',
    session     TEXT    NOT NULL DEFAULT '',
    episodes    TEXT    NOT NULL,
    state       TEXT    NOT NULL,
    attempts    INTEGER NOT NULL DEFAULT 0,
    last_error  TEXT    NOT NULL DEFAULT '',
    lease_owner TEXT    NOT NULL DEFAULT '',
    lease_until INTEGER,
    run_after   INTEGER NOT NULL,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS jobs_by_id ON jobs (org, project, id);
CREATE INDEX IF NOT EXISTS jobs_by_user ON jobs (org, project, user_id, id);
-- Only unfinished jobs are looked at by claims, so finished ones cost them
-- nothing.
CREATE INDEX IF NOT EXISTS jobs_open ON jobs (org, project, user_id, agent, session, seq)
    WHERE state IN ('queued', 'running');
