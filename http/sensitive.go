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

func serveSensitivePolicy(w http.ResponseWriter, r *http.Request, p engram.SensitivePolicies) error {
	n := engram.Namespace{Org: r.PathValue("org"), Project: r.PathValue("project")}.Normalize()
	if err := n.Validate(); err != nil {
		return err
	}
	if k := KeyFrom(r.Context()); k != nil {
		if k.User != "" {
			return engram.Errorf(engram.EFORBIDDEN, "this API key is bound to a user; the sensitive policy is the tenant's and needs an admin key of the whole tenant")
		}
		if k.Org != n.Org || k.Project != n.Project {
			return engram.Errorf(engram.EFORBIDDEN, "this API key is of tenant %s/%s, not %s/%s", k.Org, k.Project, n.Org, n.Project)
		}
	}
	var (
		out *engram.TenantPolicy
		err error
	)
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

func sensitivePath(n engram.Namespace) string {
	return "/v1/tenants/" + url.PathEscape(n.Org) + "/" + url.PathEscape(n.Project) + "/sensitive"
}
