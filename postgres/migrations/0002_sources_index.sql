-- Which memories cite an episode (MemoryFilter.Sources; formation looks up
-- the memory of the turn stored before a new one): an inverted index on the
-- array of episode ids, leading with the tenant when btree_gin is installed
-- (see 0001), else on the array alone.
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'btree_gin') THEN
        CREATE INDEX memories_by_source ON memories USING gin (tenant, sources);
    ELSE
        CREATE INDEX memories_by_source ON memories USING gin (sources);
    END IF;
END
$$;
