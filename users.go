package engram

import "context"

// UserLister is the capability of a Reader that names the users of a
// tenant holding records, for the sweeps an administrator runs over a
// whole tenant (engram scan without --user). It returns names, never
// content.
type UserLister interface {
	// Users returns the users of tenant's org and project (its other
	// fields are ignored) that hold at least one episode or memory, in any
	// status, ordered by the bytes of their names, those after the name
	// after only, at most limit of them (ClampLimit rules). Records of no
	// user name no user and are not listed. EINVALID for a bad tenant or
	// limit.
	Users(ctx context.Context, tenant Namespace, after string, limit int) ([]string, error)
}
