package mcp

import (
	"context"
	"fmt"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/engramhq/engram"
)

// DefaultBudget is the context, in tokens, recall assembles when the call
// names no budget.
const DefaultBudget = 1000

// addTool adds a tool whose handler fn gets the caller's context (writes
// attributed to its actor) and whose errors become tool errors. A write
// tool first refuses a key without the role write.
func addTool[In any](s *sdk.Server, c *caller, t *sdk.Tool, write bool, fn func(ctx context.Context, in In) (any, error)) {
	if t.Annotations == nil {
		t.Annotations = &sdk.ToolAnnotations{ReadOnlyHint: !write}
	}
	sdk.AddTool(s, t, func(ctx context.Context, _ *sdk.CallToolRequest, in In) (*sdk.CallToolResult, any, error) {
		if write {
			if err := c.writable(t.Name); err != nil {
				return nil, nil, c.toolError(ctx, t.Name, err)
			}
		}
		out, err := fn(c.context(ctx), in)
		if err != nil {
			return nil, nil, c.toolError(ctx, t.Name, err)
		}
		return nil, out, nil
	})
}

func (c *caller) addTools(s *sdk.Server) {
	no := false
	addTool(s, c, &sdk.Tool{Name: "remember", Description: "Store what should be remembered: either the turns of a conversation " +
		"(stored verbatim as episodes; engram forms memories from them) or one fact, stored as a memory as it is. Returns the ids stored.",
		Annotations: &sdk.ToolAnnotations{DestructiveHint: &no}}, true, c.remember)
	addTool(s, c, &sdk.Tool{Name: "recall", Description: "Find what is remembered that answers a question or topic, in any language. " +
		"Returns a context (one line per memory, best first, within a token budget) and the memories in it with their ids and scores."}, false, c.recall)
	addTool(s, c, &sdk.Tool{Name: "get", Description: "Read one memory by its id, with its status, validity, sources and version."}, false, c.get)
	addTool(s, c, &sdk.Tool{Name: "list", Description: "List memories, newest first, optionally only some kinds or statuses or those containing a text. " +
		"Pass the returned next cursor to read the next page."}, false, c.list)
	addTool(s, c, &sdk.Tool{Name: "update", Description: "Change fields of an active memory in place (its value, abstraction, cues, kind, confidence or importance); " +
		"the old state is kept in its history.", Annotations: &sdk.ToolAnnotations{DestructiveHint: &no}}, true, c.update)
	addTool(s, c, &sdk.Tool{Name: "forget", Description: "Forget a memory: soft (restorable, kept in history) by default, " +
		"or hard to purge it with its whole history."}, true, c.forget)
	addTool(s, c, &sdk.Tool{Name: "history", Description: "The versions of a memory, oldest first: every add, update, supersede, delete and restore with the old and new state, who did it and why."}, false, c.history)
}

// Turn is one message of a conversation to remember.
type Turn struct {
	Role       string     `json:"role" jsonschema:"who said it: user, assistant, system, tool or event"`
	Content    string     `json:"content" jsonschema:"what was said, verbatim"`
	Speaker    string     `json:"speaker,omitempty" jsonschema:"the speaker's name, e.g. Alice"`
	OccurredAt *time.Time `json:"occurred_at,omitempty" jsonschema:"when it was said (RFC 3339); default now"`
}

// RememberInput is the input of remember: turns or a fact, not both.
type RememberInput struct {
	ScopeArgs
	Turns []Turn `json:"turns,omitempty" jsonschema:"one or more turns of a conversation, in order; give turns or fact"`
	Fact  string `json:"fact,omitempty" jsonschema:"one fact to remember as it is, e.g. 'Alice is vegetarian'; give turns or fact"`
	Kind  string `json:"kind,omitempty" jsonschema:"kind of the fact: semantic (the default), core, episodic, procedural or resource"`
}

// RememberOutput lists what remember stored.
type RememberOutput struct {
	Episodes []string       `json:"episodes,omitempty"`
	Memories []MemoryRef    `json:"memories"`
	Job      string         `json:"job,omitempty"`
	Decision map[string]int `json:"decisions,omitempty"`
}

// MemoryRef is a memory's id with what it says.
type MemoryRef struct {
	ID    string `json:"id"`
	Kind  string `json:"kind"`
	Value string `json:"value"`
}

func (c *caller) remember(ctx context.Context, in RememberInput) (any, error) {
	sc, err := c.scope(in.ScopeArgs)
	if err != nil {
		return nil, err
	}
	ns := sc.Namespace()
	switch {
	case len(in.Turns) > 0 && in.Fact != "":
		return nil, invalid("give either turns or fact, not both")
	case len(in.Turns) > 0:
		return c.rememberTurns(ctx, ns, in)
	case in.Fact != "":
		return c.rememberFact(ctx, ns, in)
	}
	return nil, invalid("remember needs turns (a non-empty list) or fact")
}

// rememberTurns checks every turn, then stores them in one call.
func (c *caller) rememberTurns(ctx context.Context, ns engram.Namespace, in RememberInput) (any, error) {
	if in.Kind != "" {
		return nil, invalid("kind applies to a fact, not to turns (engram forms the memories of turns)")
	}
	if len(in.Turns) > engram.MaxBatch {
		return nil, invalid("turns has %d entries, more than the limit of %d", len(in.Turns), engram.MaxBatch)
	}
	eps := make([]engram.EpisodeInput, len(in.Turns))
	for i, t := range in.Turns {
		if err := checkTurn(i, t); err != nil {
			return nil, err
		}
		ep := engram.Episode{Namespace: ns, Role: t.Role, Speaker: t.Speaker, Content: t.Content}
		if t.OccurredAt != nil {
			ep.OccurredAt = *t.OccurredAt
		}
		if err := ep.Validate(); err != nil {
			return nil, invalid("turns[%d]: %s", i, strings.TrimPrefix(engram.ErrorMessage(err), "episode: "))
		}
		eps[i] = engram.EpisodeInput{Role: t.Role, Speaker: t.Speaker, Content: t.Content, OccurredAt: t.OccurredAt}
	}
	res, err := c.svc.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: ns, Episodes: eps})
	if err != nil {
		return nil, err
	}
	out := RememberOutput{Memories: []MemoryRef{}}
	for _, e := range res.Episodes {
		out.Episodes = append(out.Episodes, e.ID)
	}
	for i := range res.Memories {
		out.Memories = append(out.Memories, ref(&res.Memories[i]))
	}
	if res.Job != nil {
		out.Job = res.Job.ID
	}
	for op, n := range res.Decisions {
		if out.Decision == nil {
			out.Decision = map[string]int{}
		}
		out.Decision[string(op)] = n
	}
	return out, nil
}

// checkTurn names the field of turn i that is missing or not allowed.
func checkTurn(i int, t Turn) error {
	if strings.TrimSpace(t.Content) == "" {
		return invalid("turns[%d].content is required", i)
	}
	if t.Role == "" {
		return invalid("turns[%d].role is required: one of %s", i, strings.Join(engram.Roles, ", "))
	}
	return engram.CheckRole(fmt.Sprintf("turns[%d].role", i), t.Role)
}

func (c *caller) rememberFact(ctx context.Context, ns engram.Namespace, in RememberInput) (any, error) {
	kind := engram.Kind(in.Kind)
	switch {
	case kind == "":
		kind = engram.KindSemantic
	case kind == engram.KindVault:
		return nil, invalid("kind vault is not available over MCP; use the vault API")
	case !kind.Valid():
		return nil, invalid("kind %q is not one of semantic, core, episodic, procedural, resource", in.Kind)
	}
	ms, err := c.svc.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: ns, Memories: []engram.Memory{{Kind: kind, Value: in.Fact}}})
	if err != nil {
		return nil, err
	}
	out := RememberOutput{Memories: []MemoryRef{}}
	for i := range ms {
		out.Memories = append(out.Memories, ref(&ms[i]))
	}
	return out, nil
}

func ref(m *engram.Memory) MemoryRef {
	return MemoryRef{ID: m.ID, Kind: string(m.Kind), Value: m.Value}
}

// RecallInput is the input of recall.
type RecallInput struct {
	ScopeArgs
	Query  string     `json:"query" jsonschema:"the question or topic, in any language, e.g. 'where does Alice live?'"`
	K      int        `json:"k,omitempty" jsonschema:"most memories to return, 1 to 200; default: as many as fit the budget"`
	Budget int        `json:"budget,omitempty" jsonschema:"most tokens (cl100k_base) of context to assemble; default 1000"`
	Now    *time.Time `json:"now,omitempty" jsonschema:"when the question is asked (RFC 3339), for 'last week' and recency; default now"`
	Mode   string     `json:"mode,omitempty" jsonschema:"oneshot (default): one search; agentic: search in steps that refine the query, expand from the best hits and stop when a step adds little, returning the trace"`
	Steps  int        `json:"steps,omitempty" jsonschema:"agentic only: most steps after the first search, 1 to 8; 0 or absent: 3"`
	// ValidAt reads as of an event time: what was valid then, facts
	// superseded since included, what was said later left out.
	ValidAt *time.Time `json:"valid_at,omitempty" jsonschema:"recall as of this event time (RFC 3339): what was true then, facts replaced since included, later ones left out; default now"`
}

// RecallOutput is the assembled context and the memories in it.
type RecallOutput struct {
	// Context has one line per memory, in the order of Hits (after the
	// profile's line when there is one).
	Context string `json:"context"`
	Tokens  int    `json:"tokens"`
	Hits    []Hit  `json:"hits"`
	// Trace is an agentic recall's steps, the last its stop.
	Trace []engram.AgentStep `json:"trace,omitempty"`
	// EmptyScope says that nothing was recalled because the scope holds
	// nothing at all (see engram.SearchResult.EmptyScope).
	EmptyScope bool `json:"empty_scope,omitempty" jsonschema:"true when the scope holds no memory at all: a wrong org, project or user, or nothing remembered yet"`
}

// Hit is one recalled memory: cite it by its id.
type Hit struct {
	ID        string     `json:"id"`
	Kind      string     `json:"kind"`
	Value     string     `json:"value"`
	Score     float64    `json:"score"`
	ValidFrom *time.Time `json:"valid_from,omitempty"`
}

func (c *caller) recall(ctx context.Context, in RecallInput) (any, error) {
	sc, err := c.scope(in.ScopeArgs)
	if err != nil {
		return nil, err
	}
	switch {
	case strings.TrimSpace(in.Query) == "":
		return nil, invalid("query is required")
	case in.K < 0 || in.K > engram.MaxK:
		return nil, invalid("k %d is outside 1..%d", in.K, engram.MaxK)
	case in.Budget < 0 || in.Budget > engram.MaxBudget:
		return nil, invalid("budget %d is outside 1..%d tokens", in.Budget, engram.MaxBudget)
	case in.Mode != "" && in.Mode != engram.ModeOneShot && in.Mode != engram.ModeAgentic:
		return nil, invalid("mode %q is not one of %s, %s", in.Mode, engram.ModeOneShot, engram.ModeAgentic)
	case in.Steps < 0 || in.Steps > engram.MaxSteps:
		return nil, invalid("steps %d is outside 1..%d (0 or absent: the default)", in.Steps, engram.MaxSteps)
	case in.Steps != 0 && in.Mode != engram.ModeAgentic:
		return nil, invalid("steps is for mode agentic only")
	}
	budget := in.Budget
	if budget == 0 {
		budget = DefaultBudget
	}
	res, err := c.svc.Search(ctx, engram.SearchRequest{Scope: sc, Query: in.Query, K: in.K, Budget: budget, Now: in.Now, Mode: in.Mode, Steps: in.Steps,
		Filter: engram.MemoryFilter{ValidAt: in.ValidAt}})
	if err != nil {
		return nil, err
	}
	out := RecallOutput{Context: res.Context, Tokens: res.Tokens, Hits: make([]Hit, len(res.Hits)), Trace: res.Trace, EmptyScope: res.EmptyScope}
	for i, h := range res.Hits {
		out.Hits[i] = Hit{ID: h.Memory.ID, Kind: string(h.Memory.Kind), Value: h.Memory.Value, Score: h.Score, ValidFrom: h.Memory.ValidFrom}
	}
	return out, nil
}

// IDInput names one memory.
type IDInput struct {
	ScopeArgs
	ID string `json:"id" jsonschema:"the memory's id"`
}

func (c *caller) target(a ScopeArgs, id string) (engram.Scope, error) {
	sc, err := c.scope(a)
	if err != nil {
		return sc, err
	}
	if strings.TrimSpace(id) == "" {
		return sc, invalid("id is required")
	}
	return sc, nil
}

func (c *caller) get(ctx context.Context, in IDInput) (any, error) {
	sc, err := c.target(in.ScopeArgs, in.ID)
	if err != nil {
		return nil, err
	}
	return c.svc.GetMemory(ctx, sc, in.ID)
}

func (c *caller) history(ctx context.Context, in IDInput) (any, error) {
	sc, err := c.target(in.ScopeArgs, in.ID)
	if err != nil {
		return nil, err
	}
	vs, err := c.svc.History(ctx, sc, in.ID)
	if err != nil {
		return nil, err
	}
	if vs == nil {
		vs = []engram.Version{}
	}
	return map[string]any{"versions": vs}, nil
}

// ListInput is the input of list.
type ListInput struct {
	ScopeArgs
	Kinds    []string   `json:"kinds,omitempty" jsonschema:"only memories of these kinds: core, episodic, semantic, procedural, resource"`
	Statuses []string   `json:"statuses,omitempty" jsonschema:"only memories in these statuses: active (the default), superseded, deleted, expired"`
	Contains string     `json:"contains,omitempty" jsonschema:"only memories whose value, abstraction or a cue contains this text"`
	Limit    int        `json:"limit,omitempty" jsonschema:"most memories in the page; default 50"`
	Cursor   string     `json:"cursor,omitempty" jsonschema:"the next cursor of the previous page"`
	ValidAt  *time.Time `json:"valid_at,omitempty" jsonschema:"list as of this event time (RFC 3339): what was valid then, superseded memories included unless statuses are given"`
}

func (c *caller) list(ctx context.Context, in ListInput) (any, error) {
	sc, err := c.scope(in.ScopeArgs)
	if err != nil {
		return nil, err
	}
	f := engram.MemoryFilter{Contains: in.Contains, Limit: in.Limit, Cursor: in.Cursor, ValidAt: in.ValidAt}
	for i, k := range in.Kinds {
		if !engram.Kind(k).Valid() {
			return nil, invalid("kinds[%d] %q is not one of core, episodic, semantic, procedural, resource, vault", i, k)
		}
		f.Kinds = append(f.Kinds, engram.Kind(k))
	}
	for i, s := range in.Statuses {
		if !engram.Status(s).Valid() {
			return nil, invalid("statuses[%d] %q is not one of active, superseded, deleted, expired", i, s)
		}
		f.Statuses = append(f.Statuses, engram.Status(s))
	}
	if in.Limit < 0 {
		return nil, invalid("limit %d is negative", in.Limit)
	}
	page, err := c.svc.ListMemories(ctx, sc, f)
	if err != nil {
		return nil, err
	}
	if page.Memories == nil {
		page.Memories = []engram.Memory{}
	}
	return page, nil
}

// UpdateInput is the input of update: the fields given change, the others
// stay.
type UpdateInput struct {
	ScopeArgs
	ID          string   `json:"id" jsonschema:"the memory's id"`
	Value       *string  `json:"value,omitempty" jsonschema:"the new value, the full text of the memory"`
	Abstraction *string  `json:"abstraction,omitempty" jsonschema:"the new short summary"`
	Cues        []string `json:"cues,omitempty" jsonschema:"the new cues (names, places, key phrases), replacing the old"`
	Kind        *string  `json:"kind,omitempty" jsonschema:"the new kind: core, episodic, semantic, procedural or resource"`
	Confidence  *float64 `json:"confidence,omitempty" jsonschema:"the new confidence, 0 to 1"`
	Importance  *float64 `json:"importance,omitempty" jsonschema:"the new importance, 0 to 1"`
	Reason      string   `json:"reason,omitempty" jsonschema:"why, kept in the memory's history"`
}

func (c *caller) update(ctx context.Context, in UpdateInput) (any, error) {
	sc, err := c.target(in.ScopeArgs, in.ID)
	if err != nil {
		return nil, err
	}
	p := engram.MemoryPatch{Value: in.Value, Abstraction: in.Abstraction, Confidence: in.Confidence, Importance: in.Importance, Reason: in.Reason}
	if in.Cues != nil {
		p.Cues = &in.Cues
	}
	if in.Kind != nil {
		k := engram.Kind(*in.Kind)
		if !k.Valid() || k == engram.KindVault {
			return nil, invalid("kind %q is not one of core, episodic, semantic, procedural, resource", *in.Kind)
		}
		p.Kind = &k
	}
	if p.Value == nil && p.Abstraction == nil && p.Cues == nil && p.Kind == nil && p.Confidence == nil && p.Importance == nil {
		return nil, invalid("update needs at least one of value, abstraction, cues, kind, confidence, importance")
	}
	if p.Value != nil && strings.TrimSpace(*p.Value) == "" {
		return nil, invalid("value is empty; to remove a memory, call forget")
	}
	return c.svc.UpdateMemory(ctx, sc, in.ID, p)
}

// ForgetInput is the input of forget.
type ForgetInput struct {
	ScopeArgs
	ID     string `json:"id" jsonschema:"the memory's id"`
	Hard   bool   `json:"hard,omitempty" jsonschema:"purge the memory with its history; default false: a soft delete that can be restored"`
	Reason string `json:"reason,omitempty" jsonschema:"why, kept in the memory's history"`
}

func (c *caller) forget(ctx context.Context, in ForgetInput) (any, error) {
	sc, err := c.target(in.ScopeArgs, in.ID)
	if err != nil {
		return nil, err
	}
	if err := c.svc.DeleteMemory(ctx, sc, in.ID, engram.DeleteOptions{Hard: in.Hard, Reason: in.Reason}); err != nil {
		return nil, err
	}
	how := "soft"
	if in.Hard {
		how = "hard"
	}
	return map[string]string{"id": in.ID, "forgotten": how}, nil
}
