package mem0api

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/engramhq/engram"
)

func (h *Handler) ping(w http.ResponseWriter, r *http.Request) error {
	t := h.tenant(r)
	return writeJSON(w, http.StatusOK, map[string]any{
		"status": "ok", "message": "engram (Mem0-compatible API)",
		"org_id": t.Org, "project_id": t.Project, "user_id": orNil(boundUser(r)),
	})
}

// addRequest is the body of Mem0's add.
type addRequest struct {
	Messages json.RawMessage `json:"messages"`
	UserID   string          `json:"user_id"`
	AgentID  string          `json:"agent_id"`
	RunID    string          `json:"run_id"`
	AppID    string          `json:"app_id"`
	Metadata map[string]any  `json:"metadata"`
	Infer    *bool           `json:"infer"`
}

// message is one message of an add: Mem0 also takes a plain string.
type message struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

func (h *Handler) add(w http.ResponseWriter, r *http.Request) error {
	if err := allow(r, engram.RoleWrite, "adding memories"); err != nil {
		return err
	}
	var req addRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	if req.AppID != "" {
		return engram.Errorf(engram.EINVALID, "app_id is not supported: engram has no apps (use agent_id)")
	}
	if req.UserID == "" && req.AgentID == "" && req.RunID == "" {
		return engram.Errorf(engram.EINVALID, "add needs user_id, agent_id or run_id: whose memories these are")
	}
	msgs, err := messages(req.Messages)
	if err != nil {
		return err
	}
	s, err := h.scope(r, entity{req.UserID, req.AgentID, req.RunID}, "add")
	if err != nil {
		return err
	}
	var results []map[string]any
	var decisions map[engram.Op]int
	if req.Infer == nil || *req.Infer {
		results, decisions, err = h.addInferred(r, s.Namespace(), msgs, req.Metadata)
	} else {
		results, err = h.addVerbatim(r, s.Namespace(), msgs, req.Metadata)
	}
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, map[string]any{"results": results, "decisions": decisions})
}

// messages reads an add's messages: a list of {role, content} with text
// content, or one string (a user message). A role, when given, is one of
// engram.Roles; an error names the message at fault.
func messages(raw json.RawMessage) ([]message, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, engram.Errorf(engram.EINVALID, "messages is required")
	}
	var text string
	if json.Unmarshal(raw, &text) == nil {
		if text == "" {
			return nil, engram.Errorf(engram.EINVALID, "messages is empty")
		}
		return []message{{Role: "user", Content: raw}}, nil
	}
	var msgs []message
	if err := json.Unmarshal(raw, &msgs); err != nil {
		return nil, engram.Errorf(engram.EINVALID, "messages must be a list of {role, content} or a string")
	}
	if len(msgs) == 0 {
		return nil, engram.Errorf(engram.EINVALID, "messages is empty")
	}
	for i, m := range msgs {
		var c string
		if err := json.Unmarshal(m.Content, &c); err != nil {
			return nil, engram.Errorf(engram.EINVALID, "messages[%d].content must be text (images and documents are not supported)", i)
		}
		if c == "" {
			return nil, engram.Errorf(engram.EINVALID, "messages[%d].content is empty", i)
		}
		if err := engram.CheckRole(fmt.Sprintf("messages[%d].role", i), m.Role); err != nil {
			return nil, err
		}
	}
	return msgs, nil
}

func contentOf(m message) string {
	var c string
	_ = json.Unmarshal(m.Content, &c) // checked by messages
	return c
}

// addInferred stores the messages as episodes and forms memories from them
// in one transaction, synchronously so that the events can be returned.
func (h *Handler) addInferred(r *http.Request, ns engram.Namespace, msgs []message, md map[string]any) ([]map[string]any, map[engram.Op]int, error) {
	eps := make([]engram.EpisodeInput, len(msgs))
	for i, m := range msgs {
		eps[i] = engram.EpisodeInput{Role: m.Role, Content: contentOf(m), Metadata: maps.Clone(md)}
	}
	yes, no := true, false
	res, err := h.svc.AddEpisodes(r.Context(), engram.AddEpisodesRequest{Namespace: ns, Episodes: eps, Form: &yes, Async: &no})
	if err != nil {
		return nil, nil, asMessages(err)
	}
	out := make([]map[string]any, len(res.Memories))
	for i := range res.Memories {
		out[i] = addResult(&res.Memories[i], eventOf(&res.Memories[i]))
	}
	return out, res.Decisions, nil
}

// addVerbatim stores each message as one memory, without formation.
func (h *Handler) addVerbatim(r *http.Request, ns engram.Namespace, msgs []message, md map[string]any) ([]map[string]any, error) {
	mems := make([]engram.Memory, len(msgs))
	for i, m := range msgs {
		mems[i] = engram.Memory{Kind: engram.KindEpisodic, Value: contentOf(m), Metadata: maps.Clone(md)}
	}
	stored, err := h.svc.AddMemories(r.Context(), engram.AddMemoriesRequest{Namespace: ns, Memories: mems})
	if err != nil {
		return nil, asMessages(err)
	}
	out := make([]map[string]any, len(stored))
	for i := range stored {
		out[i] = addResult(&stored[i], eventAdd)
	}
	return out, nil
}

// asMessages renames engram's batch fields in an error into Mem0's.
func asMessages(err error) error {
	msg := engram.ErrorMessage(err)
	for _, p := range []string{"episodes[", "memories["} {
		if len(msg) > len(p) && msg[:len(p)] == p {
			msg = "messages[" + msg[len(p):]
		}
	}
	return engram.Errorf(engram.ErrorCode(err), "%s", msg)
}

func (h *Handler) get(w http.ResponseWriter, r *http.Request) error {
	s, err := h.locate(r, r.PathValue("id"))
	if err != nil {
		return err
	}
	m, err := h.svc.GetMemory(r.Context(), s, r.PathValue("id"))
	if err != nil {
		return err
	}
	if m.Status == engram.StatusDeleted {
		// Mem0 forgets a deleted memory; engram keeps it restorable and
		// its history readable, but a get answers as Mem0 would.
		return engram.Errorf(engram.ENOTFOUND, "memory %s was deleted", m.ID)
	}
	return writeJSON(w, http.StatusOK, memoryJSON(m))
}

// updateRequest is the body of Mem0's update.
type updateRequest struct {
	Text           *string        `json:"text"`
	Metadata       map[string]any `json:"metadata"`
	ExpirationDate *string        `json:"expiration_date"`
	Timestamp      any            `json:"timestamp"`
}

func (h *Handler) update(w http.ResponseWriter, r *http.Request) error {
	if err := allow(r, engram.RoleWrite, "updating a memory"); err != nil {
		return err
	}
	var req updateRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	p, err := patchOf(req)
	if err != nil {
		return err
	}
	s, err := h.locate(r, r.PathValue("id"))
	if err != nil {
		return err
	}
	m, err := h.svc.UpdateMemory(r.Context(), s, r.PathValue("id"), p)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, memoryJSON(m))
}

// patchOf turns an update into a patch. New text replaces the value and
// the abstraction (cut to its limit); the engine derives the cues and the
// fact's metadata from it again (see engine.UpdateMemory).
func patchOf(req updateRequest) (engram.MemoryPatch, error) {
	p := engram.MemoryPatch{Metadata: req.Metadata, Reason: "updated through the Mem0-compatible API"}
	switch {
	case req.Timestamp != nil:
		return p, engram.Errorf(engram.EINVALID, "timestamp is not supported in an update")
	case req.Text == nil && req.Metadata == nil && req.ExpirationDate == nil:
		return p, engram.Errorf(engram.EINVALID, "an update needs text, metadata or expiration_date")
	case req.Text != nil && *req.Text == "":
		return p, engram.Errorf(engram.EINVALID, "text is empty")
	}
	if req.Text != nil {
		abs := cut(*req.Text, engram.MaxShortBytes)
		p.Value, p.Abstraction = req.Text, &abs
	}
	if req.ExpirationDate != nil {
		t, err := parseTime("expiration_date", *req.ExpirationDate)
		if err != nil {
			return p, err
		}
		p.ExpiresAt = &t
	}
	return p, nil
}

// cut returns s cut to at most n bytes on a rune boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func (h *Handler) deleteOne(w http.ResponseWriter, r *http.Request) error {
	if err := allow(r, engram.RoleWrite, "deleting a memory"); err != nil {
		return err
	}
	s, err := h.locate(r, r.PathValue("id"))
	if err != nil {
		return err
	}
	err = h.svc.DeleteMemory(r.Context(), s, r.PathValue("id"), engram.DeleteOptions{Reason: "deleted through the Mem0-compatible API"})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, map[string]any{"message": "Memory deleted successfully!"})
}

func (h *Handler) history(w http.ResponseWriter, r *http.Request) error {
	s, err := h.locate(r, r.PathValue("id"))
	if err != nil {
		return err
	}
	vs, err := h.svc.History(r.Context(), s, r.PathValue("id"))
	if err != nil {
		return err
	}
	out := make([]map[string]any, len(vs))
	for i, v := range vs {
		out[i] = historyJSON(v)
	}
	return writeJSON(w, http.StatusOK, out)
}

// listRequest is the body of Mem0's get all (v2 and v3).
type listRequest struct {
	Filters map[string]any `json:"filters"`
}

// maxListed is the most memories a get all reads to count and page them.
const maxListed = 10_000

func (h *Handler) list(w http.ResponseWriter, r *http.Request) error {
	var req listRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	f, err := parseFilters(req.Filters)
	if err != nil {
		return err
	}
	return h.page(w, r, f, "filters")
}

// listQuery is Mem0's v1 get all, with the entity in the query.
func (h *Handler) listQuery(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	if q.Get("app_id") != "" {
		return engram.Errorf(engram.EINVALID, "app_id is not supported: engram has no apps (use agent_id)")
	}
	return h.page(w, r, filters{entities: []entity{{q.Get("user_id"), q.Get("agent_id"), q.Get("run_id")}}}, "the query")
}

// page answers a get all: the memories of every entity of f, newest
// first, one page of them (page from 1, page_size up to 1000, default 100)
// with the total count. field names where the entities came from, for
// errors.
func (h *Handler) page(w http.ResponseWriter, r *http.Request, f filters, field string) error {
	pageNo, size, err := pageParams(r)
	if err != nil {
		return err
	}
	var all []engram.Memory
	for _, e := range f.entities {
		s, err := h.scope(r, e, field)
		if err != nil {
			return err
		}
		if all, err = h.listScope(r, s, f.memory, all); err != nil {
			return err
		}
	}
	slices.SortStableFunc(all, func(a, b engram.Memory) int { return b.CreatedAt.Compare(a.CreatedAt) })
	from := min((pageNo-1)*size, len(all))
	to := min(from+size, len(all))
	results := make([]map[string]any, 0, to-from)
	for i := from; i < to; i++ {
		results = append(results, memoryJSON(&all[i]))
	}
	var next, prev any
	if to < len(all) {
		next = pageURL(r, pageNo+1, size)
	}
	if pageNo > 1 {
		prev = pageURL(r, pageNo-1, size)
	}
	return writeJSON(w, http.StatusOK, map[string]any{"count": len(all), "next": next, "previous": prev, "results": results})
}

// listScope appends the active memories of s that mf keeps to all, up to
// maxListed in all.
func (h *Handler) listScope(r *http.Request, s engram.Scope, mf engram.MemoryFilter, all []engram.Memory) ([]engram.Memory, error) {
	mf.Limit = engram.MaxLimit
	for len(all) < maxListed {
		pg, err := h.svc.ListMemories(r.Context(), s, mf)
		if err != nil {
			return nil, err
		}
		all = append(all, pg.Memories...)
		if pg.Next == "" {
			break
		}
		mf.Cursor = pg.Next
	}
	return all[:min(len(all), maxListed)], nil
}

func pageParams(r *http.Request) (pageNo, size int, err error) {
	pageNo, size = 1, 100
	for _, p := range []struct {
		name     string
		dst      *int
		min, max int
	}{{"page", &pageNo, 1, maxListed}, {"page_size", &size, 1, engram.MaxLimit}} {
		v := r.URL.Query().Get(p.name)
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < p.min || n > p.max {
			return 0, 0, engram.Errorf(engram.EINVALID, "%s %q is not a number from %d to %d", p.name, v, p.min, p.max)
		}
		*p.dst = n
	}
	return pageNo, size, nil
}

func pageURL(r *http.Request, pageNo, size int) string {
	return fmt.Sprintf("%s?page=%d&page_size=%d", r.URL.Path, pageNo, size)
}

// searchRequest is the body of Mem0's search.
type searchRequest struct {
	Query    string         `json:"query"`
	Filters  map[string]any `json:"filters"`
	TopK     *int           `json:"top_k"`
	Metadata map[string]any `json:"metadata"`
	// v1 names the entity at the top level.
	UserID  string `json:"user_id"`
	AgentID string `json:"agent_id"`
	RunID   string `json:"run_id"`
}

func (h *Handler) search(w http.ResponseWriter, r *http.Request) error {
	var req searchRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	if req.Query == "" {
		return engram.Errorf(engram.EINVALID, "query is required")
	}
	k := 10
	if req.TopK != nil {
		if k = *req.TopK; k < 1 || k > engram.MaxK {
			return engram.Errorf(engram.EINVALID, "top_k %d is not from 1 to %d", k, engram.MaxK)
		}
	}
	f, err := searchFilters(req)
	if err != nil {
		return err
	}
	var hits []engram.Hit
	for _, e := range f.entities {
		s, err := h.scope(r, e, "filters")
		if err != nil {
			return err
		}
		res, err := h.svc.Search(r.Context(), engram.SearchRequest{Scope: s, Query: req.Query, K: k, Filter: f.memory})
		if err != nil {
			return err
		}
		hits = append(hits, res.Hits...)
	}
	slices.SortStableFunc(hits, func(a, b engram.Hit) int { return cmp.Compare(b.Score, a.Score) })
	results := make([]map[string]any, 0, min(k, len(hits)))
	for i := 0; i < len(hits) && i < k; i++ {
		m := memoryJSON(&hits[i].Memory)
		m["score"] = hits[i].Score
		results = append(results, m)
	}
	return writeJSON(w, http.StatusOK, map[string]any{"results": results})
}

// searchFilters reads a search's filters and adds its top-level entity
// (v1) and metadata to them.
func searchFilters(req searchRequest) (filters, error) {
	f, err := parseFilters(req.Filters)
	if err != nil {
		return f, err
	}
	for i := range f.entities {
		e := &f.entities[i]
		for _, c := range []struct {
			field, v string
			dst      *string
		}{{"user_id", req.UserID, &e.user}, {"agent_id", req.AgentID, &e.agent}, {"run_id", req.RunID, &e.run}} {
			if c.v == "" {
				continue
			}
			if err := setName(c.field, c.v, c.dst); err != nil {
				return f, err
			}
		}
	}
	if len(req.Metadata) > 0 && f.memory.Metadata == nil {
		f.memory.Metadata = map[string]any{}
	}
	maps.Copy(f.memory.Metadata, req.Metadata)
	return f, nil
}
