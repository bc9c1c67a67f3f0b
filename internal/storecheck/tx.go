package storecheck

import (
	"context"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/storeutil"
)

// NewTx returns t with the contract's checks in front of every method that
// takes a scope, a namespace, an id, a limit or a record to store. t is
// what a backend's Update hands out.
func NewTx(t Tx, o Options) engram.Tx {
	c := o.checks()
	return &tx{
		reader:         newReader(t, c),
		recordWrites:   recordWrites{t, c},
		sideWrites:     sideWrites{t, t, t, t, t, c},
		identityWrites: identityWrites{t, t, t, t, t, c},
	}
}

// tx is the whole engram.Tx: the checked reader and one checking part per
// concern of the writes.
type tx struct {
	*reader
	recordWrites
	sideWrites
	identityWrites
}

var _ engram.Tx = (*tx)(nil)

// recordWriter is the part of engram.Tx that is its own methods.
type recordWriter interface {
	InsertEpisode(ctx context.Context, e *engram.Episode) error
	InsertMemory(ctx context.Context, m *engram.Memory) error
	ReplaceMemory(ctx context.Context, m *engram.Memory) error
	InsertVersion(ctx context.Context, v *engram.Version) error
	InsertAudit(ctx context.Context, a *engram.AuditEntry) error
	PurgeMemory(ctx context.Context, n engram.Namespace, id string) error
	PurgeEpisode(ctx context.Context, n engram.Namespace, id string) error
	PurgeScope(ctx context.Context, s engram.Scope) (engram.PurgeCounts, error)
	Touch(ctx context.Context, tenant engram.Namespace, ids []string, at time.Time) error
}

// recordWrites checks the writes of episodes, memories, versions and
// audit entries.
type recordWrites struct {
	w recordWriter
	c *checks
}

// InsertEpisode: storeutil.CheckEpisode's EINVALID.
func (x recordWrites) InsertEpisode(ctx context.Context, e *engram.Episode) error {
	if err := storeutil.CheckEpisode(e); err != nil {
		return err
	}
	return x.w.InsertEpisode(ctx, e)
}

// InsertMemory: storeutil.CheckMemory's EINVALID.
func (x recordWrites) InsertMemory(ctx context.Context, m *engram.Memory) error {
	if err := storeutil.CheckMemory(m); err != nil {
		return err
	}
	return x.w.InsertMemory(ctx, m)
}

// ReplaceMemory: storeutil.CheckMemory's EINVALID.
func (x recordWrites) ReplaceMemory(ctx context.Context, m *engram.Memory) error {
	if err := storeutil.CheckMemory(m); err != nil {
		return err
	}
	return x.w.ReplaceMemory(ctx, m)
}

// InsertVersion: storeutil.CheckVersion's EINVALID.
func (x recordWrites) InsertVersion(ctx context.Context, v *engram.Version) error {
	if err := storeutil.CheckVersion(v, x.c.short); err != nil {
		return err
	}
	return x.w.InsertVersion(ctx, v)
}

// InsertAudit: storeutil.CheckAudit's EINVALID.
func (x recordWrites) InsertAudit(ctx context.Context, a *engram.AuditEntry) error {
	if err := storeutil.CheckAudit(a, x.c.short); err != nil {
		return err
	}
	return x.w.InsertAudit(ctx, a)
}

// PurgeMemory: EINVALID for a bad namespace or id.
func (x recordWrites) PurgeMemory(ctx context.Context, n engram.Namespace, id string) error {
	if err := x.c.namespaceID(n, "memory", id); err != nil {
		return err
	}
	return x.w.PurgeMemory(ctx, n, id)
}

// PurgeEpisode: EINVALID for a bad namespace or id.
func (x recordWrites) PurgeEpisode(ctx context.Context, n engram.Namespace, id string) error {
	if err := x.c.namespaceID(n, "episode", id); err != nil {
		return err
	}
	return x.w.PurgeEpisode(ctx, n, id)
}

// PurgeScope: EINVALID for a bad scope or one that names no user, agent
// or session (a whole project is never purged).
func (x recordWrites) PurgeScope(ctx context.Context, s engram.Scope) (engram.PurgeCounts, error) {
	if err := s.Validate(); err != nil {
		return engram.PurgeCounts{}, err
	}
	if s.User == "" && s.Agent == "" && s.Session == "" {
		return engram.PurgeCounts{}, engram.Errorf(engram.EINVALID, "purge: the scope names no user, agent or session; a whole project cannot be purged")
	}
	return x.w.PurgeScope(ctx, s)
}

// Touch: EINVALID for a bad tenant or memory id.
func (x recordWrites) Touch(ctx context.Context, tenant engram.Namespace, ids []string, at time.Time) error {
	if err := tenant.Validate(); err != nil {
		return err
	}
	if err := x.c.ids("memory", ids...); err != nil {
		return err
	}
	return x.w.Touch(ctx, tenant, ids, at)
}
