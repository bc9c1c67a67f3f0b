-- Episodes' words were indexed in episodes_fts, but nothing ever searched
-- them: the engine searches memories, and reads episodes by id, scope and
-- time. The index cost every episode written one FTS5 insert (and a
-- purge one secure delete), and held a second copy of each episode's
-- words. Dropping it frees its pages; with secure_delete on they are
-- zeroed, so none of the words stay in the file.
DROP TABLE IF EXISTS episodes_fts;
