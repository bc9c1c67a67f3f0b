package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/storeutil"
)

const resourceCols = `org, project, user_id, agent, session, id, name, mime_type, source, size, sha256, memories, created_at`

func scanResource(sc scanner) (engram.Resource, error) {
	var r engram.Resource
	var created int64
	err := sc.Scan(&r.Namespace.Org, &r.Namespace.Project, &r.Namespace.User, &r.Namespace.Agent, &r.Namespace.Session,
		&r.ID, &r.Name, &r.MIMEType, &r.Source, &r.Size, &r.SHA256, &r.Memories, &created)
	r.CreatedAt = fromMicros(created)
	return r, err
}

// GetResource returns a completed resource in s, or ENOTFOUND.
func (t *resourceTx) GetResource(ctx context.Context, s engram.Scope, id string) (*engram.Resource, error) {
	none := engram.Errorf(engram.ENOTFOUND, "resource %s not found", id)
	w, args := scopeWhere("", s)
	r, err := scanResource(t.queryRow(ctx, "SELECT "+resourceCols+" FROM resources WHERE "+w+" AND id = ? AND complete = 1",
		append(args, id)...))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, none
	} else if err != nil {
		return nil, mapErr(ctx, "get resource", err)
	}
	return &r, nil
}

// ListResources returns the completed resources in s, newest first.
func (t *resourceTx) ListResources(ctx context.Context, s engram.Scope, f engram.ResourceFilter) ([]engram.Resource, string, error) {
	limit := f.Limit // made by storecheck.ResourceLimit in front of the store
	w, args := scopeWhere("", s)
	if f.Cursor != "" {
		w += " AND id < ?"
		args = append(args, f.Cursor)
	}
	out, err := collect(ctx, t.base, "list resources", "SELECT "+resourceCols+" FROM resources WHERE "+w+" AND complete = 1 ORDER BY id DESC LIMIT ?", append(args, limit+1), scanResource)
	return storeutil.ResourcePage(out, limit, err)
}

// ResourceChunk returns chunk seq of a resource of the tenant, or ENOTFOUND.
func (t *resourceTx) ResourceChunk(ctx context.Context, tenant engram.Namespace, id string, seq int) ([]byte, error) {
	var data []byte
	err := t.queryRow(ctx, `SELECT data FROM resource_chunks WHERE org = ? AND project = ? AND resource_id = ? AND seq = ?`,
		tenant.Org, tenant.Project, id, seq).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, engram.Errorf(engram.ENOTFOUND, "resource %s has no chunk %d", id, seq)
	}
	return data, mapErr(ctx, "read resource chunk", err)
}

// ResourceBytes returns the content bytes the tenant stores.
func (t *resourceTx) ResourceBytes(ctx context.Context, tenant engram.Namespace) (int64, error) {
	var n int64
	err := t.queryRow(ctx, `SELECT coalesce(sum(size), 0) FROM resources WHERE org = ? AND project = ?`,
		tenant.Org, tenant.Project).Scan(&n)
	return n, mapErr(ctx, "sum resource bytes", err)
}

// InsertResource stores the metadata of a resource being uploaded.
func (t *resourceTx) InsertResource(ctx context.Context, r *engram.Resource) error {
	if err := t.writable(); err != nil {
		return err
	}
	n := r.Namespace
	_, err := t.exec(ctx, "INSERT INTO resources ("+resourceCols+") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, '', 0, ?)",
		n.Org, n.Project, n.User, n.Agent, n.Session, r.ID, r.Name, r.MIMEType, r.Source, micros(r.CreatedAt))
	if isConstraint(err) {
		return engram.Errorf(engram.ECONFLICT, "resource %s already exists", r.ID)
	}
	return mapErr(ctx, "insert resource", err)
}

// PutResourceChunk stores one chunk and grows the resource's size.
func (t *resourceTx) PutResourceChunk(ctx context.Context, tenant engram.Namespace, id string, seq int, data []byte) error {
	if err := t.writable(); err != nil {
		return err
	}
	if len(data) == 0 || len(data) > engram.ResourceChunkBytes {
		return engram.Errorf(engram.EINVALID, "resource chunk: %d bytes, want 1 to %d", len(data), engram.ResourceChunkBytes)
	}
	res, err := t.exec(ctx, `UPDATE resources SET size = size + ? WHERE org = ? AND project = ? AND id = ?`,
		len(data), tenant.Org, tenant.Project, id)
	if err != nil {
		return mapErr(ctx, "put resource chunk", err)
	}
	if n, err := affected(res); err != nil {
		return mapErr(ctx, "put resource chunk", err)
	} else if n == 0 {
		return engram.Errorf(engram.ENOTFOUND, "resource %s not found", id)
	}
	_, err = t.exec(ctx, `INSERT INTO resource_chunks (org, project, resource_id, seq, data) VALUES (?, ?, ?, ?, ?)`,
		tenant.Org, tenant.Project, id, seq, data)
	if isConstraint(err) {
		return engram.Errorf(engram.ECONFLICT, "resource %s already has chunk %d", id, seq)
	}
	return mapErr(ctx, "put resource chunk", err)
}

// CompleteResource makes an uploaded resource visible.
func (t *resourceTx) CompleteResource(ctx context.Context, tenant engram.Namespace, id, sha256 string, memories int) error {
	if err := t.writable(); err != nil {
		return err
	}
	res, err := t.exec(ctx, `UPDATE resources SET sha256 = ?, memories = ?, complete = 1 WHERE org = ? AND project = ? AND id = ?`,
		sha256, memories, tenant.Org, tenant.Project, id)
	if err != nil {
		return mapErr(ctx, "complete resource", err)
	}
	if n, err := affected(res); err != nil {
		return mapErr(ctx, "complete resource", err)
	} else if n == 0 {
		return engram.Errorf(engram.ENOTFOUND, "resource %s not found", id)
	}
	return nil
}

// PurgeResource removes a resource and its chunks.
func (t *resourceTx) PurgeResource(ctx context.Context, tenant engram.Namespace, id string) error {
	if err := t.writable(); err != nil {
		return err
	}
	if _, err := t.exec(ctx, `DELETE FROM resource_chunks WHERE org = ? AND project = ? AND resource_id = ?`,
		tenant.Org, tenant.Project, id); err != nil {
		return mapErr(ctx, "purge resource", err)
	}
	_, err := t.exec(ctx, `DELETE FROM resources WHERE org = ? AND project = ? AND id = ?`, tenant.Org, tenant.Project, id)
	return mapErr(ctx, "purge resource", err)
}

// purgeScopeResources removes the resources of s (a write scope) with
// their chunks and says how many.
func (t *base) purgeScopeResources(ctx context.Context, s engram.Scope) (int, error) {
	w, args := scopeWhere("r.", s)
	if _, err := t.exec(ctx, `DELETE FROM resource_chunks WHERE org = ? AND project = ? AND resource_id IN
		(SELECT r.id FROM resources r WHERE `+w+`)`, append([]any{s.Org, s.Project}, args...)...); err != nil {
		return 0, mapErr(ctx, "purge scope", err)
	}
	w, args = scopeWhere("", s)
	res, err := t.exec(ctx, "DELETE FROM resources WHERE "+w, args...)
	if err != nil {
		return 0, mapErr(ctx, "purge scope", err)
	}
	n, err := affected(res)
	return n, mapErr(ctx, "purge scope", err)
}

// AbandonedUploads returns uploads of any tenant started before before and
// not completed. It reads the whole table: uploads in progress are few.
func (t *resourceTx) AbandonedUploads(ctx context.Context, before time.Time, limit int) ([]engram.Resource, error) {
	return collect(ctx, t.base, "abandoned uploads", "SELECT "+resourceCols+" FROM resources WHERE complete = 0 AND created_at < ? ORDER BY created_at LIMIT ?", []any{micros(before), limit}, scanResource)
}

// DumpResources implements engram.ResourceDumper; fn's error is returned
// as is.
func (t *resourceTx) DumpResources(ctx context.Context, fn func(engram.Resource) error) error {
	rows, err := t.query(ctx, "SELECT "+resourceCols+" FROM resources WHERE complete = 1 ORDER BY org, project, id")
	if err != nil {
		return mapErr(ctx, "dump resources", err)
	}
	defer rows.Close()
	for rows.Next() {
		r, err := scanResource(rows)
		if err != nil {
			return mapErr(ctx, "dump resources", err)
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	return mapErr(ctx, "dump resources", rows.Err())
}

// FindResource implements engram.ResourceFinder.
func (t *resourceTx) FindResource(ctx context.Context, n engram.Namespace, sha256 string, size int64) (*engram.Resource, error) {
	r, err := scanResource(t.queryRow(ctx, "SELECT "+resourceCols+` FROM resources WHERE org = ? AND project = ? AND sha256 = ?
		AND user_id = ? AND agent = ? AND session = ? AND size = ? AND complete = 1 ORDER BY created_at, id LIMIT 1`,
		n.Org, n.Project, sha256, n.User, n.Agent, n.Session, size))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, engram.Errorf(engram.ENOTFOUND, "no resource with SHA-256 %s", sha256)
	} else if err != nil {
		return nil, mapErr(ctx, "find resource", err)
	}
	return &r, nil
}
