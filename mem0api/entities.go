package mem0api

import (
	"cmp"
	"net/http"
	"slices"

	"github.com/engramhq/engram"
	engramhttp "github.com/engramhq/engram/http"
)

// deleteAll purges the scope the query names (user_id, agent_id, run_id):
// its memories, episodes and history. It needs an admin key, as engram's
// own purge does.
func (h *Handler) deleteAll(w http.ResponseWriter, r *http.Request) error {
	if err := allow(r, engram.RoleAdmin, "deleting all memories of a user, agent or run (a purge)"); err != nil {
		return err
	}
	q := r.URL.Query()
	if q.Get("app_id") != "" {
		return engram.Errorf(engram.EINVALID, "app_id is not supported: engram has no apps (use agent_id)")
	}
	e := entity{q.Get("user_id"), q.Get("agent_id"), q.Get("run_id")}
	if e == (entity{}) {
		return engram.Errorf(engram.EINVALID, "delete all needs user_id, agent_id or run_id in the query: engram never deletes a whole project this way")
	}
	s, err := h.scope(r, e, "delete all")
	if err != nil {
		return err
	}
	n, err := h.svc.DeleteScope(r.Context(), s)
	if err != nil {
		return renamed(err)
	}
	return writeJSON(w, http.StatusOK, map[string]any{"message": "Memories deleted successfully!", "purged": n})
}

// visible lists the namespaces of the request's tenant that hold memories
// and lie inside its key's binding.
func (h *Handler) visible(r *http.Request) ([]engram.NamespaceCount, error) {
	all, err := h.svc.Namespaces(r.Context(), h.tenant(r), engram.MaxLimit)
	if err != nil {
		return nil, err
	}
	k := engramhttp.KeyFrom(r.Context())
	return slices.DeleteFunc(all, func(c engram.NamespaceCount) bool { return engramhttp.CheckBinding(k, c.Namespace) != nil }), nil
}

// entityRow is one entity of Mem0's entities list.
type entityRow struct {
	Type     string `json:"type"`
	Name     string `json:"name"`
	Memories int    `json:"total_memories"`
}

// entities lists the users, agents and runs that hold active memories
// (within the key's binding), with how many.
func (h *Handler) entities(w http.ResponseWriter, r *http.Request) error {
	pageNo, size, err := pageParams(r)
	if err != nil {
		return err
	}
	nss, err := h.visible(r)
	if err != nil {
		return err
	}
	counts := map[[2]string]int{}
	for _, c := range nss {
		for _, e := range [][2]string{{"user", c.Namespace.User}, {"agent", c.Namespace.Agent}, {"run", c.Namespace.Session}} {
			if e[1] != "" {
				counts[e] += c.Memories
			}
		}
	}
	rows := make([]entityRow, 0, len(counts))
	for e, n := range counts {
		rows = append(rows, entityRow{Type: e[0], Name: e[1], Memories: n})
	}
	slices.SortFunc(rows, func(a, b entityRow) int { return cmp.Or(cmp.Compare(a.Type, b.Type), cmp.Compare(a.Name, b.Name)) })
	from := min((pageNo-1)*size, len(rows))
	to := min(from+size, len(rows))
	results := make([]map[string]any, 0, to-from)
	t := h.tenant(r)
	for _, e := range rows[from:to] {
		results = append(results, map[string]any{
			"id": e.Type + ":" + e.Name, "name": e.Name, "type": e.Type, "total_memories": e.Memories,
			"owner": t.Org + "/" + t.Project, "created_at": nil, "updated_at": nil,
		})
	}
	var next, prev any
	if to < len(rows) {
		next = pageURL(r, pageNo+1, size)
	}
	if pageNo > 1 {
		prev = pageURL(r, pageNo-1, size)
	}
	return writeJSON(w, http.StatusOK, map[string]any{"count": len(rows), "next": next, "previous": prev, "results": results})
}

// deleteEntity purges one user, agent or run: a user's whole scope; an
// agent's or a run's records under every user (within the key's binding)
// that has them. It needs an admin key.
func (h *Handler) deleteEntity(w http.ResponseWriter, r *http.Request) error {
	if err := allow(r, engram.RoleAdmin, "deleting an entity (a purge)"); err != nil {
		return err
	}
	typ, name := r.PathValue("type"), r.PathValue("name")
	scopes, err := h.entityScopes(r, typ, name)
	if err != nil {
		return err
	}
	var total engram.PurgeCounts
	for _, s := range scopes {
		n, err := h.svc.DeleteScope(r.Context(), s)
		if err != nil {
			return renamed(err)
		}
		total.Episodes, total.Memories, total.Versions = total.Episodes+n.Episodes, total.Memories+n.Memories, total.Versions+n.Versions
	}
	return writeJSON(w, http.StatusOK, map[string]any{"message": "Entity deleted successfully.", "purged": total})
}

// entityScopes returns the scopes that hold the entity typ/name: a user is
// one scope; an agent or a run is looked up among the visible namespaces,
// and ENOTFOUND when none has it.
func (h *Handler) entityScopes(r *http.Request, typ, name string) ([]engram.Scope, error) {
	switch typ {
	case "user":
		if engramhttp.CheckBinding(engramhttp.KeyFrom(r.Context()), engram.Namespace{Org: h.tenant(r).Org, Project: h.tenant(r).Project, User: name}) != nil {
			return nil, engram.Errorf(engram.ENOTFOUND, "user %s not found", name)
		}
		s, err := h.scope(r, entity{user: name}, "entity")
		return []engram.Scope{s}, err
	case "agent", "run":
	case "app":
		return nil, engram.Errorf(engram.EINVALID, "entity type app is not supported: engram has no apps")
	default:
		return nil, engram.Errorf(engram.EINVALID, "entity type %q is not one of user, agent, run", typ)
	}
	nss, err := h.visible(r)
	if err != nil {
		return nil, err
	}
	seen := map[engram.Scope]bool{}
	var out []engram.Scope
	for _, c := range nss {
		n := c.Namespace
		s := engram.Scope{Org: n.Org, Project: n.Project, User: n.User, Agent: name}
		if typ == "run" {
			s.Agent, s.Session = n.Agent, name
		}
		if (typ == "agent" && n.Agent == name || typ == "run" && n.Session == name) && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil, engram.Errorf(engram.ENOTFOUND, "%s %s not found", typ, name)
	}
	return out, nil
}
