package storecheck

import (
	"context"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/storeutil"
)

// tenancyReads checks the reads that span a tenant or the store: where a
// memory is, which namespaces and tenants hold memories, meta values,
// vectors and the change log.
type tenancyReads struct {
	engram.Locator
	engram.TenantLister
	engram.UserLister
	engram.MetaReader
	engram.VectorReader
	engram.ChangeLog
	c *checks
}

// LocateMemory: EINVALID for a bad tenant (its org, project and user) or
// id.
func (x tenancyReads) LocateMemory(ctx context.Context, tenant engram.Namespace, id string) (engram.Namespace, error) {
	n := engram.Namespace{Org: tenant.Org, Project: tenant.Project, User: tenant.User}
	if err := x.c.namespaceID(n, "memory", id); err != nil {
		return n, err
	}
	return x.Locator.LocateMemory(ctx, tenant, id)
}

// Namespaces: EINVALID for a bad tenant (its org and project) or limit;
// the backend is given the limit as ClampLimit makes it.
func (x tenancyReads) Namespaces(ctx context.Context, tenant engram.Namespace, limit int) ([]engram.NamespaceCount, error) {
	if err := tenantOf(tenant).Validate(); err != nil {
		return nil, err
	}
	limit, err := engram.ClampLimit(limit)
	if err != nil {
		return nil, err
	}
	return x.Locator.Namespaces(ctx, tenant, limit)
}

// Users: EINVALID for a bad tenant (its org and project) or limit; the
// backend is given the tenant's org and project alone and the limit as
// ClampLimit makes it.
func (x tenancyReads) Users(ctx context.Context, tenant engram.Namespace, after string, limit int) ([]string, error) {
	n := tenantOf(tenant)
	if err := n.Validate(); err != nil {
		return nil, err
	}
	limit, err := engram.ClampLimit(limit)
	if err != nil {
		return nil, err
	}
	return x.UserLister.Users(ctx, n, after, limit)
}

// Tenants: EINVALID for a within that names more than an org and a
// project, or a project without its org, or for a bad limit; the backend
// is given the limit as ClampLimit makes it.
func (x tenancyReads) Tenants(ctx context.Context, within engram.Namespace, limit int) ([]engram.NamespaceCount, error) {
	switch {
	case within.User != "" || within.Agent != "" || within.Session != "":
		return nil, engram.Errorf(engram.EINVALID, "tenants: within names an org and a project, not a user, agent or session")
	case within.Project != "" && within.Org == "":
		return nil, engram.Errorf(engram.EINVALID, "tenants: within names a project without its org")
	}
	limit, err := engram.ClampLimit(limit)
	if err != nil {
		return nil, err
	}
	return x.TenantLister.Tenants(ctx, within, limit)
}

// Meta: EINVALID for a bad key.
func (x tenancyReads) Meta(ctx context.Context, key string) (string, error) {
	if err := x.c.metaKey(key); err != nil {
		return "", err
	}
	return x.MetaReader.Meta(ctx, key)
}

// ScanVectors: EINVALID for a bad scope or embedder name.
func (x tenancyReads) ScanVectors(ctx context.Context, s engram.Scope, embedder string, fn func(engram.VectorRecord) error) error {
	if err := s.Validate(); err != nil {
		return err
	}
	if err := x.c.embedder(embedder); err != nil {
		return err
	}
	return x.VectorReader.ScanVectors(ctx, s, embedder, fn)
}

// GetVectors: EINVALID for a bad tenant (its org and project) or embedder
// name; the backend is given the valid ids of ids, each once.
func (x tenancyReads) GetVectors(ctx context.Context, tenant engram.Namespace, embedder string, ids []string) ([]engram.VectorRecord, error) {
	if err := tenantOf(tenant).Validate(); err != nil {
		return nil, err
	}
	if err := x.c.embedder(embedder); err != nil {
		return nil, err
	}
	return x.VectorReader.GetVectors(ctx, tenant, embedder, storeutil.ValidIDs(ids))
}

// Changes: EINVALID for a bad scope.
func (x tenancyReads) Changes(ctx context.Context, s engram.Scope, after int64) ([]string, int64, error) {
	if err := s.Validate(); err != nil {
		return nil, 0, err
	}
	return x.ChangeLog.Changes(ctx, s, after)
}
