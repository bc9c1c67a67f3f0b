package http

import (
	"context"
	"net/http"
	"net/url"

	"github.com/engramhq/engram"
)

// The patterns SensitivePolicyHandler is mounted at.
const (
	SensitivePolicyPattern    = "GET /v1/tenants/{org}/{project}/sensitive"
	SetSensitivePolicyPattern = "PUT /v1/tenants/{org}/{project}/sensitive"
	SensitiveScanPattern      = "POST /v1/tenants/{org}/{project}/sensitive/scan"
)

// SensitivePolicyHandler answers GET and PUT
// /v1/tenants/{org}/{project}/sensitive: the tenant's treatment of the
// secrets and personal data found in writes, as set and as applied. A PUT
// body is an engram.SensitivePolicy (groups left out take the server's
// default; {} returns to it). Mount it with the role admin: an admin key
// may read and set its own tenant only, and one bound to a user is refused
// (EFORBIDDEN), since the policy is the whole tenant's. A bad name or
// treatment is EINVALID naming it.
func SensitivePolicyHandler(p engram.SensitivePolicies) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := serveSensitivePolicy(w, r, p); err != nil {
			WriteError(w, r, err)
		}
	})
}

// tenantOf returns the tenant of r's path; EINVALID for a bad name, and
// EFORBIDDEN when r's key is not of that whole tenant (another tenant's,
// or bound to a user).
func tenantOf(r *http.Request) (engram.Namespace, error) {
	n := engram.Namespace{Org: r.PathValue("org"), Project: r.PathValue("project")}.Normalize()
	if err := n.Validate(); err != nil {
		return n, err
	}
	if k := KeyFrom(r.Context()); k != nil {
		if k.User != "" {
			return n, engram.Errorf(engram.EFORBIDDEN, "this API key is bound to a user; the sensitive policy and scan are the tenant's and need an admin key of the whole tenant")
		}
		if k.Org != n.Org || k.Project != n.Project {
			return n, engram.Errorf(engram.EFORBIDDEN, "this API key is of tenant %s/%s, not %s/%s", k.Org, k.Project, n.Org, n.Project)
		}
	}
	return n, nil
}

func serveSensitivePolicy(w http.ResponseWriter, r *http.Request, p engram.SensitivePolicies) error {
	n, err := tenantOf(r)
	if err != nil {
		return err
	}
	var out *engram.TenantPolicy
	switch r.Method {
	case http.MethodPut:
		var set engram.SensitivePolicy
		if err := decodeBody(r, &set); err != nil {
			return err
		}
		out, err = p.SetSensitivePolicy(r.Context(), n, set)
	default:
		if len(r.URL.Query()) > 0 {
			return engram.Errorf(engram.EINVALID, "GET %s takes no query parameters", r.URL.Path)
		}
		out, err = p.SensitivePolicy(r.Context(), n)
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

var _ engram.SensitivePolicies = (*Client)(nil)

// SensitivePolicy implements engram.SensitivePolicies (GET
// /v1/tenants/{org}/{project}/sensitive); the server's key must be the
// tenant's admin.
func (c *Client) SensitivePolicy(ctx context.Context, n engram.Namespace) (*engram.TenantPolicy, error) {
	return doNew[engram.TenantPolicy](ctx, c.conn, "GET", sensitivePath(n), nil, nil)
}

// SetSensitivePolicy implements engram.SensitivePolicies (PUT
// /v1/tenants/{org}/{project}/sensitive).
func (c *Client) SetSensitivePolicy(ctx context.Context, n engram.Namespace, p engram.SensitivePolicy) (*engram.TenantPolicy, error) {
	return doNew[engram.TenantPolicy](ctx, c.conn, "PUT", sensitivePath(n), nil, p)
}

// SensitiveScanHandler answers POST
// /v1/tenants/{org}/{project}/sensitive/scan: it scans the records of the
// tenant's scope narrowed by the query parameters user, agent and session
// and answers an engram.SensitiveScan (kinds, counts and record ids, never
// a value); with apply=true it also treats the findings as the tenant's
// policy says. Mount it with the role admin: as for the policy, only an
// admin key of the whole tenant may call it (EFORBIDDEN otherwise). An
// unknown parameter or a bad name is EINVALID naming it; a failing scan
// answers the service's error, records treated before it staying treated.
func SensitiveScanHandler(p engram.SensitivePolicies) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := serveSensitiveScan(w, r, p); err != nil {
			WriteError(w, r, err)
		}
	})
}

var scanParams = []param{{name: "user"}, {name: "agent"}, {name: "session"}, {name: "apply"}}

func serveSensitiveScan(w http.ResponseWriter, r *http.Request, p engram.SensitivePolicies) error {
	n, err := tenantOf(r)
	if err != nil {
		return err
	}
	q, err := parseQuery(r.URL.RawQuery, scanParams)
	if err != nil {
		return err
	}
	apply, err := q.bool("apply")
	if err != nil {
		return err
	}
	s := engram.Scope{Org: n.Org, Project: n.Project, User: q.str("user"), Agent: q.str("agent"), Session: q.str("session")}.Normalize()
	out, err := p.ScanSensitive(r.Context(), s, apply)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// ScanSensitive implements engram.SensitivePolicies (POST
// /v1/tenants/{org}/{project}/sensitive/scan); the server's key must be
// the tenant's admin. s.IncludeShared is not sent: a scan reads the scope
// as a write names it.
func (c *Client) ScanSensitive(ctx context.Context, s engram.Scope, apply bool) (*engram.SensitiveScan, error) {
	q := url.Values{}
	for name, v := range map[string]string{"user": s.User, "agent": s.Agent, "session": s.Session} {
		if v != "" {
			q.Set(name, v)
		}
	}
	if apply {
		q.Set("apply", "true")
	}
	return doNew[engram.SensitiveScan](ctx, c.conn, "POST", sensitivePath(engram.Namespace{Org: s.Org, Project: s.Project})+"/scan", q, nil)
}

func sensitivePath(n engram.Namespace) string {
	return "/v1/tenants/" + url.PathEscape(n.Org) + "/" + url.PathEscape(n.Project) + "/sensitive"
}
