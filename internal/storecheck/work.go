package storecheck

import (
	"context"

	"github.com/engramhq/engram"
)

// identityReads checks the reads of persons, identities and observations.
type identityReads struct {
	engram.IdentityReader
	c *checks
}

// Modalities: EINVALID for a bad scope.
func (x identityReads) Modalities(ctx context.Context, s engram.Scope) ([]engram.EmbeddingModality, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return x.IdentityReader.Modalities(ctx, s)
}

// ListIdentities: EINVALID for a bad scope.
func (x identityReads) ListIdentities(ctx context.Context, s engram.Scope, f engram.IdentityFilter) ([]engram.Identity, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return x.IdentityReader.ListIdentities(ctx, s, f)
}

// GetIdentity: EINVALID for a bad scope; ENOTFOUND for an id that is not
// an id, as for one that is not there.
func (x identityReads) GetIdentity(ctx context.Context, s engram.Scope, id string) (*engram.Identity, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if !engram.ValidID(id) {
		return nil, engram.Errorf(engram.ENOTFOUND, "identity %s not found", id)
	}
	return x.IdentityReader.GetIdentity(ctx, s, id)
}

// ListObservations: EINVALID for a bad scope. The backend is given a
// limit of 1 to MaxIdentityMembers: a limit outside that range is
// MaxIdentityMembers.
func (x identityReads) ListObservations(ctx context.Context, s engram.Scope, f engram.ObservationFilter) ([]engram.Observation, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if f.Limit <= 0 || f.Limit > engram.MaxIdentityMembers {
		f.Limit = engram.MaxIdentityMembers
	}
	return x.IdentityReader.ListObservations(ctx, s, f)
}

// ListPersons: EINVALID for a bad scope.
func (x identityReads) ListPersons(ctx context.Context, s engram.Scope) ([]engram.Person, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return x.IdentityReader.ListPersons(ctx, s)
}

// GetPerson: EINVALID for a bad scope; ENOTFOUND for an id that is not an
// id, as for one that is not there.
func (x identityReads) GetPerson(ctx context.Context, s engram.Scope, id string) (*engram.Person, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if !engram.ValidID(id) {
		return nil, engram.Errorf(engram.ENOTFOUND, "person %s not found", id)
	}
	return x.IdentityReader.GetPerson(ctx, s, id)
}

// IdentityHistory: EINVALID for a bad scope or id.
func (x identityReads) IdentityHistory(ctx context.Context, s engram.Scope, id string) ([]engram.IdentityEvent, error) {
	if err := x.c.scopeID(s, "identity", id); err != nil {
		return nil, err
	}
	return x.IdentityReader.IdentityHistory(ctx, s, id)
}

// workReads checks the reads of resources and jobs.
type workReads struct {
	engram.ResourceReader
	engram.JobReader
	c *checks
}

// GetResource: EINVALID for a bad scope; ENOTFOUND for an id that is not
// an id, as for one that is not there.
func (x workReads) GetResource(ctx context.Context, s engram.Scope, id string) (*engram.Resource, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if !engram.ValidID(id) {
		return nil, engram.Errorf(engram.ENOTFOUND, "resource %s not found", id)
	}
	return x.ResourceReader.GetResource(ctx, s, id)
}

// ListResources: EINVALID for a bad scope, cursor or limit
// (ResourceLimit); the backend is given f.Limit as ResourceLimit makes it.
func (x workReads) ListResources(ctx context.Context, s engram.Scope, f engram.ResourceFilter) ([]engram.Resource, string, error) {
	if err := s.Validate(); err != nil {
		return nil, "", err
	}
	limit, err := ResourceLimit(f)
	if err != nil {
		return nil, "", err
	}
	f.Limit = limit
	return x.ResourceReader.ListResources(ctx, s, f)
}

// GetJob: EINVALID for a bad scope or id.
func (x workReads) GetJob(ctx context.Context, s engram.Scope, id string) (*engram.Job, error) {
	if err := x.c.scopeID(s, "job", id); err != nil {
		return nil, err
	}
	return x.JobReader.GetJob(ctx, s, id)
}

// ListJobs: EINVALID for a bad scope or filter; the backend is given
// f.Limit as ClampLimit makes it.
func (x workReads) ListJobs(ctx context.Context, s engram.Scope, f engram.JobFilter) ([]engram.Job, string, error) {
	if err := s.Validate(); err != nil {
		return nil, "", err
	}
	if err := f.Validate(); err != nil {
		return nil, "", err
	}
	f.Limit, _ = engram.ClampLimit(f.Limit) // JobFilter.Validate checked it
	return x.JobReader.ListJobs(ctx, s, f)
}
