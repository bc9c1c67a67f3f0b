package engine

// The engine's capability services. Each owns one capability of
// engram.Service (and the optional capabilities beside it) over the
// shared core, and names as fields the other services it calls, so that
// what a change to one may touch is listed here.

// writer applies memory operations inside a write transaction: insert,
// update, supersede, soft delete, conflicts, versions and the entity
// graph staged with them. Every service that writes memories goes
// through it.
type writer struct {
	*core
}

// memories reads and changes memories and keeps their history: get, list,
// update, supersede, delete, restore, rollback, conflicts, profiles and
// locating a memory's namespace.
type memories struct {
	*writer
}

// ingest stores episodes and memories and forms memories from episodes:
// the formers and consolidation, the background jobs that form
// asynchronously, media descriptions, and the entity graph staged with
// each write.
type ingest struct {
	*writer
	media *media // reads the media episodes bring, to describe them
}

// searcher runs searches: the one-shot pipeline of channels, fusion and
// rerank, contexts within a budget, agentic searches and the vault's.
type searcher struct {
	*core
}

// graphs reads and edits the entity graph: entities, relations, their
// history, merges and splits, and communities.
type graphs struct {
	*core
}

// media keeps resources, documents and persistent identities (faces,
// voices) with their export records.
type media struct {
	*writer
}

// admin moves and removes data in bulk: export, import, audit, scope
// purges with their residue, expiry sweeps and index files.
type admin struct {
	*writer
	ingest *ingest // stages the entity graph of imported memories
	media  *media  // exports and imports resources and identities
}

// assemble returns the engine of c's services, each wired to the
// services it calls.
func assemble(c *core) *Engine {
	w := &writer{core: c}
	e := &Engine{core: c}
	e.memories = &memories{writer: w}
	e.graphs = &graphs{core: c}
	e.media = &media{writer: w}
	e.searcher = &searcher{core: c}
	e.ingest = &ingest{writer: w, media: e.media}
	e.admin = &admin{writer: w, ingest: e.ingest, media: e.media}
	return e
}
