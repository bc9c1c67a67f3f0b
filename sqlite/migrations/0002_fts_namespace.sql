-- One FTS5 index serves every tenant, so without more a query's terms walk
-- the postings of the whole corpus: the cost of a common word grew with
-- every other tenant's data. The ns column holds one token per (tenant,
-- user), derived from a hash of both (see nsToken in fts.go); every search
-- ANDs the tokens of its scope into the MATCH, so FTS5 only visits rows of
-- the caller's namespace. A contentless table cannot gain a column, so it is
-- made anew; the program fills it from the memories table in the same
-- transaction (reindexMemories in db.go), since the indexed text is made in
-- Go (CJK bigrams).
DROP TABLE memories_fts;
CREATE VIRTUAL TABLE memories_fts USING fts5(
    value, abstraction, cues, ns,
    content = '', contentless_delete = 1,
    tokenize = 'unicode61 remove_diacritics 2'
);
