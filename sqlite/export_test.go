package sqlite

// ReindexMemories fills memories_fts from the memories table, as
// migrations 2 and 8 do.
var ReindexMemories = reindexMemories
