package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/storeutil"
)

// GetEpisode returns the episode with id in s; ENOTFOUND if there is none
// in s, EINVALID for a malformed scope or id.
func (t *memoryTx) GetEpisode(ctx context.Context, s engram.Scope, id string) (*engram.Episode, error) {
	q, args := getEpisodeSQL(s)
	e, err := scanEpisode(t.queryRow(ctx, q, append(args, id)...))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, engram.Errorf(engram.ENOTFOUND, "episode %s not found", id)
	} else if err != nil {
		return nil, mapErr(ctx, "get episode", err)
	}
	return &e, nil
}

// GetMemory returns the memory with id in s, in any status; ENOTFOUND if
// there is none in s, EINVALID for a malformed scope or id.
func (t *memoryTx) GetMemory(ctx context.Context, s engram.Scope, id string) (*engram.Memory, error) {
	q, args := getMemorySQL(s)
	m, err := scanMemory(t.queryRow(ctx, q, append(args, id)...))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, engram.Errorf(engram.ENOTFOUND, "memory %s not found", id)
	} else if err != nil {
		return nil, mapErr(ctx, "get memory", err)
	}
	return &m, nil
}

// GetMemories returns the memories among ids that s contains, in any status
// and in no particular order; ids are valid and given once (storecheck
// drops the others in front of the store), and those unknown or outside s
// are skipped.
func (t *memoryTx) GetMemories(ctx context.Context, s engram.Scope, ids []string) ([]engram.Memory, error) {
	want := make([]any, len(ids))
	for i, id := range ids {
		want[i] = id
	}
	var out []engram.Memory
	for len(want) > 0 {
		chunk := want[:min(len(want), getMemoriesChunk)]
		want = want[len(chunk):]
		q, args := getMemoriesSQL(s, len(chunk))
		rows, err := t.query(ctx, q, append(args, chunk...)...)
		if err != nil {
			return nil, mapErr(ctx, "get memories", err)
		}
		for rows.Next() {
			m, err := scanMemory(rows)
			if err != nil {
				rows.Close()
				return nil, mapErr(ctx, "get memories", err)
			}
			out = append(out, m)
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return nil, mapErr(ctx, "get memories", err)
		}
	}
	return storeutil.OwnMemories(s, out), nil
}

// ListEpisodes returns a page of the episodes in s matching f, by
// (occurred_at, id); EINVALID for a bad scope, filter or cursor.
func (t *memoryTx) ListEpisodes(ctx context.Context, s engram.Scope, f engram.EpisodeFilter) ([]engram.Episode, string, error) {
	return storeutil.ListEpisodes(s, f, listEpisodesSQL, func(q string, args []any) ([]engram.Episode, error) {
		return collect(ctx, t.base, "list episodes", q, args, scanEpisode)
	})
}

// listEpisodesSQL is the query of a page of ListEpisodes (a
// storeutil.Statement); EINVALID for a bad filter.
func listEpisodesSQL(s engram.Scope, f *engram.EpisodeFilter, after storeutil.EpisodeAfter, n int) (string, []any, error) {
	w := &where{}
	w.addScope("e.", s)
	if err := episodeFilter(w, f); err != nil {
		return "", nil, err
	}
	if after.ID != "" {
		w.add("(e.occurred_at, e.id) > (?, ?)", after.Micros, after.ID)
	}
	q := "SELECT " + storeutil.EpisodeCols + " FROM episodes e WHERE " + w.String() +
		" ORDER BY e.occurred_at, e.id LIMIT ?"
	return q, append(w.args, n), nil
}

// ListMemories returns a page of the memories in s matching f, newest id
// first; EINVALID for a bad scope, filter or cursor.
func (t *memoryTx) ListMemories(ctx context.Context, s engram.Scope, f engram.MemoryFilter) ([]engram.Memory, string, error) {
	return storeutil.ListMemories(s, f, listMemoriesSQL, func(q string, args []any) ([]engram.Memory, error) {
		return memoryRows(ctx, t.base, "list memories", q, args)
	})
}

// listMemoriesSQL is the query of a page of ListMemories (a
// storeutil.Statement): at most n memories with an id below after (any,
// if after is ""); EINVALID for a bad filter.
func listMemoriesSQL(s engram.Scope, f *engram.MemoryFilter, after string, n int) (string, []any, error) {
	w := &where{}
	w.addScope("m.", s)
	if err := memoryFilter(w, f); err != nil {
		return "", nil, err
	}
	if after != "" {
		w.add("m.id < ?", after)
	}
	q := "SELECT " + storeutil.MemoryCols + " FROM " + w.from() + " WHERE " + w.String() + " ORDER BY m.id DESC LIMIT ?"
	return q, append(w.args, n), nil
}

// SearchText ranks the memories in s matching f by BM25 against query, best
// first, at most limit of them (0 means engram.DefaultLimit). f.Limit and
// f.Cursor are ignored. A query without terms gives no hits and no error;
// EINVALID for a bad scope, filter or limit.
func (t *memoryTx) SearchText(ctx context.Context, s engram.Scope, query string, f engram.MemoryFilter, limit int) ([]engram.TextHit, error) {
	n := limit // clamped in front of the store
	w := &where{}
	w.addScope("m.", s)
	if err := memoryFilter(w, &f); err != nil {
		return nil, err
	}
	match := scopeMatch(s, matchQuery(query))
	if match == "" {
		return nil, nil
	}
	if on, err := t.FullTextIndexed(ctx); err != nil {
		return nil, err
	} else if !on {
		return nil, engram.Errorf(engram.EUNAVAILABLE, "the store's full-text index is off (engram fulltext on builds it)")
	}
	q := "SELECT " + storeutil.MemoryCols + ", " + bm25Expr + " AS r FROM memories_fts " +
		"JOIN memories m ON m.rid = memories_fts.rowid " +
		"WHERE memories_fts MATCH ? AND " + w.String() + " ORDER BY r, m.id DESC LIMIT ?"
	args := make([]any, 0, len(w.args)+2)
	args = append(append(append(args, match), w.args...), n)
	rows, err := t.query(ctx, q, args...)
	if err != nil {
		return nil, mapErr(ctx, "search", err)
	}
	defer rows.Close()
	var hits []engram.TextHit
	for rows.Next() {
		var rank float64
		m, err := scanMemory(rows, &rank)
		if err != nil {
			return nil, mapErr(ctx, "search", err)
		}
		hits = append(hits, engram.TextHit{Memory: m, Score: -rank})
	}
	if err := rows.Err(); err != nil {
		return nil, mapErr(ctx, "search", err)
	}
	return hits, nil
}

// Versions returns the history of memory id in s, oldest first; ENOTFOUND
// if s holds neither the memory nor any of its versions.
func (t *memoryTx) Versions(ctx context.Context, s engram.Scope, id string) ([]engram.Version, error) {
	q, args := versionsSQL(s)
	out, err := collect(ctx, t.base, "versions", q, append(args, id), scanVersion)
	if err != nil {
		return nil, err
	}
	out = storeutil.OwnVersions(s, out)
	if len(out) == 0 {
		if _, err := t.GetMemory(ctx, s, id); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ScanMemories returns up to limit memories of every tenant, in any status,
// ordered by (org, project, user, id) and strictly after the key after; the zero
// key starts at the beginning. Strings compare byte by byte. It is for
// maintenance only: it crosses tenants. EINVALID if limit is not positive.
func (t *memoryTx) ScanMemories(ctx context.Context, after engram.MemoryKey, limit int) ([]engram.Memory, error) {
	return memoryRows(ctx, t.base, "scan memories", scanMemoriesSQL, []any{after.Org, after.Project, after.User, after.ID, limit})
}

// memoryRows returns the memories q selects (its columns storeutil.MemoryCols),
// with the error of the query or of a row.
func memoryRows(ctx context.Context, t *base, op, q string, args []any) ([]engram.Memory, error) {
	return collect(ctx, t, op, q, args, func(sc scanner) (engram.Memory, error) { return scanMemory(sc) })
}

// Lapsed implements engram.Expirer: up to limit active memories of every
// tenant whose expires_at is at or before at, soonest first. EINVALID if
// limit is not positive.
func (t *memoryTx) Lapsed(ctx context.Context, at time.Time, limit int) ([]engram.Memory, error) {
	return memoryRows(ctx, t.base, "read lapsed memories", lapsedSQL, []any{micros(at), limit})
}
