-- A job that failed an attempt, or was put off, is 'retrying' until it runs
-- again; it is as unfinished as a queued or running one, so the partial
-- index that claims read covers it too.
DROP INDEX IF EXISTS jobs_open;
CREATE INDEX IF NOT EXISTS jobs_open ON jobs (org, project, user_id, agent, session, seq)
    WHERE state IN ('queued', 'retrying', 'running');
-- Jobs queued again by a failed attempt before this migration wait as
-- retrying now.
UPDATE jobs SET state = 'retrying' WHERE state = 'queued' AND attempts > 0;
