-- Jobs of two kinds: 'form' forms the memories of its episodes (every job
-- before this migration), 'embed' embeds memories an add stored before
-- their vectors were made, named by id in memories (a JSON array).
ALTER TABLE jobs ADD COLUMN kind TEXT NOT NULL DEFAULT 'form';
ALTER TABLE jobs ADD COLUMN memories TEXT NOT NULL DEFAULT '[]';
