package http

import (
	"net/http"
	"strconv"

	"github.com/engramhq/engram"
)

// TenantsPattern is the pattern TenantsHandler is mounted at.
const TenantsPattern = "GET /v1/tenants"

// tenantsResponse is the body of GET /v1/tenants.
type tenantsResponse struct {
	Tenants []engram.NamespaceCount `json:"tenants"`
}

// TenantsHandler answers GET /v1/tenants: the tenants (org and project)
// that hold active memories, with counts and last activity, for the
// dashboard to open on. Mount it with the role admin. Without keys
// (--no-auth) it lists every tenant; an admin key sees its own tenant
// only, and one bound to a user is refused (EFORBIDDEN): the counts are
// of every user's memories. Its one parameter is limit (ClampLimit rules);
// any other is EINVALID.
func TenantsHandler(l engram.TenantLister) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := serveTenants(w, r, l); err != nil {
			WriteError(w, r, err)
		}
	})
}

func serveTenants(w http.ResponseWriter, r *http.Request, l engram.TenantLister) error {
	q := r.URL.Query()
	for name := range q {
		if name != "limit" {
			return engram.Errorf(engram.EINVALID, "unknown query parameter %q; GET /v1/tenants takes limit", name)
		}
	}
	limit := 0
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return engram.Errorf(engram.EINVALID, "query parameter limit %q is not an integer", v)
		}
		limit = n
	}
	var within engram.Namespace
	if k := KeyFrom(r.Context()); k != nil {
		if k.User != "" {
			return engram.Errorf(engram.EFORBIDDEN, "this API key is bound to a user; listing tenants needs an admin key of the whole tenant")
		}
		within = engram.Namespace{Org: k.Org, Project: k.Project}
	}
	ts, err := l.Tenants(r.Context(), within, limit)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, tenantsResponse{Tenants: nonNil(ts)})
	return nil
}
