-- Media an episode carries (engram.Media as a JSON array: resource ids,
-- kinds, spans, captions, transcripts, client embeddings); NULL when none.
-- The resources themselves stay in resources/resource_chunks.
ALTER TABLE episodes ADD COLUMN media TEXT;

-- Uploads are deduplicated by content within a namespace
-- (engram.ResourceFinder): the same bytes uploaded twice are kept once.
CREATE INDEX IF NOT EXISTS resources_by_sha256 ON resources (org, project, sha256);
