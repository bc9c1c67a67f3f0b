-- Jobs of two kinds: 'form' forms the memories of its episodes (every job
-- before this migration), 'embed' embeds memories an add stored before
-- their vectors were made, named by id in memories (a JSON array), after
-- applying ops, the updates the add left to it (a JSON array).
ALTER TABLE jobs ADD COLUMN kind TEXT NOT NULL DEFAULT 'form';
ALTER TABLE jobs ADD COLUMN memories TEXT NOT NULL DEFAULT '[]';
ALTER TABLE jobs ADD COLUMN ops TEXT NOT NULL DEFAULT '[]';
