package http

import (
	"net/http"

	"github.com/engramhq/engram"
)

// The vault over HTTP: a request asks for vault memories with vault=true
// in the query (GET and DELETE of a memory, its restore and history, lists,
// export) or "vault": true in the body (search, POST /v1/memories/list).
// Only a key with the role admin may ask; a key with another role gets 403
// whatever it asks, so a read key never learns what the vault holds.
// Without authentication (loopback only) the asking is enough. A request
// that does not ask never sees a vault memory.

// vaultParam is the query parameter that asks for the vault.
var vaultParam = param{name: "vault"}

// withVault returns r asking for the vault when its query says vault=true;
// EINVALID for a value that is not a boolean, EFORBIDDEN when its key may
// not read the vault.
func withVault(r *http.Request, q query) (*http.Request, error) {
	asked, err := q.bool("vault")
	if err != nil {
		return r, err
	}
	return askVault(r, asked)
}

// askVault returns r with vault access when asked is set and its key may
// read the vault (see engram.WithVault), r itself when asked is not set,
// and an EFORBIDDEN error naming the role needed otherwise.
func askVault(r *http.Request, asked bool) (*http.Request, error) {
	if !asked {
		return r, nil
	}
	by := "a caller without authentication"
	if k := keyFrom(r.Context()); k != nil {
		if !k.Allows(engram.RoleAdmin) {
			return r, engram.Errorf(engram.EFORBIDDEN, "vault: this API key has the role %s; reading the vault needs a key with the role admin", k.Role)
		}
		by = "key " + k.ID
	}
	return r.WithContext(engram.WithVault(r.Context(), by)), nil
}
