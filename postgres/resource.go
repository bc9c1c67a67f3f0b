package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/storeutil"
)

// resourceTx is the resource capability of a transaction: stored files
// and their chunks (engram.ResourceReader, ResourceWriter, ResourceFinder,
// ResourceDumper and UploadSweeper).
type resourceTx struct{ *base }

const resourceCols = `r.org, r.project, r.user_id, r.agent, r.session, r.id, r.name, r.mime_type, r.source, r.size, r.sha256, r.memories, r.created_at`

func scanResource(sc pgx.Row) (engram.Resource, error) {
	var r engram.Resource
	err := sc.Scan(&r.Namespace.Org, &r.Namespace.Project, &r.Namespace.User, &r.Namespace.Agent, &r.Namespace.Session,
		&r.ID, &r.Name, &r.MIMEType, &r.Source, &r.Size, &r.SHA256, &r.Memories, &r.CreatedAt)
	r.CreatedAt = r.CreatedAt.UTC()
	return r, err
}

// GetResource returns a completed resource in s, or ENOTFOUND.
func (t *resourceTx) GetResource(ctx context.Context, s engram.Scope, id string) (*engram.Resource, error) {
	none := engram.Errorf(engram.ENOTFOUND, "resource %s not found", id)
	if storable("scope", s.Tenant()+s.User+s.Agent+s.Session) != nil {
		return nil, none
	}
	q := &query{}
	q.scope("r.", s)
	q.where("r.id = " + q.arg(id) + " AND r.complete")
	r, err := scanResource(t.ptx.QueryRow(ctx, "SELECT "+resourceCols+" FROM resources r WHERE "+q.String(), q.args...))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, none
	} else if err != nil {
		return nil, t.mapErr(ctx, "get resource", err)
	}
	return &r, nil
}

// ListResources returns the completed resources in s, newest first.
func (t *resourceTx) ListResources(ctx context.Context, s engram.Scope, f engram.ResourceFilter) ([]engram.Resource, string, error) {
	limit := f.Limit // made by storecheck.ResourceLimit in front of the store
	q := &query{}
	q.scope("r.", s)
	q.where("r.complete")
	if f.Cursor != "" {
		q.where("r.id < " + q.arg(f.Cursor))
	}
	out, err := collect(ctx, t.base, "list resources", "SELECT "+resourceCols+" FROM resources r WHERE "+q.String()+" ORDER BY r.id DESC LIMIT "+q.arg(limit+1), q.args, scanResource)
	return storeutil.ResourcePage(out, limit, err)
}

// ResourceChunk returns chunk seq of a resource of the tenant, or ENOTFOUND.
func (t *resourceTx) ResourceChunk(ctx context.Context, tenant engram.Namespace, id string, seq int) ([]byte, error) {
	var data []byte
	err := t.ptx.QueryRow(ctx, `SELECT data FROM resource_chunks WHERE tenant = $1 AND resource_id = $2 AND seq = $3`,
		tenant.Tenant(), id, seq).Scan(&data)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, engram.Errorf(engram.ENOTFOUND, "resource %s has no chunk %d", id, seq)
	}
	return data, t.mapErr(ctx, "read resource chunk", err)
}

// ResourceBytes returns the content bytes the tenant stores.
func (t *resourceTx) ResourceBytes(ctx context.Context, tenant engram.Namespace) (int64, error) {
	var n int64
	err := t.ptx.QueryRow(ctx, `SELECT coalesce(sum(size), 0)::bigint FROM resources WHERE tenant = $1`, tenant.Tenant()).Scan(&n)
	return n, t.mapErr(ctx, "sum resource bytes", err)
}

// InsertResource stores the metadata of a resource being uploaded.
func (t *resourceTx) InsertResource(ctx context.Context, r *engram.Resource) error {
	if err := t.writable(); err != nil {
		return err
	}
	for _, f := range []struct{ name, v string }{{"name", r.Name}, {"mime_type", r.MIMEType}, {"source", r.Source}} {
		if err := storable("resource: "+f.name, f.v); err != nil {
			return err
		}
	}
	n := r.Namespace
	tag, err := t.ptx.Exec(ctx, `INSERT INTO resources (tenant, org, project, user_id, agent, session, id, name, mime_type, source, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT DO NOTHING`,
		n.Tenant(), n.Org, n.Project, n.User, n.Agent, n.Session, r.ID, r.Name, r.MIMEType, r.Source, r.CreatedAt)
	if err != nil {
		return t.mapErr(ctx, "insert resource", err)
	}
	if tag.RowsAffected() == 0 {
		return engram.Errorf(engram.ECONFLICT, "resource %s already exists", r.ID)
	}
	return nil
}

// PutResourceChunk stores one chunk and grows the resource's size.
func (t *resourceTx) PutResourceChunk(ctx context.Context, tenant engram.Namespace, id string, seq int, data []byte) error {
	if err := t.writable(); err != nil {
		return err
	}
	if len(data) == 0 || len(data) > engram.ResourceChunkBytes {
		return engram.Errorf(engram.EINVALID, "resource chunk: %d bytes, want 1 to %d", len(data), engram.ResourceChunkBytes)
	}
	tag, err := t.ptx.Exec(ctx, `UPDATE resources SET size = size + $1 WHERE tenant = $2 AND id = $3`, len(data), tenant.Tenant(), id)
	if err != nil {
		return t.mapErr(ctx, "put resource chunk", err)
	}
	if tag.RowsAffected() == 0 {
		return engram.Errorf(engram.ENOTFOUND, "resource %s not found", id)
	}
	tag, err = t.ptx.Exec(ctx, `INSERT INTO resource_chunks (tenant, resource_id, seq, data) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`,
		tenant.Tenant(), id, seq, data)
	if err != nil {
		return t.mapErr(ctx, "put resource chunk", err)
	}
	if tag.RowsAffected() == 0 {
		return engram.Errorf(engram.ECONFLICT, "resource %s already has chunk %d", id, seq)
	}
	return nil
}

// CompleteResource makes an uploaded resource visible.
func (t *resourceTx) CompleteResource(ctx context.Context, tenant engram.Namespace, id, sha256 string, memories int) error {
	if err := t.writable(); err != nil {
		return err
	}
	tag, err := t.ptx.Exec(ctx, `UPDATE resources SET sha256 = $1, memories = $2, complete = true WHERE tenant = $3 AND id = $4`,
		sha256, memories, tenant.Tenant(), id)
	if err != nil {
		return t.mapErr(ctx, "complete resource", err)
	}
	if tag.RowsAffected() == 0 {
		return engram.Errorf(engram.ENOTFOUND, "resource %s not found", id)
	}
	return nil
}

// PurgeResource removes a resource and its chunks.
func (t *resourceTx) PurgeResource(ctx context.Context, tenant engram.Namespace, id string) error {
	if err := t.writable(); err != nil {
		return err
	}
	if _, err := t.ptx.Exec(ctx, `DELETE FROM resource_chunks WHERE tenant = $1 AND resource_id = $2`, tenant.Tenant(), id); err != nil {
		return t.mapErr(ctx, "purge resource", err)
	}
	_, err := t.ptx.Exec(ctx, `DELETE FROM resources WHERE tenant = $1 AND id = $2`, tenant.Tenant(), id)
	return t.mapErr(ctx, "purge resource", err)
}

// AbandonedUploads returns uploads of any tenant started before before and
// not completed. It reads the whole table: uploads in progress are few.
func (t *resourceTx) AbandonedUploads(ctx context.Context, before time.Time, limit int) ([]engram.Resource, error) {
	return collect(ctx, t.base, "abandoned uploads", "SELECT "+resourceCols+" FROM resources r WHERE NOT r.complete AND r.created_at < $1 ORDER BY r.created_at LIMIT $2", []any{before, limit}, scanResource)
}

// DumpResources implements engram.ResourceDumper; fn's error is returned
// as is.
func (t *resourceTx) DumpResources(ctx context.Context, fn func(engram.Resource) error) error {
	rows, err := t.ptx.Query(ctx, "SELECT "+resourceCols+` FROM resources r WHERE r.complete ORDER BY r.org COLLATE "C", r.project COLLATE "C", r.id COLLATE "C"`)
	if err != nil {
		return t.mapErr(ctx, "dump resources", err)
	}
	defer rows.Close()
	for rows.Next() {
		r, err := scanResource(rows)
		if err != nil {
			return t.mapErr(ctx, "dump resources", err)
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	return t.mapErr(ctx, "dump resources", rows.Err())
}

// FindResource implements engram.ResourceFinder.
func (t *resourceTx) FindResource(ctx context.Context, n engram.Namespace, sha256 string, size int64) (*engram.Resource, error) {
	none := engram.Errorf(engram.ENOTFOUND, "no resource with SHA-256 %s", sha256)
	if storable("namespace", n.Tenant()+n.User+n.Agent+n.Session+sha256) != nil {
		return nil, none
	}
	r, err := scanResource(t.ptx.QueryRow(ctx, "SELECT "+resourceCols+` FROM resources r WHERE r.tenant = $1 AND r.sha256 = $2
		AND r.user_id = $3 AND r.agent = $4 AND r.session = $5 AND r.size = $6 AND r.complete ORDER BY r.created_at, r.id LIMIT 1`,
		n.Tenant(), sha256, n.User, n.Agent, n.Session, size))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, none
	} else if err != nil {
		return nil, t.mapErr(ctx, "find resource", err)
	}
	return &r, nil
}
