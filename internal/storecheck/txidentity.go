package storecheck

import (
	"context"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/storeutil"
)

// jobWriter is the part of engram.JobQueue that writes (its reads are the
// checked reader's).
type jobWriter interface {
	EnqueueJob(ctx context.Context, j *engram.Job) error
	ClaimJob(ctx context.Context, owner string, now time.Time, lease time.Duration, skip ...string) (*engram.Job, error)
	CompleteJob(ctx context.Context, tenant engram.Namespace, id, owner string, now time.Time) error
	FailJob(ctx context.Context, tenant engram.Namespace, id, owner, reason string, retryAt *time.Time, now time.Time) error
	DeferJob(ctx context.Context, tenant engram.Namespace, id, owner, reason string, runAt, now time.Time) error
}

// identityWrites checks the writes of persons, identities and
// observations, resources, jobs, API keys and vault keys.
type identityWrites struct {
	engram.IdentityWriter
	engram.ResourceWriter
	jobWriter
	engram.KeyWriter
	engram.VaultKeyWriter
	c *checks
}

// PutModality: EINVALID for a bad modality.
func (x identityWrites) PutModality(ctx context.Context, m *engram.EmbeddingModality) error {
	if err := m.Validate(); err != nil {
		return err
	}
	return x.IdentityWriter.PutModality(ctx, m)
}

// PutIdentity: EINVALID for a bad identity.
func (x identityWrites) PutIdentity(ctx context.Context, i *engram.Identity) error {
	if err := i.Validate(); err != nil {
		return err
	}
	return x.IdentityWriter.PutIdentity(ctx, i)
}

// InsertObservation: EINVALID for a bad observation or one without an
// identity.
func (x identityWrites) InsertObservation(ctx context.Context, o *engram.Observation) error {
	if err := o.Validate(); err != nil {
		return err
	}
	if o.IdentityID == "" {
		return engram.Errorf(engram.EINVALID, "observation: identity_id is required")
	}
	return x.IdentityWriter.InsertObservation(ctx, o)
}

// PutPerson: EINVALID for a bad person.
func (x identityWrites) PutPerson(ctx context.Context, p *engram.Person) error {
	if err := p.Validate(); err != nil {
		return err
	}
	return x.IdentityWriter.PutPerson(ctx, p)
}

// InsertIdentityEvent: EINVALID for a bad event.
func (x identityWrites) InsertIdentityEvent(ctx context.Context, ev *engram.IdentityEvent) error {
	if err := ev.Validate(); err != nil {
		return err
	}
	return x.IdentityWriter.InsertIdentityEvent(ctx, ev)
}

// InsertResource: EINVALID for a bad resource or id.
func (x identityWrites) InsertResource(ctx context.Context, r *engram.Resource) error {
	if err := r.Validate(); err != nil {
		return err
	}
	if !engram.ValidID(r.ID) {
		return engram.Errorf(engram.EINVALID, "resource: id %q is not a valid id", r.ID)
	}
	return x.ResourceWriter.InsertResource(ctx, r)
}

// EnqueueJob: storeutil.CheckJob's EINVALID (it makes an empty Kind
// JobForm).
func (x identityWrites) EnqueueJob(ctx context.Context, j *engram.Job) error {
	if err := storeutil.CheckJob(j, x.c.short); err != nil {
		return err
	}
	return x.jobWriter.EnqueueJob(ctx, j)
}

// InsertKey: storeutil.CheckKey's EINVALID.
func (x identityWrites) InsertKey(ctx context.Context, k *engram.APIKey) error {
	if err := storeutil.CheckKey(k); err != nil {
		return err
	}
	return x.KeyWriter.InsertKey(ctx, k)
}

// InsertVaultKey: EINVALID for a key without its wrapped bytes or with a
// bad tenant.
func (x identityWrites) InsertVaultKey(ctx context.Context, k *engram.VaultKey) error {
	if err := checkVaultKey(k); err != nil {
		return err
	}
	return x.VaultKeyWriter.InsertVaultKey(ctx, k)
}

// ReplaceVaultKey: EINVALID for a key without its wrapped bytes or with a
// bad tenant.
func (x identityWrites) ReplaceVaultKey(ctx context.Context, k *engram.VaultKey) error {
	if err := checkVaultKey(k); err != nil {
		return err
	}
	return x.VaultKeyWriter.ReplaceVaultKey(ctx, k)
}

func checkVaultKey(k *engram.VaultKey) error {
	if len(k.Wrapped) == 0 {
		return engram.Errorf(engram.EINVALID, "a vault key needs its wrapped bytes")
	}
	return engram.Namespace{Org: k.Org, Project: k.Project}.Validate()
}
