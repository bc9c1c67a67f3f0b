package engram

import (
	"context"
	"time"
)

// Service is everything a client can do with engram. The engine package
// implements it in-process over a Store; the http package serves it and
// offers a client that implements it against a remote server, so the CLI
// and Go programs use one interface either way. Both stores keep
// everything it serves, so every implementation implements all of it and
// the compiler checks that: no capability is found by type assertion.
//
// It is made of one small interface per capability, so that code needing
// one of them (an integration that only searches, say) asks for just
// that.
//
// Every method fails with an *Error: EINVALID for bad input (nothing is
// stored), ENOTFOUND for an id outside the scope, EUNAVAILABLE when the
// store is down.
type Service interface {
	EpisodeService
	MemoryService
	SearchService
	ScopeService
	JobService
	ProfileReader
	ConflictService
	GraphService
	GraphEditor
	CommunityService
	ResourceService
	IdentityService
}

// EpisodeService stores and reads episodes, the raw turns memories are
// formed from. Its methods fail as those of Service.
type EpisodeService interface {
	// AddEpisodes stores a batch of episodes and, unless Form is false, the
	// memories formed from them, all in one transaction.
	AddEpisodes(ctx context.Context, req AddEpisodesRequest) (*AddEpisodesResult, error)
	// GetEpisode returns one episode of the scope, or ENOTFOUND.
	GetEpisode(ctx context.Context, s Scope, id string) (*Episode, error)
	// ListEpisodes lists the episodes of the scope that pass the filter,
	// one page at a time.
	ListEpisodes(ctx context.Context, s Scope, f EpisodeFilter) (*EpisodePage, error)
	// DeleteEpisode purges one episode and the memories whose only source
	// it is, and forms again without it the memories it shares with other
	// sources; the result names both.
	DeleteEpisode(ctx context.Context, s Scope, id string) (*EpisodeDeleteResult, error)
}

// MemoryService stores, reads and changes memories, keeping every change
// as a version. Its methods fail as those of Service.
type MemoryService interface {
	// AddMemories stores memories as given, without any formation.
	AddMemories(ctx context.Context, req AddMemoriesRequest) ([]Memory, error)
	// GetMemory returns one memory of the scope, or ENOTFOUND.
	GetMemory(ctx context.Context, s Scope, id string) (*Memory, error)
	// ListMemories lists the memories of the scope that pass the filter,
	// one page at a time.
	ListMemories(ctx context.Context, s Scope, f MemoryFilter) (*MemoryPage, error)
	// UpdateMemory changes fields of an active memory in place and appends
	// an UPDATE version.
	UpdateMemory(ctx context.Context, s Scope, id string, p MemoryPatch) (*Memory, error)
	// SupersedeMemory closes an active memory's validity at req.At and adds
	// its replacement valid from req.At; both are kept.
	SupersedeMemory(ctx context.Context, s Scope, id string, req SupersedeRequest) (*SupersedeResult, error)
	// DeleteMemory soft-deletes (restorable) or, with Hard, purges a memory
	// with its history and index entries.
	DeleteMemory(ctx context.Context, s Scope, id string, o DeleteOptions) error
	// RestoreMemory brings a soft-deleted memory back to active.
	RestoreMemory(ctx context.Context, s Scope, id string, reason string) (*Memory, error)
	// History returns a memory's versions, oldest first.
	History(ctx context.Context, s Scope, id string) ([]Version, error)
	// Rollback makes a memory's content what it was at version v, as a new
	// version.
	Rollback(ctx context.Context, s Scope, id string, v int, reason string) (*Memory, error)
}

// SearchService finds the memories that best answer a query.
type SearchService interface {
	// Search ranks the memories of req.Scope against req.Query. It fails
	// as the methods of Service do.
	Search(ctx context.Context, req SearchRequest) (*SearchResult, error)
}

// ScopeService works on a whole scope at once: it moves its records out
// and in, reads its audit log and purges it. Its methods fail as those
// of Service.
type ScopeService interface {
	// DeleteScope purges everything in a user's, agent's or session's scope;
	// a scope wider than one user or agent is refused.
	DeleteScope(ctx context.Context, s Scope) (*PurgeCounts, error)
	// Export calls fn for every record in the scope (see Store.Export),
	// then for each resource of the scope and its content in
	// RecordResourceChunk records.
	Export(ctx context.Context, s Scope, fn func(Record) error) error
	// Import stores exported records losslessly in one transaction. Every
	// record must lie inside s. A record identical to a stored one is
	// skipped; one that differs from a stored record with its id is a
	// conflict and nothing is imported.
	Import(ctx context.Context, s Scope, recs []Record) (*ImportResult, error)
	// Audit reads the audit log of the scope, newest first.
	Audit(ctx context.Context, s Scope, f AuditFilter) (*AuditPage, error)
}

// JobService reads the background jobs of a scope, such as the formation
// of an asynchronous AddEpisodes. Its methods fail as those of Service.
type JobService interface {
	// GetJob returns a background job of the scope, or ENOTFOUND.
	GetJob(ctx context.Context, s Scope, id string) (*Job, error)
	// ListJobs lists the background jobs of the scope, newest first.
	ListJobs(ctx context.Context, s Scope, f JobFilter) (*JobPage, error)
}

// EpisodeInput is one episode of an AddEpisodesRequest.
type EpisodeInput struct {
	ID         string         `json:"id,omitempty"` // optional client-chosen id (must be a valid id)
	Role       string         `json:"role,omitempty"`
	Speaker    string         `json:"speaker,omitempty"`
	Content    string         `json:"content"`
	Modality   Modality       `json:"modality,omitempty"`
	OccurredAt *time.Time     `json:"occurred_at,omitempty"`
	Metadata   map[string]any `json:"metadata,omitempty"`
	Media      []Media        `json:"media,omitempty"` // resources of the same tenant; see Media
}

// AddEpisodesRequest adds a batch of episodes to one namespace.
type AddEpisodesRequest struct {
	Namespace Namespace      `json:"namespace"`
	Episodes  []EpisodeInput `json:"episodes"`
	// Form, when false, stores the episodes without forming memories.
	Form *bool `json:"form,omitempty"`
	// Async, when true, stores the episodes with a job that forms their
	// memories in the background, and returns at once; when nil the
	// engine's default applies. It needs a store with a job queue.
	Async *bool `json:"async,omitempty"`
}

// AddEpisodesResult lists what an AddEpisodes call stored.
type AddEpisodesResult struct {
	Episodes []Episode `json:"episodes"`
	Memories []Memory  `json:"memories"` // added or changed by formation
	// Decisions counts the operations formation decided on, by op (NOOP
	// included, though it writes nothing); absent when none.
	Decisions map[Op]int `json:"decisions,omitempty"`
	// Job is the background job that will form the memories, when the
	// add was asynchronous (Memories then holds only the provisional
	// memories a stand-in former made at once, if the engine has one, see
	// MetaProvisional).
	Job *Job `json:"job,omitempty"`
	// EmbedJob is the background job that will embed Memories, when the
	// engine answered before embedding them (see JobEmbed): full-text
	// search finds them at once, the dense channel once it is done. It
	// also applies formation's update of the turn before the add (its
	// abstraction gains the new turn as context), which Memories then
	// leaves out.
	EmbedJob *Job `json:"embed_job,omitempty"`
	// Unformed lists media stored without memories: they came without a
	// caption or transcript and no model endpoint is configured to make
	// one (e.g. "episodes[0].media[1]: no caption; ..."); absent when none.
	Unformed []string `json:"unformed,omitempty"`
	// Sensitive counts, by kind, the secrets and personal data found in
	// the episodes that were sealed or redacted as the tenant's policy
	// says (see Treatment); absent when none. It never holds a value.
	Sensitive []SensitiveCount `json:"sensitive,omitempty"`
}

// AddMemoriesRequest adds memories to one namespace, without formation.
type AddMemoriesRequest struct {
	Namespace Namespace `json:"namespace"`
	Memories  []Memory  `json:"memories"` // their Namespace fields are ignored
}

// MemoryPatch lists the fields an update changes; nil fields stay.
type MemoryPatch struct {
	Kind        *Kind          `json:"kind,omitempty"`
	Abstraction *string        `json:"abstraction,omitempty"`
	Cues        *[]string      `json:"cues,omitempty"`
	Value       *string        `json:"value,omitempty"`
	Language    *string        `json:"language,omitempty"`
	Confidence  *float64       `json:"confidence,omitempty"`
	Importance  *float64       `json:"importance,omitempty"`
	ValidFrom   *time.Time     `json:"valid_from,omitempty"`
	ValidTo     *time.Time     `json:"valid_to,omitempty"`
	ExpiresAt   *time.Time     `json:"expires_at,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"` // replaces the whole map when non-nil
	Reason      string         `json:"reason,omitempty"`
	// Sources are episode ids a former's merge adds to the memory's
	// sources, each kept once. Clients cannot set them: provenance comes
	// from formation only.
	Sources []string `json:"-"`
}

// SupersedeRequest replaces a memory by a new one.
type SupersedeRequest struct {
	New    Memory     `json:"new"`          // its Namespace is ignored: it takes the old one's
	At     *time.Time `json:"at,omitempty"` // event time of the change; default now
	Reason string     `json:"reason,omitempty"`
}

// SupersedeResult holds both memories after a supersede.
type SupersedeResult struct {
	Old Memory `json:"old"`
	New Memory `json:"new"`
}

// DeleteOptions choose between a soft and a hard delete.
type DeleteOptions struct {
	Hard   bool   `json:"hard,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// EpisodePage is one page of a list of episodes.
type EpisodePage struct {
	Episodes []Episode `json:"episodes"`
	Next     string    `json:"next,omitempty"`
	// EmptyScope is set on an empty first page when the scope holds no
	// episode and no current memory at all (see SearchResult.EmptyScope).
	EmptyScope bool `json:"empty_scope,omitempty"`
}

// MemoryPage is one page of a list of memories.
type MemoryPage struct {
	Memories []Memory `json:"memories"`
	Next     string   `json:"next,omitempty"`
	// EmptyScope is set on an empty first page when the scope holds no
	// episode and no current memory at all (see SearchResult.EmptyScope).
	EmptyScope bool `json:"empty_scope,omitempty"`
}

// AuditPage is one page of the audit log.
type AuditPage struct {
	Entries []AuditEntry `json:"entries"`
	Next    string       `json:"next,omitempty"`
}

// ImportResult counts what an import stored and skipped.
type ImportResult struct {
	Episodes int `json:"episodes"`
	Memories int `json:"memories"`
	Versions int `json:"versions"`
	Audit    int `json:"audit"`
	// Resources counts the resources stored with their content.
	Resources int `json:"resources,omitempty"`
	// IdentityRecords counts the modalities, persons, identities,
	// observations and identity events stored.
	IdentityRecords int `json:"identity_records,omitempty"`
	Skipped         int `json:"skipped"`
	// Renamed maps the id of each record stored under a fresh id, because
	// its own was taken outside the import scope, to that fresh id.
	// Always present, empty when nothing was renamed.
	Renamed map[string]string `json:"renamed"`
	// Sensitive counts, by kind, the secrets and personal data found in
	// the records' texts that were sealed or redacted as the tenant's
	// policy says; absent when none. It never holds a value.
	Sensitive []SensitiveCount `json:"sensitive,omitempty"`
}

// SearchRequest asks for the memories that best answer a query.
type SearchRequest struct {
	Scope Scope `json:"scope"`
	// Query is required: at most MaxContentBytes of valid UTF-8 without
	// NUL characters; anything else is an EINVALID error naming query.
	Query   string       `json:"query"`
	K       int          `json:"k,omitempty"` // default 10, at most MaxK
	Filter  MemoryFilter `json:"filter,omitempty"`
	Explain bool         `json:"explain,omitempty"`
	// Channels limits retrieval to the named channels (e.g. "bm25",
	// "dense"); empty means every channel the engine has. Naming a channel
	// the engine does not have is an EINVALID error.
	Channels []string `json:"channels,omitempty"`
	// Now is the reference time for relative expressions in the query
	// ("last week"); default the server's clock.
	Now *time.Time `json:"now,omitempty"`
	// Budget, when above zero, asks for a context: the hits, in rank
	// order, rendered one per line into at most Budget tokens (cl100k_base),
	// a hit that would overflow skipped. Only the hits in the context are
	// returned. With Budget set and K zero, up to MaxK hits are considered.
	// A negative Budget, or one above MaxBudget, is an EINVALID error.
	Budget int `json:"budget,omitempty"`
	// Decay, when false, turns off the signals that change with time:
	// recency and how often and lately a memory was read (its decayed
	// access count). Nil or true keeps them as the engine is configured.
	Decay *bool `json:"decay,omitempty"`
	// Vault searches the vault instead: the memories of kind vault in the
	// scope, decrypted and matched by their terms (see engine.searchVault).
	// The context must carry WithVault, else it is EFORBIDDEN.
	Vault bool `json:"vault,omitempty"`
	// Mode is how the search runs: ModeOneShot ("" too), one pass of the
	// pipeline, or ModeAgentic, a loop of steps that refine the query,
	// expand from the best hits and stop (see engine.searchAgentic). Any
	// other value, or agentic with Vault, is an EINVALID error.
	Mode string `json:"mode,omitempty"`
	// Steps is the most steps an agentic search takes after its first
	// search; 0 means DefaultSteps, above MaxSteps is EINVALID.
	Steps int `json:"steps,omitempty"`
	// LLMCalls is the most calls an agentic search makes to the engine's
	// chat model; 0 means one per step, above MaxSteps is EINVALID. Without
	// a chat model none are made.
	LLMCalls int `json:"llm_calls,omitempty"`
	// LLMTokens is the most prompt and completion tokens an agentic search
	// spends on the chat model, as the server reports them; 0 means
	// DefaultLLMTokens, above MaxLLMTokens is EINVALID. The loop stops
	// once they are spent.
	LLMTokens int `json:"llm_tokens,omitempty"`
}

// ValidateMode checks the request's Mode and agentic budgets (Steps,
// LLMCalls, LLMTokens) and returns an EINVALID error naming the field at
// fault: an unknown mode, agentic with Vault, a budget out of range, or a
// budget set for a one-shot search.
func (req SearchRequest) ValidateMode() error {
	switch req.Mode {
	case "", ModeOneShot, ModeAgentic:
	default:
		return Errorf(EINVALID, "mode %q is not one of %s, %s", req.Mode, ModeOneShot, ModeAgentic)
	}
	if req.Mode == ModeAgentic && req.Vault {
		return Errorf(EINVALID, "mode %s does not apply to a vault search", ModeAgentic)
	}
	for _, b := range []struct {
		name     string
		v, limit int
	}{{"steps", req.Steps, MaxSteps}, {"llm_calls", req.LLMCalls, MaxSteps}, {"llm_tokens", req.LLMTokens, MaxLLMTokens}} {
		switch {
		case b.v < 0 || b.v > b.limit:
			return Errorf(EINVALID, "%s %d is outside 0..%d", b.name, b.v, b.limit)
		case b.v != 0 && req.Mode != ModeAgentic:
			return Errorf(EINVALID, "%s applies to mode %s only", b.name, ModeAgentic)
		}
	}
	return nil
}

// Search modes (SearchRequest.Mode).
const (
	ModeOneShot = "oneshot"
	ModeAgentic = "agentic"
)

// Budgets of an agentic search.
const (
	DefaultSteps     = 3
	MaxSteps         = 8
	DefaultLLMTokens = 8000
	MaxLLMTokens     = 100000
)

// Actions of an agentic search step (AgentStep.Action).
const (
	ActionSearch = "search" // the first search, of the query as asked
	ActionRefine = "refine" // search again with a rewritten query or its parts
	ActionExpand = "expand" // follow cues and neighbours from the best hits
	ActionStop   = "stop"   // the context suffices or a budget is spent
)

// AgentStep is one step of an agentic search, as its trace shows it.
type AgentStep struct {
	Action string `json:"action"`
	// Queries are the texts searched in the step: the query, its rewrite
	// or the parts of a compound question.
	Queries []string `json:"queries,omitempty"`
	// New are the ids of the memories the step added to the first places
	// (the k best) of the merged ranking.
	New []string `json:"new,omitempty"`
	// Gain is the share of the first places' score that New brought.
	Gain float64 `json:"gain"`
	// By says who chose the action: "rules", or "llm".
	By string `json:"by"`
	// Reason says why the action was chosen, or why the search stopped.
	Reason string `json:"reason,omitempty"`
}

// MaxK is the most hits one search returns.
const MaxK = 200

// MaxBudget is the largest context, in tokens, one search assembles.
const MaxBudget = 1 << 20

// SearchResult is the ranked answer to a SearchRequest.
type SearchResult struct {
	Hits []Hit `json:"hits"`
	// Context is the assembled context when the request set a Budget:
	// each hit as "[2006-01-02 15:04] speaker: value", one per line.
	Context string `json:"context,omitempty"`
	// Tokens is the size of Context in cl100k_base tokens, counting one
	// per line break.
	Tokens int `json:"tokens,omitempty"`
	// Trace lists the steps of an agentic search, the last one its stop.
	Trace []AgentStep `json:"trace,omitempty"`
	// LLMCalls and LLMTokens are what an agentic search spent on the
	// chat model.
	LLMCalls  int `json:"llm_calls,omitempty"`
	LLMTokens int `json:"llm_tokens,omitempty"`
	// EmptyScope is set when there are no hits because the scope holds
	// no episode and no current memory at all (a wrong org, project or
	// user, or nothing added yet), as opposed to nothing matching. It is
	// judged within the scope asked about only.
	EmptyScope bool `json:"empty_scope,omitempty"`
}

// Hit is one search result.
type Hit struct {
	Memory  Memory       `json:"memory"`
	Score   float64      `json:"score"`
	Explain []ChannelHit `json:"explain,omitempty"`
	// Factors, with Explain, break the score down: "fused" (the weighted
	// reciprocal rank fusion of the channels) and each reranking factor
	// that applied, e.g. "speaker", "period", "recency" (see package
	// retrieval).
	Factors map[string]float64 `json:"factors,omitempty"`
	// Tokens is the size of the hit's line in Context when the request set
	// a Budget.
	Tokens int `json:"tokens,omitempty"`
	// Collapsed lists the ids of the memories, ranked below this hit,
	// that repeat one of its source turns (a turn's memory, a window or
	// scene over it, a fact formed from it: memories citing an episode it
	// cites), best first. They take no place of their own among the hits
	// nor a line in Context; read them by id.
	Collapsed []string `json:"collapsed,omitempty"`
}

// ChannelHit explains how one retrieval channel ranked a hit.
type ChannelHit struct {
	Channel string  `json:"channel"` // e.g. "bm25"
	Rank    int     `json:"rank"`    // 1-based
	Score   float64 `json:"score"`
}

// Former turns episodes into memory operations. Formation never writes: the
// engine applies the operations, with the episodes, in one transaction.
// What a former needs besides the batch is declared by Needs, which the
// engine reads once per formation: nothing is found by type assertion.
type Former interface {
	// Needs says what the engine gives Form and how its operations are
	// recorded. It is constant for the former's lifetime.
	Needs() FormNeeds
	// Form decides the operations for req.Episodes. It fails with the
	// errors of req.View or of the former's model, or when ctx is done;
	// on error nothing it decided is applied, and nothing is stored.
	Form(ctx context.Context, req FormRequest) ([]MemoryOp, error)
}

// FormNeeds is what a Former asks of the engine.
type FormNeeds struct {
	// Actor is the name its operations are recorded under in history and
	// the audit log, e.g. "former:llm:<model>"; empty means the caller's.
	Actor string
	// ContinueWithin, when above zero, asks for the turn stored just
	// before the batch (FormRequest.Prev), if it lies at most this long
	// before the batch's first episode, so that turns added one call at a
	// time are formed as if they had come in one batch.
	ContinueWithin time.Duration
	// ReadsScope asks for a read view of what the episodes may change
	// (FormRequest.View), to merge, update or supersede rather than add.
	ReadsScope bool
}

// FormRequest is one formation: a batch of episodes of one namespace and
// what the former's FormNeeds asked for.
type FormRequest struct {
	Episodes []Episode
	// Prev is the latest episode stored before the batch in exactly its
	// namespace, within FormNeeds.ContinueWithin; nil when there is none
	// or the former did not ask. PrevMemory is the memory formed from
	// Prev alone, nil when there is none.
	Prev       *Episode
	PrevMemory *Memory
	// View reads what the episodes may change and nothing beyond it: the
	// memories of their user and agent in every session (a change said in
	// one session ends a fact of another), or, for a namespace without a
	// user, of the namespace's own scope. The memories the operations
	// target must lie there too; what they add is stored in the
	// episodes' namespace. Its reads happen before the write transaction;
	// an operation on a memory that changed or went away in between fails
	// the write as a conflict, and nothing is stored. Nil when the former
	// did not ask (FormNeeds.ReadsScope) or the formation is within the
	// batch alone (a provisional formation): a former then reads nothing
	// stored.
	View ScopeReader
}

// ScopeReader reads one scope: the one it was made for, which a caller
// cannot widen, and the profile of that scope's user. Errors are those of
// Reader.
type ScopeReader interface {
	Scope() Scope
	GetMemory(ctx context.Context, id string) (*Memory, error)
	ListMemories(ctx context.Context, f MemoryFilter) ([]Memory, string, error)
	SearchText(ctx context.Context, query string, f MemoryFilter, limit int) ([]TextHit, error)
	// ListEpisodes lists the episodes of the scope (as Reader.ListEpisodes),
	// so that a former can show a model the turns said just before a batch.
	ListEpisodes(ctx context.Context, f EpisodeFilter) ([]Episode, string, error)
	// CurrentProfile returns the active profile memory of the scope's
	// user (see UserProfile), which lies in ProfileNamespace and so may be
	// outside the scope itself (a session's scope does not hold its
	// user's profile); nil when there is none.
	CurrentProfile(ctx context.Context) (*Memory, error)
}

// ProfileReader is the capability of a Service that reads the profile of
// a scope.
type ProfileReader interface {
	// Profile returns the profile kept for s, empty when there is none.
	// It fails with EINVALID for a bad scope and EUNAVAILABLE when the
	// store is down.
	Profile(ctx context.Context, s Scope) (*Profile, error)
}

// ScopedReader returns r narrowed to s.
func ScopedReader(r Reader, s Scope) ScopeReader { return scopedReader{r, s} }

type scopedReader struct {
	r Reader
	s Scope
}

func (sr scopedReader) Scope() Scope { return sr.s }

func (sr scopedReader) GetMemory(ctx context.Context, id string) (*Memory, error) {
	return sr.r.GetMemory(ctx, sr.s, id)
}

func (sr scopedReader) ListMemories(ctx context.Context, f MemoryFilter) ([]Memory, string, error) {
	return sr.r.ListMemories(ctx, sr.s, f)
}

func (sr scopedReader) ListEpisodes(ctx context.Context, f EpisodeFilter) ([]Episode, string, error) {
	return sr.r.ListEpisodes(ctx, sr.s, f)
}

func (sr scopedReader) SearchText(ctx context.Context, query string, f MemoryFilter, limit int) ([]TextHit, error) {
	return sr.r.SearchText(ctx, sr.s, query, f, limit)
}

func (sr scopedReader) CurrentProfile(ctx context.Context) (*Memory, error) {
	return UserProfile(ctx, sr.r, sr.s)
}

// MemoryOp is one operation a Former asks for: ADD a new memory, UPDATE or
// MERGE into the memory TargetID Memory's content (non-zero fields; a
// merge appends Memory's sources), SUPERSEDE TargetID by Memory at
// Memory.ValidFrom (default now), DELETE TargetID (soft), CONFLICT (add
// Memory, marked with TargetID as a conflict), or NOOP (nothing).
type MemoryOp struct {
	Op       Op
	TargetID string
	Memory   Memory
	Reason   string
}

type actorKey struct{}

// WithActor returns a context that attributes writes to actor in history and
// the audit log.
func WithActor(ctx context.Context, actor string) context.Context {
	return context.WithValue(ctx, actorKey{}, actor)
}

// ActorFrom returns the actor set by WithActor, or "".
func ActorFrom(ctx context.Context) string {
	a, _ := ctx.Value(actorKey{}).(string)
	return a
}

type unreadKey struct{}

// WithoutAccess returns a context whose reads (searches and gets) are not
// counted as accesses: what they find gains no recency or frequency of
// use in later rankings. For looks that are not uses: an evaluation's
// ablations, an audit, a dashboard preview.
func WithoutAccess(ctx context.Context) context.Context {
	return context.WithValue(ctx, unreadKey{}, true)
}

// AccessCounted reports whether reads under ctx count as accesses: true
// unless the context was made by WithoutAccess.
func AccessCounted(ctx context.Context) bool {
	off, _ := ctx.Value(unreadKey{}).(bool)
	return !off
}
