package engine

import (
	"context"

	"github.com/engramhq/engram"
)

var _ engram.TenantLister = (*Engine)(nil)

// Tenants returns the tenants that hold active memories, with how many
// (see engram.TenantLister). EINVALID for a bad within or limit.
func (e *memories) Tenants(ctx context.Context, within engram.Namespace, limit int) ([]engram.NamespaceCount, error) {
	var out []engram.NamespaceCount
	err := e.store.View(ctx, func(r engram.Reader) error {
		var err error
		out, err = r.Tenants(ctx, within, limit)
		return err
	})
	return out, err
}
