package mem0api

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/engramhq/engram"
	engramhttp "github.com/engramhq/engram/http"
)

// entity is a Mem0 entity triple: user_id, agent_id and run_id, engram's
// user, agent and session.
type entity struct{ user, agent, run string }

// scope turns e into a scope of the request's tenant, checked against the
// key's binding. A key bound to a user fills an empty user_id with its
// user; otherwise at least one of the three is required (field names what
// the caller sends them in, for the error).
func (h *Handler) scope(r *http.Request, e entity, field string) (engram.Scope, error) {
	if e.user == "" {
		e.user = boundUser(r)
	}
	if e == (entity{}) {
		return engram.Scope{}, engram.Errorf(engram.EINVALID, "%s must name user_id, agent_id or run_id", field)
	}
	t := h.tenant(r)
	s := engram.Scope{Org: t.Org, Project: t.Project, User: e.user, Agent: e.agent, Session: e.run}.Normalize()
	if err := s.Validate(); err != nil {
		return s, renamed(err)
	}
	if err := engramhttp.CheckBinding(engramhttp.KeyFrom(r.Context()), s.Namespace()); err != nil {
		return s, renamed(err)
	}
	return s, nil
}

// renamed rewrites engram's namespace field names in err's message into
// Mem0's.
func renamed(err error) error {
	msg := strings.NewReplacer("namespace.user", "user_id", "namespace.agent", "agent_id", "namespace.session", "run_id").
		Replace(engram.ErrorMessage(err))
	return engram.Errorf(engram.ErrorCode(err), "%s", msg)
}

// locate returns the scope that holds the memory id. Memory ids are unique
// per user, so a key bound to a user looks among that user's memories
// only: another user's memory with the id is not found, exactly like one
// that does not exist, and the key's own is found even when others hold
// the id too. The query's user_id names the user instead (an id several
// users hold is ECONFLICT for a key bound to no user without it); a key
// bound to another user then finds nothing.
func (h *Handler) locate(r *http.Request, id string) (engram.Scope, error) {
	tenant := h.tenant(r)
	tenant.User = r.URL.Query().Get("user_id")
	if tenant.User == "" {
		tenant.User = boundUser(r)
	}
	ns, err := h.svc.LocateMemory(r.Context(), tenant.Normalize(), id)
	if err != nil {
		return engram.Scope{}, renamed(err)
	}
	if engramhttp.CheckBinding(engramhttp.KeyFrom(r.Context()), ns) != nil {
		return engram.Scope{}, engram.Errorf(engram.ENOTFOUND, "memory %s not found", id)
	}
	return engram.ScopeOf(ns), nil
}

// filters is what a Mem0 filters object says: the entities whose memories
// it asks for (several with OR), and conditions on the memories.
type filters struct {
	entities []entity
	memory   engram.MemoryFilter
}

// parseFilters reads Mem0's filters: user_id, agent_id, run_id,
// created_at ({gte, gt, lte, lt}), metadata (equality), AND and a top-level
// OR of entity conditions. Anything else is an EINVALID error naming it.
func parseFilters(raw map[string]any) (filters, error) {
	var f filters
	var base entity
	var ors []any
	for _, k := range sortedKeys(raw) {
		if k == "OR" {
			l, ok := raw[k].([]any)
			if !ok || len(l) == 0 {
				return f, engram.Errorf(engram.EINVALID, "filters.OR must be a non-empty list of conditions")
			}
			ors = l
			continue
		}
		if err := condition("filters", k, raw[k], &base, &f.memory); err != nil {
			return f, err
		}
	}
	if ors == nil {
		f.entities = []entity{base}
		return f, nil
	}
	for i, o := range ors {
		path := fmt.Sprintf("filters.OR[%d]", i)
		m, ok := o.(map[string]any)
		if !ok {
			return f, engram.Errorf(engram.EINVALID, "%s must be an object", path)
		}
		e := base
		for _, k := range sortedKeys(m) {
			if err := condition(path, k, m[k], &e, nil); err != nil {
				return f, err
			}
		}
		f.entities = append(f.entities, e)
	}
	return f, nil
}

// condition applies one key of a filters object at path; mf is nil inside
// an OR, where only entity conditions are allowed.
func condition(path, k string, v any, e *entity, mf *engram.MemoryFilter) error {
	field := path + "." + k
	switch k {
	case "AND":
		l, ok := v.([]any)
		if !ok {
			return engram.Errorf(engram.EINVALID, "%s must be a list of conditions", field)
		}
		for i, c := range l {
			m, ok := c.(map[string]any)
			if !ok {
				return engram.Errorf(engram.EINVALID, "%s[%d] must be an object", field, i)
			}
			for _, kk := range sortedKeys(m) {
				if err := condition(fmt.Sprintf("%s[%d]", field, i), kk, m[kk], e, mf); err != nil {
					return err
				}
			}
		}
		return nil
	case "user_id":
		return setName(field, v, &e.user)
	case "agent_id":
		return setName(field, v, &e.agent)
	case "run_id":
		return setName(field, v, &e.run)
	case "app_id":
		return engram.Errorf(engram.EINVALID, "%s is not supported: engram has no apps (use agent_id)", field)
	}
	if mf == nil {
		return engram.Errorf(engram.EINVALID, "%s is not supported: an OR may hold only user_id, agent_id and run_id", field)
	}
	switch k {
	case "created_at":
		return createdIn(field, v, mf)
	case "valid_at":
		// engram's own: read as of an event time.
		t, err := parseTime(field, v)
		if err != nil {
			return err
		}
		mf.ValidAt = &t
		return nil
	case "metadata":
		m, ok := v.(map[string]any)
		if !ok {
			return engram.Errorf(engram.EINVALID, "%s must be an object of values to match", field)
		}
		if mf.Metadata == nil {
			mf.Metadata = map[string]any{}
		}
		for mk, mv := range m {
			mf.Metadata[mk] = mv
		}
		return nil
	}
	return engram.Errorf(engram.EINVALID, "%s is not supported (filters take user_id, agent_id, run_id, created_at, valid_at, metadata, AND, OR)", field)
}

// setName sets *dst to the name v, refusing a second, different one.
func setName(field string, v any, dst *string) error {
	s, ok := v.(string)
	switch {
	case !ok:
		return engram.Errorf(engram.EINVALID, "%s must be a string", field)
	case s == "" || s == "*":
		return engram.Errorf(engram.EINVALID, "%s must name one %s (no wildcard)", field, strings.TrimSuffix(field[strings.LastIndex(field, ".")+1:], "_id"))
	case *dst != "" && *dst != s:
		return engram.Errorf(engram.EINVALID, "%s %q contradicts %q given before", field, s, *dst)
	}
	*dst = s
	return nil
}

// createdIn reads {gte, gt, lte, lt} of ISO times into the filter's
// created_at range.
func createdIn(field string, v any, mf *engram.MemoryFilter) error {
	m, ok := v.(map[string]any)
	if !ok {
		return engram.Errorf(engram.EINVALID, "%s must be an object of gte, gt, lte, lt", field)
	}
	for _, op := range sortedKeys(m) {
		t, err := parseTime(field+"."+op, m[op])
		if err != nil {
			return err
		}
		switch op {
		case "gte":
			mf.CreatedAfter = &t
		case "gt":
			t = t.Add(time.Nanosecond)
			mf.CreatedAfter = &t
		case "lt":
			mf.CreatedBefore = &t
		case "lte":
			t = t.Add(time.Nanosecond)
			mf.CreatedBefore = &t
		default:
			return engram.Errorf(engram.EINVALID, "%s.%s is not supported (gte, gt, lte, lt)", field, op)
		}
	}
	return nil
}

// parseTime reads an ISO date or date-time.
func parseTime(field string, v any) (time.Time, error) {
	s, _ := v.(string)
	for _, layout := range []string{time.RFC3339Nano, time.DateOnly, "2006-01-02T15:04:05"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, engram.Errorf(engram.EINVALID, "%s %v is not an ISO date (2006-01-02) or date-time (2006-01-02T15:04:05Z)", field, v)
}

func sortedKeys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
