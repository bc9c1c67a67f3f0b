package storecheck

import (
	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/storeutil"
)

// Options are what a backend adds to the contract's checks.
type Options struct {
	// Short shortens an id echoed in an error message the way the backend
	// does; nil keeps it as given.
	Short func(string) string
	// Embedder checks an embedder name; nil is storeutil.CheckEmbedder. A
	// backend whose columns hold less gives a function that calls that one
	// first and then adds its own refusals.
	Embedder func(string) error
	// MetaKey checks the key of a meta value; nil is storeutil.CheckMetaKey,
	// and a backend's own is made as Embedder's is.
	MetaKey func(string) error
}

// checks is Options with its defaults filled in, shared by the wrappers
// of one transaction.
type checks struct {
	short    func(string) string
	embedder func(string) error
	metaKey  func(string) error
}

func (o Options) checks() *checks {
	c := &checks{short: o.Short, embedder: o.Embedder, metaKey: o.MetaKey}
	if c.short == nil {
		c.short = func(id string) string { return id }
	}
	if c.embedder == nil {
		c.embedder = storeutil.CheckEmbedder
	}
	if c.metaKey == nil {
		c.metaKey = storeutil.CheckMetaKey
	}
	return c
}

// id returns EINVALID naming what unless id is a valid id.
func (c *checks) id(what, id string) error {
	if !engram.ValidID(id) {
		return storeutil.InvalidID(what, id, c.short)
	}
	return nil
}

// ids returns EINVALID for the first malformed id among ids, naming what
// they are.
func (c *checks) ids(what string, ids ...string) error {
	for _, id := range ids {
		if err := c.id(what, id); err != nil {
			return err
		}
	}
	return nil
}

// scopeID checks a scope and then an id naming what.
func (c *checks) scopeID(s engram.Scope, what, id string) error {
	if err := s.Validate(); err != nil {
		return err
	}
	return c.id(what, id)
}

// namespaceID checks a namespace and then an id naming what.
func (c *checks) namespaceID(n engram.Namespace, what, id string) error {
	if err := n.Validate(); err != nil {
		return err
	}
	return c.id(what, id)
}

// scopeIDs checks a scope and then ids naming what.
func (c *checks) scopeIDs(s engram.Scope, what string, ids []string) error {
	if err := s.Validate(); err != nil {
		return err
	}
	return c.ids(what, ids...)
}

// tenantOf is the org and project of n: the namespace of a read that spans
// a tenant's users.
func tenantOf(n engram.Namespace) engram.Namespace {
	return engram.Namespace{Org: n.Org, Project: n.Project}
}

// EntityLimit returns the page size an entity listing's limit n asks for:
// engram.DefaultEntityLimit for 0; EINVALID outside 0..MaxEntityLimit.
func EntityLimit(n int) (int, error) {
	switch {
	case n == 0:
		return engram.DefaultEntityLimit, nil
	case n < 0 || n > engram.MaxEntityLimit:
		return 0, engram.Errorf(engram.EINVALID, "limit %d is outside 1..%d", n, engram.MaxEntityLimit)
	}
	return n, nil
}

// ResourceLimit returns the page size of f: engram.DefaultLimit for 0;
// EINVALID for a cursor that is not an id or a limit outside 0..MaxLimit.
func ResourceLimit(f engram.ResourceFilter) (int, error) {
	if f.Cursor != "" && !engram.ValidID(f.Cursor) {
		return 0, engram.Errorf(engram.EINVALID, "cursor %q is not a resource cursor", f.Cursor)
	}
	switch {
	case f.Limit < 0 || f.Limit > engram.MaxLimit:
		return 0, engram.Errorf(engram.EINVALID, "limit %d is not between 1 and %d", f.Limit, engram.MaxLimit)
	case f.Limit == 0:
		return engram.DefaultLimit, nil
	}
	return f.Limit, nil
}
