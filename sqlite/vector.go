package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/storeutil"
)

// ScanVectors calls fn for every vector made by embedder that belongs to an
// active memory in s, in no particular order, reading rows as fn consumes
// them. fn's error stops the scan and is returned as is; EINVALID for a bad
// scope or embedder name.
func (t *vectorTx) ScanVectors(ctx context.Context, s engram.Scope, embedder string, fn func(engram.VectorRecord) error) error {
	q, args := scanVectorsSQL(s)
	return t.vectorRows(ctx, "scan vectors", q, append(args, string(engram.StatusActive), embedder), fn)
}

// vectorRows runs a query selecting (id, org, project, user_id, agent,
// session, field, dim, vec) and calls fn for every decoded row.
func (t *vectorTx) vectorRows(ctx context.Context, op, q string, args []any, fn func(engram.VectorRecord) error) error {
	rows, err := t.query(ctx, q, args...)
	if err != nil {
		return mapErr(ctx, op, err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			r   engram.VectorRecord
			dim int
			// RawBytes points into the driver's row: decoding from it saves
			// copying every blob once more.
			blob sql.RawBytes
		)
		n := &r.Namespace
		if err := rows.Scan(&r.MemoryID, &n.Org, &n.Project, &n.User, &n.Agent, &n.Session, &r.Field, &dim, &blob); err != nil {
			return mapErr(ctx, op, err)
		}
		if r.Vec, err = storeutil.DecodeVec(blob, dim); err != nil {
			return mapErr(ctx, op, fmt.Errorf("memory %s %s vector: %w", r.MemoryID, r.Field, err))
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	return mapErr(ctx, op, rows.Err())
}

// GetVectors implements engram.Reader.
func (t *vectorTx) GetVectors(ctx context.Context, tenant engram.Namespace, embedder string, ids []string) ([]engram.VectorRecord, error) {
	var out []engram.VectorRecord
	collect := func(r engram.VectorRecord) error { out = append(out, r); return nil }
	for i := 0; i < len(ids); i += 500 {
		chunk := ids[i:min(i+500, len(ids))]
		args := []any{tenant.Org, tenant.Project, tenant.User, string(engram.StatusActive), embedder}
		for _, id := range chunk {
			args = append(args, id)
		}
		q := "SELECT m.id, m.org, m.project, m.user_id, m.agent, m.session, v.field, v.dim, v.vec " +
			"FROM memories m CROSS JOIN memory_vectors v " +
			"WHERE m.org = ? AND m.project = ? AND m.user_id = ? AND m.status = ? AND v.org = m.org AND v.project = m.project AND " +
			"v.user_id = m.user_id AND v.memory_id = m.id AND v.embedder = ? AND m.id IN (" + placeholders(len(chunk)) + ")"
		if err := t.vectorRows(ctx, "get vectors", q, args, collect); err != nil {
			return nil, err
		}
	}
	return out, nil
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
	blobs := make([][]byte, len(vecs))
	for i, fv := range vecs {
		blobs[i] = storeutil.EncodeVec(fv.Vec)
	}
	var one int
	err := t.queryRow(ctx, memoryExistsSQL, n.Org, n.Project, n.User, memoryID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return engram.Errorf(engram.ENOTFOUND, "memory %s not found", memoryID)
	} else if err != nil {
		return mapErr(ctx, "put vectors", err)
	}
	if _, err := t.exec(ctx, deleteEmbeddingsSQL, n.Org, n.Project, n.User, memoryID, embedder); err != nil {
		return mapErr(ctx, "put vectors", err)
	}
	for i, fv := range vecs {
		if _, err := t.exec(ctx, insertVectorSQL, n.Org, n.Project, n.User, memoryID, embedder, fv.Field, len(fv.Vec), blobs[i]); err != nil {
			return mapErr(ctx, "put vectors", err)
		}
	}
	return t.logChange(ctx, n, memoryID)
}

// DeleteVectorsExcept deletes every vector, in every tenant, not made by
// embedder and returns how many it deleted; EINVALID for a bad embedder
// name (an empty one would delete them all).
func (t *vectorTx) DeleteVectorsExcept(ctx context.Context, embedder string) (int, error) {
	if err := t.writable(); err != nil {
		return 0, err
	}
	res, err := t.exec(ctx, deleteVectorsExceptSQL, embedder)
	if err != nil {
		return 0, mapErr(ctx, "delete vectors", err)
	}
	n, err := affected(res)
	return n, mapErr(ctx, "delete vectors", err)
}
