package http

import (
	"net/http"

	"github.com/engramhq/engram"
)

// The key management routes need the admin role; their namespace and
// scope parameters are checked against the admin key's binding like any
// other, so an admin bound to a user manages only that user's keys.

// keyParams are the parameters of GET /v1/keys and DELETE /v1/keys/{id}:
// the tenant, and a user whose keys alone are listed or revoked.
var keyParams = []param{{name: "org"}, {name: "project"}, {name: "user"}}

// createKeyResponse carries the secret of a new key, which the server does
// not keep: this answer is the only time it is shown.
type createKeyResponse struct {
	Key    *engram.APIKey `json:"key"`
	Secret string         `json:"secret"`
}

type keysResponse struct {
	Keys []engram.APIKey `json:"keys"`
}

// keyService returns the server's keys, or an EINVALID error when it
// serves without authentication.
func (s *Server) keyService() (engram.KeyService, error) {
	if s.keys == nil {
		return nil, engram.Errorf(engram.EINVALID, "this server runs without authentication (engram serve --no-auth), so it manages no keys; use engram keys on its data directory or store")
	}
	return s.keys, nil
}

func (s *Server) handleCreateKey(w http.ResponseWriter, r *http.Request, _ query) error {
	ks, err := s.keyService()
	if err != nil {
		return err
	}
	var spec engram.KeySpec
	if err := decodeBody(r, &spec); err != nil {
		return err
	}
	k, secret, err := ks.CreateKey(r.Context(), spec)
	if err != nil {
		return err
	}
	s.logger.Info("API key created", "id", k.ID, "org", k.Org, "project", k.Project, "user", k.User, "role", k.Role)
	writeJSON(w, http.StatusCreated, createKeyResponse{Key: k, Secret: secret})
	return nil
}

// tenantKeys returns the keys of the scope's tenant, only those of its
// user when it names one, after checking the scope as every route does.
func (s *Server) tenantKeys(r *http.Request, q query) (engram.Scope, []engram.APIKey, error) {
	ks, err := s.keyService()
	if err != nil {
		return engram.Scope{}, nil, err
	}
	sc, err := q.scope()
	if err != nil {
		return sc, nil, err
	}
	if sc.Org == "" || sc.Project == "" {
		return sc, nil, engram.Errorf(engram.EINVALID, "query parameters org and project are required")
	}
	all, err := ks.ListKeys(r.Context(), sc.Org, sc.Project)
	if err != nil {
		return sc, nil, err
	}
	keys := []engram.APIKey{}
	for _, k := range all {
		if sc.User == "" || k.User == sc.User {
			keys = append(keys, k)
		}
	}
	return sc, keys, nil
}

func (s *Server) handleListKeys(w http.ResponseWriter, r *http.Request, q query) error {
	_, keys, err := s.tenantKeys(r, q)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, keysResponse{Keys: keys})
	return nil
}

func (s *Server) handleRevokeKey(w http.ResponseWriter, r *http.Request, q query) error {
	sc, keys, err := s.tenantKeys(r, q)
	if err != nil {
		return err
	}
	id := r.PathValue("id")
	for _, k := range keys {
		if k.ID == id {
			if err := s.keys.RevokeKey(r.Context(), sc.Org, sc.Project, id); err != nil {
				return err
			}
			s.logger.Info("API key revoked", "id", id, "org", sc.Org, "project", sc.Project)
			w.WriteHeader(http.StatusNoContent)
			return nil
		}
	}
	return engram.Errorf(engram.ENOTFOUND, "no API key %q in this scope", id)
}
