package sqlite

import (
	"context"

	"github.com/engramhq/engram"
)

// Mentions implements storecheck.GraphLookups.
func (t *graphTx) Mentions(ctx context.Context, s engram.Scope, col string, ids []string, limit int) ([]engram.Mention, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	j, err := stringsJSON(ids)
	if err != nil {
		return nil, err
	}
	q, args := mentionsSQL(s, col, j, limit)
	var out []engram.Mention
	err = t.each(ctx, "read mentions", q, args, func(sc scanner) error {
		var m engram.Mention
		var at int64
		err := sc.Scan(&m.EntityID, &m.MemoryID, &m.Namespace.Org, &m.Namespace.Project, &m.Namespace.User, &at)
		m.At = fromMicros(at)
		out = append(out, m)
		return err
	})
	return out, err
}

func mentionsSQL(s engram.Scope, col string, idsJSON any, limit int) (string, []any) {
	w, args := graphWhere("m.", s)
	// The ids drive the plan (see entitiesByKeySQL). By memory, the index
	// must be named: SQLite otherwise judges the lookups from a secondary
	// index of a WITHOUT ROWID table dearer than scanning the tenant.
	hint := ""
	if col == "memory_id" {
		hint = " INDEXED BY entity_mentions_by_memory"
	}
	q := "SELECT m.entity_id, m.memory_id, m.org, m.project, m.user_id, m.at FROM json_each(?) AS j CROSS JOIN entity_mentions m" + hint + " WHERE " + w +
		" AND m." + col + " = j.value ORDER BY m.at DESC, m.memory_id DESC, m.entity_id"
	args = append([]any{idsJSON}, args...)
	if limit > 0 {
		q += " LIMIT ?"
		args = append(args, limit)
	}
	return q, args
}

// PutMention implements engram.GraphWriter.
func (t *graphTx) PutMention(ctx context.Context, m engram.Mention) error {
	if err := t.writable(); err != nil {
		return err
	}
	n := m.Namespace
	res, err := t.exec(ctx, putMentionSQL,
		n.Org, n.Project, n.User, m.EntityID, m.MemoryID, micros(m.At))
	if err != nil {
		return mapErr(ctx, "put mention", err)
	}
	if k, err := affected(res); err != nil {
		return mapErr(ctx, "put mention", err)
	} else if k == 0 {
		return engram.Errorf(engram.ENOTFOUND, "entity %s or memory %s not found", m.EntityID, m.MemoryID)
	}
	return nil
}

// DeleteMention implements engram.GraphWriter.
func (t *graphTx) DeleteMention(ctx context.Context, n engram.Namespace, entityID, memoryID string) error {
	if err := t.writable(); err != nil {
		return err
	}
	_, err := t.exec(ctx, deleteMentionSQL,
		n.Org, n.Project, n.User, entityID, memoryID)
	return mapErr(ctx, "delete mention", err)
}
