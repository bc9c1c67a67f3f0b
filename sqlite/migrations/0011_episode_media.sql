-- Media an episode carries (engram.Media as a JSON array: resource ids,
-- kinds, spans, captions, transcripts, client embeddings); NULL when none.
-- The resources themselves stay in resources/resource_chunks.
ALTER TABLE episodes ADD COLUMN media TEXT;
