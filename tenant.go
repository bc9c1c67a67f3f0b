package engram

import "context"

// TenantLister lists the tenants of a store. Unlike every other read it
// crosses tenants, so only an administrator's listing may call it (the
// dashboard of a server without keys, or an admin key for its own tenant),
// and it returns names and counts, never content.
type TenantLister interface {
	// Tenants returns the tenants (org and project; the other fields of
	// each namespace empty) that hold at least one active memory, with
	// how many and the latest update among them, ordered by org and
	// project, at most limit of them (ClampLimit rules). A within with an
	// org keeps that org's tenants only, and with a project too that one
	// tenant. EINVALID for a bad limit or within.
	Tenants(ctx context.Context, within Namespace, limit int) ([]NamespaceCount, error)
}
