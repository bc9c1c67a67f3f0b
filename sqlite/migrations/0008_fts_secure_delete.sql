-- Delete means gone. The text indexes were contentless_delete tables: a
-- DELETE there only records a tombstone, and the deleted words stay in the
-- index's segments until a merge happens to rewrite them. They are made
-- anew as plain contentless tables with FTS5's secure-delete option: a row
-- is removed with the 'delete' command given the text it was indexed with
-- (the program keeps that text in memories and episodes), and its entries
-- are erased from the segments at once. The cost is bounded by the row's
-- own terms, not by the size of the index as an 'optimize' after every
-- delete would be. The program refills both indexes in this migration's
-- transaction (reindexAll in db.go), since the indexed text is made in Go.
DROP TABLE memories_fts;
CREATE VIRTUAL TABLE memories_fts USING fts5(
    value, abstraction, cues, ns,
    content = '',
    tokenize = 'unicode61 remove_diacritics 2'
);
INSERT INTO memories_fts (memories_fts, rank) VALUES ('secure-delete', 1);
DROP TABLE episodes_fts;
CREATE VIRTUAL TABLE episodes_fts USING fts5(
    content,
    content = '',
    tokenize = 'unicode61 remove_diacritics 2'
);
INSERT INTO episodes_fts (episodes_fts, rank) VALUES ('secure-delete', 1);
