-- The fingerprint of a turn memory's words (engram.MetaFingerprint), by
-- which formation finds a batch's repeats: without an index, that lookup
-- read every memory of the user and grew an add's time with the history.
-- The key literal is the one the query repeats (indexedMetadataIn).
CREATE INDEX IF NOT EXISTS memories_by_fingerprint
    ON memories (tenant, user_id, (metadata ->> 'fingerprint'));
