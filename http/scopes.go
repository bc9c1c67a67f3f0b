package http

import (
	"net/http"
	"slices"

	"github.com/engramhq/engram"
)

// scopesParams are the parameters of GET /v1/scopes. org and project may
// be left out with an API key: they default to the key's.
var scopesParams = []param{{name: "org"}, {name: "project"}, {name: "limit"}}

// scopesResponse is the body of GET /v1/scopes.
type scopesResponse struct {
	Tenant engram.Namespace        `json:"tenant"`
	Scopes []engram.NamespaceCount `json:"scopes"`
}

// handleScopes lists the namespaces of a tenant that hold active memories,
// with counts and last activity; a key bound to a user sees that user's.
func (s *Server) handleScopes(w http.ResponseWriter, r *http.Request, q query) error {
	tenant := engram.Namespace{Org: q.str("org"), Project: q.str("project")}
	if q.key != nil {
		if tenant.Org == "" {
			tenant.Org = q.key.Org
		}
		if tenant.Project == "" {
			tenant.Project = q.key.Project
		}
	}
	tenant = tenant.Normalize()
	if q.key != nil {
		bound := tenant
		bound.User = q.key.User
		if err := checkBinding(q.key, bound); err != nil {
			return err
		}
	}
	limit, err := q.int("limit")
	if err != nil {
		return err
	}
	all, err := s.svc.Namespaces(r.Context(), tenant, limit)
	if err != nil {
		return err
	}
	all = slices.DeleteFunc(nonNil(all), func(c engram.NamespaceCount) bool { return checkBinding(q.key, c.Namespace) != nil })
	writeJSON(w, http.StatusOK, scopesResponse{Tenant: tenant, Scopes: all})
	return nil
}
