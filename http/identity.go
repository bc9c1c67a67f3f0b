package http

import (
	"context"
	"net/http"

	"github.com/engramhq/engram"
)

// identityList is the parameters of GET /v1/identities.
var identityList = withScope(param{name: "modality"}, param{name: "person"})

// IdentityList is the body of GET /v1/identities.
type IdentityList struct {
	Identities []engram.Identity `json:"identities"`
}

// PersonList is the body of GET /v1/persons.
type PersonList struct {
	Persons []engram.Person `json:"persons"`
}

// IdentityHistory is the body of GET /v1/identities/{id}/history.
type IdentityHistory struct {
	Events []engram.IdentityEvent `json:"events"`
}

func (s *mediaRoutes) handleAddObservations(w http.ResponseWriter, r *http.Request, _ query) error {
	var req engram.AddObservationsRequest
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	res, err := s.svc.AddObservations(r.Context(), req)
	if err != nil {
		return err
	}
	res.Observations = nonNil(res.Observations)
	writeJSON(w, http.StatusCreated, res)
	return nil
}

func (s *mediaRoutes) handleListIdentities(w http.ResponseWriter, r *http.Request, q query) error {
	sc, err := q.scope()
	if err != nil {
		return err
	}
	ids, err := s.svc.ListIdentities(r.Context(), sc, engram.IdentityFilter{Modality: q.str("modality"), PersonID: q.str("person")})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, IdentityList{Identities: nonNil(ids)})
	return nil
}

func (s *mediaRoutes) handleGetIdentity(w http.ResponseWriter, r *http.Request, q query) error {
	sc, id, err := scopeAndID(r, q, "identity")
	if err != nil {
		return err
	}
	d, err := s.svc.GetIdentity(r.Context(), sc, id)
	if err != nil {
		return err
	}
	d.Observations, d.Episodes = nonNil(d.Observations), nonNil(d.Episodes)
	writeJSON(w, http.StatusOK, d)
	return nil
}

func (s *mediaRoutes) handleDeleteIdentity(w http.ResponseWriter, r *http.Request, q query) error {
	sc, id, err := scopeAndID(r, q, "identity")
	if err != nil {
		return err
	}
	if err := s.svc.DeleteIdentity(r.Context(), sc, id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *mediaRoutes) handleIdentityHistory(w http.ResponseWriter, r *http.Request, q query) error {
	sc, id, err := scopeAndID(r, q, "identity")
	if err != nil {
		return err
	}
	evs, err := s.svc.IdentityHistory(r.Context(), sc, id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, IdentityHistory{Events: nonNil(evs)})
	return nil
}

func (s *mediaRoutes) handleSplitIdentity(w http.ResponseWriter, r *http.Request, q query) error {
	return answerIDBody(w, r, q, "identity", http.StatusCreated, s.svc.SplitIdentity)
}

func (s *mediaRoutes) handleUnlinkIdentity(w http.ResponseWriter, r *http.Request, q query) error {
	sc, id, err := scopeAndID(r, q, "identity")
	if err != nil {
		return err
	}
	var none struct{}
	if err := decodeOptionalBody(r, &none); err != nil {
		return err
	}
	i, err := s.svc.UnlinkIdentity(r.Context(), sc, id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, i)
	return nil
}

func (s *mediaRoutes) handleMergeIdentities(w http.ResponseWriter, r *http.Request, q query) error {
	return answerBody(w, r, q, http.StatusOK, s.svc.MergeIdentities)
}

func (s *mediaRoutes) handleLinkIdentities(w http.ResponseWriter, r *http.Request, q query) error {
	return answerBody(w, r, q, http.StatusOK, s.svc.LinkIdentities)
}

func (s *mediaRoutes) handleListPersons(w http.ResponseWriter, r *http.Request, q query) error {
	sc, err := q.scope()
	if err != nil {
		return err
	}
	ps, err := s.svc.ListPersons(r.Context(), sc)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, PersonList{Persons: nonNil(ps)})
	return nil
}

var _ engram.IdentityService = (*Client)(nil)

// AddObservations implements engram.IdentityService.
func (c *mediaClient) AddObservations(ctx context.Context, req engram.AddObservationsRequest) (*engram.AddObservationsResult, error) {
	return doNew[engram.AddObservationsResult](ctx, c.conn, "POST", "/v1/observations", nil, req)
}

// ListIdentities implements engram.IdentityService.
func (c *mediaClient) ListIdentities(ctx context.Context, s engram.Scope, f engram.IdentityFilter) ([]engram.Identity, error) {
	q := scopeValues(s)
	setString(q, "modality", f.Modality)
	setString(q, "person", f.PersonID)
	var out IdentityList
	if err := c.do(ctx, "GET", "/v1/identities", q, nil, &out); err != nil {
		return nil, err
	}
	return out.Identities, nil
}

// GetIdentity implements engram.IdentityService.
func (c *mediaClient) GetIdentity(ctx context.Context, s engram.Scope, id string) (*engram.IdentityDetail, error) {
	p, err := idPath("/v1/identities/", id, "")
	if err != nil {
		return nil, err
	}
	return doNew[engram.IdentityDetail](ctx, c.conn, "GET", p, scopeValues(s), nil)
}

// DeleteIdentity implements engram.IdentityService.
func (c *mediaClient) DeleteIdentity(ctx context.Context, s engram.Scope, id string) error {
	p, err := idPath("/v1/identities/", id, "")
	if err != nil {
		return err
	}
	return c.do(ctx, "DELETE", p, scopeValues(s), nil, nil)
}

// LinkIdentities implements engram.IdentityService.
func (c *mediaClient) LinkIdentities(ctx context.Context, s engram.Scope, req engram.LinkRequest) (*engram.Person, error) {
	return doNew[engram.Person](ctx, c.conn, "POST", "/v1/identities/link", scopeValues(s), req)
}

// UnlinkIdentity implements engram.IdentityService.
func (c *mediaClient) UnlinkIdentity(ctx context.Context, s engram.Scope, id string) (*engram.Identity, error) {
	p, err := idPath("/v1/identities/", id, "/unlink")
	if err != nil {
		return nil, err
	}
	return doNew[engram.Identity](ctx, c.conn, "POST", p, scopeValues(s), struct{}{})
}

// MergeIdentities implements engram.IdentityService.
func (c *mediaClient) MergeIdentities(ctx context.Context, s engram.Scope, req engram.IdentityMergeRequest) (*engram.Identity, error) {
	return doNew[engram.Identity](ctx, c.conn, "POST", "/v1/identities/merge", scopeValues(s), req)
}

// SplitIdentity implements engram.IdentityService.
func (c *mediaClient) SplitIdentity(ctx context.Context, s engram.Scope, id string, req engram.IdentitySplitRequest) (*engram.Identity, error) {
	p, err := idPath("/v1/identities/", id, "/split")
	if err != nil {
		return nil, err
	}
	return doNew[engram.Identity](ctx, c.conn, "POST", p, scopeValues(s), req)
}

// ListPersons implements engram.IdentityService.
func (c *mediaClient) ListPersons(ctx context.Context, s engram.Scope) ([]engram.Person, error) {
	var out PersonList
	if err := c.do(ctx, "GET", "/v1/persons", scopeValues(s), nil, &out); err != nil {
		return nil, err
	}
	return out.Persons, nil
}

// IdentityHistory implements engram.IdentityService.
func (c *mediaClient) IdentityHistory(ctx context.Context, s engram.Scope, id string) ([]engram.IdentityEvent, error) {
	p, err := idPath("/v1/identities/", id, "/history")
	if err != nil {
		return nil, err
	}
	var out IdentityHistory
	if err := c.do(ctx, "GET", p, scopeValues(s), nil, &out); err != nil {
		return nil, err
	}
	return out.Events, nil
}
