package http

import (
	"context"
	"net/http"
	"strings"

	"github.com/engramhq/engram"
)

// Authentication and authorization. With ServerOptions.Keys set, every
// request but the probes carries an API key (Authorization: Bearer KEY, or
// Token KEY as Mem0's client sends it). The key's role decides which routes
// it may call (route.role), and its binding which scopes a request may
// name: checkBinding is the one rule, applied where the scope parameters
// and the namespaces of a body are decoded (query.scope, bindNames), so a
// handler never sees a scope outside the key's binding.

type keyContextKey struct{}

// keyFrom returns the API key the request was authenticated with, nil
// when the server does not authenticate.
func keyFrom(ctx context.Context) *engram.APIKey {
	k, _ := ctx.Value(keyContextKey{}).(*engram.APIKey)
	return k
}

// KeyFrom returns the API key a request to a Mount was authenticated with,
// nil when the server does not authenticate.
func KeyFrom(ctx context.Context) *engram.APIKey { return keyFrom(ctx) }

// CheckBinding returns an EFORBIDDEN error naming the first field of n
// outside the binding of k (nil when k is nil or n is zero), the rule every
// route applies to the namespaces a request names.
func CheckBinding(k *engram.APIKey, n engram.Namespace) error { return checkBinding(k, n) }

// authenticate returns r carrying its API key, or an EUNAUTHORIZED error
// saying how to send one; EUNAVAILABLE when the keys cannot be read.
func (s *Server) authenticate(r *http.Request) (*http.Request, error) {
	vals := r.Header.Values("Authorization")
	switch {
	case len(vals) == 0 || vals[0] == "":
		return nil, engram.Errorf(engram.EUNAUTHORIZED, "this server requires an API key; send it in the header Authorization: Bearer KEY (an operator makes one with engram keys create)")
	case len(vals) > 1:
		return nil, engram.Errorf(engram.EUNAUTHORIZED, "header Authorization is given %d times; it takes one value", len(vals))
	}
	scheme, secret, _ := strings.Cut(strings.TrimSpace(vals[0]), " ")
	if !strings.EqualFold(scheme, "Bearer") && !strings.EqualFold(scheme, "Token") {
		return nil, engram.Errorf(engram.EUNAUTHORIZED, "header Authorization must be \"Bearer KEY\" or \"Token KEY\"")
	}
	k, err := s.keys.Authenticate(r.Context(), strings.TrimSpace(secret))
	if err != nil {
		return nil, err
	}
	return r.WithContext(context.WithValue(r.Context(), keyContextKey{}, k)), nil
}

// authorize returns an EFORBIDDEN error when the request's key has a role
// below what the route needs.
func authorize(r *http.Request, rt route) error {
	k := keyFrom(r.Context())
	if k == nil || k.Allows(rt.role) {
		return nil
	}
	return engram.Errorf(engram.EFORBIDDEN, "this API key has the role %s; %s %s needs a key with the role %s", k.Role, r.Method, rt.path, rt.role)
}

// checkBinding returns an EFORBIDDEN error naming the first field of n
// outside the binding of k: another org or project, or another user when k
// is bound to one. The message echoes only what the request named. A nil
// key (no authentication) and a zero namespace (none given; the service
// says what is missing) pass.
func checkBinding(k *engram.APIKey, n engram.Namespace) error {
	if k == nil || n == (engram.Namespace{}) {
		return nil
	}
	outside := func(field, v string) error {
		return engram.Errorf(engram.EFORBIDDEN, "namespace.%s %q is outside this key's binding", field, v)
	}
	switch {
	case n.Org != k.Org:
		return outside("org", n.Org)
	case n.Project != k.Project:
		return outside("project", n.Project)
	case k.User != "" && n.User != k.User:
		return outside("user", n.User)
	}
	return nil
}
