-- The sweeper (engine.Sweep) finds the active memories whose TTL has
-- passed across tenants; this partial index holds only memories that have
-- a TTL, so it stays small and a sweep reads no more than it marks.
CREATE INDEX IF NOT EXISTS memories_lapsing ON memories (expires_at, org, project, id)
    WHERE status = 'active' AND expires_at IS NOT NULL;
