package engine

import (
	"context"

	"github.com/engramhq/engram"
)

// LocateMemory returns the namespace of the memory id of tenant's user in
// its org and project (see engram.Locator). ENOTFOUND when there is none,
// ECONFLICT when tenant names no user and several users hold the id,
// EINVALID for a bad tenant or id.
func (e *memories) LocateMemory(ctx context.Context, tenant engram.Namespace, id string) (engram.Namespace, error) {
	if err := engram.CheckID("memory", id); err != nil {
		return engram.Namespace{}, err
	}
	var n engram.Namespace
	err := e.store.View(ctx, func(r engram.Reader) error {
		var err error
		n, err = r.LocateMemory(ctx, tenant.Normalize(), id)
		return err
	})
	return n, err
}

// Namespaces returns the namespaces of tenant's org and project that hold
// active memories, with how many (see engram.Locator). EINVALID for a bad
// tenant or limit.
func (e *memories) Namespaces(ctx context.Context, tenant engram.Namespace, limit int) ([]engram.NamespaceCount, error) {
	var out []engram.NamespaceCount
	err := e.store.View(ctx, func(r engram.Reader) error {
		var err error
		out, err = r.Namespaces(ctx, tenant.Normalize(), limit)
		return err
	})
	return out, err
}
