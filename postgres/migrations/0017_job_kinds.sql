-- Jobs of two kinds: 'form' forms the memories of its episodes (every job
-- before this migration), 'embed' embeds memories an add stored before
-- their vectors were made, named by id in memories.
ALTER TABLE jobs ADD COLUMN IF NOT EXISTS kind text NOT NULL DEFAULT 'form';
ALTER TABLE jobs ADD COLUMN IF NOT EXISTS memories text[] NOT NULL DEFAULT '{}';
