package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/storeutil"
	"github.com/jackc/pgx/v5"
)

// vectorTx is the embeddings capability of a transaction
// (engram.VectorReader and VectorWriter) with the change log
// (engram.ChangeLog) that tells caches of them what changed.
type vectorTx struct{ *base }

// checkEmbedder adds to storeutil.CheckEmbedder the refusal of a NUL
// character, which a text column cannot hold (EINVALID).
func checkEmbedder(name string) error {
	if err := storeutil.CheckEmbedder(name); err != nil {
		return err
	}
	return storable("embedder name", name)
}

// vectorPage is how many memories one statement of ScanVectors reads, so
// that each statement ends well within the statement timeout however many
// vectors a scope holds: one statement over a million memories' vectors
// ran past the default 30 s.
const vectorPage = 10_000

// ScanVectors calls fn for every vector made by embedder that belongs to an
// active memory in s, in no particular order, reading rows as fn consumes
// them. It reads the memories a page at a time in the order of their ids,
// all in the caller's transaction, so the scan sees one snapshot. fn's
// error stops the scan and is returned as is; EINVALID for a bad scope or
// embedder name. fn must not use the Reader while the scan runs.
func (t *vectorTx) ScanVectors(ctx context.Context, s engram.Scope, embedder string, fn func(engram.VectorRecord) error) error {
	after := ""
	for {
		last, n, err := t.scanVectorPage(ctx, s, embedder, after, fn)
		if err != nil || n < t.db.vectorPage {
			return err
		}
		after = last
	}
}

// scanVectorPage calls fn for the vectors of the first db.vectorPage active
// memories of s whose ids sort after `after` ("": from the first), and
// returns the greatest id among those memories and how many there were,
// with or without vectors.
func (t *vectorTx) scanVectorPage(ctx context.Context, s engram.Scope, embedder, after string, fn func(engram.VectorRecord) error) (string, int, error) {
	sql, args := vectorPageQuery(s, embedder, after, t.db.vectorPage)
	last, seen := "", map[string]struct{}{}
	err := t.each(ctx, "scan vectors", sql, args, func(row pgx.Row) error {
		r, ok, err := scanPageVector(row)
		if err != nil {
			return err
		}
		seen[r.MemoryID] = struct{}{}
		last = max(last, r.MemoryID)
		if !ok {
			return nil
		}
		if err := fn(r); err != nil {
			return storeutil.FnError{Err: err}
		}
		return nil
	})
	return last, len(seen), err
}

// vectorPageQuery returns the statement of scanVectorPage and its
// arguments. A memory without vectors still comes back, once, with a NULL
// field, so a page is counted by its memories, not by its vectors. The
// vectors are read by key for each memory of the page (a lateral
// subquery, kept from being flattened by OFFSET 0): joined as one set,
// PostgreSQL plans a hash join over the whole vector table once a page is
// large, and with 1M memories a page ran past the statement timeout.
func vectorPageQuery(s engram.Scope, embedder, after string, page int) (string, []any) {
	q := &query{}
	q.scope("m.", s)
	q.where("m.status = " + q.arg(string(engram.StatusActive)))
	if after != "" {
		q.where("m.id > " + q.arg(after))
	}
	return "SELECT p.id, p.org, p.project, p.user_id, p.agent, p.session, v.field, v.dim, v.vec FROM " +
		"(SELECT m.tenant, m.id, m.org, m.project, m.user_id, m.agent, m.session FROM memories m WHERE " +
		q.String() + " ORDER BY m.id LIMIT " + q.arg(page) + ") p " +
		"LEFT JOIN LATERAL (SELECT v.field, v.dim, v.vec FROM memory_vectors v WHERE v.tenant = p.tenant AND v.user_id = p.user_id AND v.memory_id = p.id AND v.embedder = " +
		q.arg(embedder) + " OFFSET 0) v ON true", q.args
}

// scanPageVector reads a row of scanVectorPage: the record, and false
// when its memory has no vector.
func scanPageVector(row pgx.Row) (engram.VectorRecord, bool, error) {
	var (
		r     engram.VectorRecord
		field *string
		dim   *int
		raw   []byte
	)
	n := &r.Namespace
	if err := row.Scan(&r.MemoryID, &n.Org, &n.Project, &n.User, &n.Agent, &n.Session, &field, &dim, &raw); err != nil {
		return r, false, err
	}
	if field == nil || dim == nil {
		return r, false, nil
	}
	r.Field = *field
	var err error
	if r.Vec, err = storeutil.DecodeVec(raw, *dim); err != nil {
		return r, false, fmt.Errorf("memory %s %s vector: %w", r.MemoryID, r.Field, err)
	}
	return r, true, nil
}

// GetVectors returns the vectors made by embedder of the active memories
// of n's tenant (any user, agent or session) among ids, in no particular
// order; ids are valid and given once (storecheck drops the others in
// front of the store), and unknown ones are skipped.
func (t *vectorTx) GetVectors(ctx context.Context, n engram.Namespace, embedder string, want []string) ([]engram.VectorRecord, error) {
	if len(want) == 0 {
		return nil, nil
	}
	var out []engram.VectorRecord
	err := t.each(ctx, "get vectors", getVectorsSQL,
		[]any{n.Tenant(), want, string(engram.StatusActive), embedder, n.User}, func(row pgx.Row) error {
			r, err := scanVector(row)
			out = append(out, r)
			return err
		})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// getVectorsSQL reads the vectors of embedder $4 of the memories of tenant
// $1 and user $5 among the ids $2 in status $3. Each id is looked up by primary key in
// both tables, whatever the statistics say: OFFSET 0 keeps the planner from
// turning the lookups into a join that reads every vector of a table it
// believes is small.
const getVectorsSQL = `SELECT m.id, m.org, m.project, m.user_id, m.agent, m.session, v.field, v.dim, v.vec
		FROM unnest($2::text[]) AS u(id)
		CROSS JOIN LATERAL (SELECT m.id, m.org, m.project, m.user_id, m.agent, m.session FROM memories m
			WHERE m.tenant = $1 AND m.user_id = $5 AND m.id = u.id AND m.status = $3 OFFSET 0) m
		CROSS JOIN LATERAL (SELECT v.field, v.dim, v.vec FROM memory_vectors v
			WHERE v.tenant = $1 AND v.user_id = $5 AND v.memory_id = u.id AND v.embedder = $4 OFFSET 0) v`

// scanVector reads a row of getVectorsSQL, which always has a vector.
func scanVector(row pgx.Row) (engram.VectorRecord, error) {
	r, _, err := scanPageVector(row)
	return r, err
}

// PutVectors replaces the vectors that embedder made of the memory with the
// tenant and user of n and memoryID by vecs, one per field (no vecs removes them).
// Everything is checked before anything is written: EINVALID for a bad
// namespace, id or embedder name, a field other than abstraction or value
// or given twice, an empty vector, vectors of different lengths, or a value
// that is NaN or infinite; ENOTFOUND if the user has no such memory.
func (t *vectorTx) PutVectors(ctx context.Context, n engram.Namespace, memoryID, embedder string, vecs []engram.FieldVector) error {
	if err := t.writable(); err != nil {
		return err
	}
	fields := make([]string, len(vecs))
	dims := make([]int32, len(vecs))
	blobs := make([][]byte, len(vecs))
	for i, fv := range vecs {
		fields[i], dims[i], blobs[i] = fv.Field, int32(len(fv.Vec)), storeutil.EncodeVec(fv.Vec)
	}
	// One statement: find (and share-lock) the memory, drop this embedder's
	// vectors of fields not given, upsert the given ones. With no memory,
	// m is empty and nothing is written.
	var user string
	err := t.ptx.QueryRow(ctx, `WITH m AS (
			SELECT user_id FROM memories WHERE tenant = $1 AND user_id = $7 AND id = $2 FOR KEY SHARE),
		d AS (
			DELETE FROM memory_vectors v WHERE v.tenant = $1 AND v.user_id = $7 AND v.memory_id = $2 AND v.embedder = $3
			AND v.field <> ALL($4::text[]) AND EXISTS (SELECT 1 FROM m)),
		i AS (
			INSERT INTO memory_vectors (tenant, user_id, memory_id, embedder, field, dim, vec)
			SELECT $1, $7, $2, $3, x.field, x.dim, x.vec
			FROM m, unnest($4::text[], $5::int[], $6::bytea[]) AS x(field, dim, vec)
			ON CONFLICT (tenant, user_id, memory_id, embedder, field) DO UPDATE SET dim = excluded.dim, vec = excluded.vec)
		SELECT user_id FROM m`, n.Tenant(), memoryID, embedder, fields, dims, blobs, n.User).Scan(&user)
	if errors.Is(err, pgx.ErrNoRows) {
		return engram.Errorf(engram.ENOTFOUND, "memory %s not found", memoryID)
	} else if err != nil {
		return t.mapErr(ctx, "put vectors", err)
	}
	t.changed(n.Tenant(), user, memoryID)
	return nil
}

// DeleteVectorsExcept deletes every vector, in every tenant, not made by
// embedder and returns how many it deleted; EINVALID for a bad embedder
// name (an empty one would delete them all).
func (t *vectorTx) DeleteVectorsExcept(ctx context.Context, embedder string) (int, error) {
	if err := t.writable(); err != nil {
		return 0, err
	}
	tag, err := t.ptx.Exec(ctx, "DELETE FROM memory_vectors WHERE embedder <> $1", embedder)
	if err != nil {
		return 0, t.mapErr(ctx, "delete vectors", err)
	}
	return int(tag.RowsAffected()), nil
}
