package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/storeutil"
	"github.com/jackc/pgx/v5"
)

// coreTx is the core of a transaction (engram.Reader and the writes of
// engram.Tx): episodes, memories and their versions, with the locator and
// the full-text probe that read the same tables.
type coreTx struct{ *base }

// GetEpisode returns the episode with id in s; ENOTFOUND if there is none
// in s, EINVALID for a malformed scope or id. Ids are unique per user, so
// only a scope that includes shared records can hold two: the user's own
// is returned.
func (t *coreTx) GetEpisode(ctx context.Context, s engram.Scope, id string) (*engram.Episode, error) {
	q := &query{}
	q.scope("e.", s)
	q.where("e.id = " + q.arg(id))
	e, err := scanEpisode(t.ptx.QueryRow(ctx, "SELECT "+storeutil.EpisodeCols+" FROM episodes e WHERE "+q.String()+" ORDER BY e.user_id = '' LIMIT 1", q.args...))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, engram.Errorf(engram.ENOTFOUND, "episode %s not found", id)
	} else if err != nil {
		return nil, t.mapErr(ctx, "get episode", err)
	}
	return &e, nil
}

// GetMemory returns the memory with id in s, in any status; ENOTFOUND if
// there is none in s, EINVALID for a malformed scope or id. Inside Update
// it locks the row until the commit, so that a read-modify-write of one
// memory by two servers at once is serialised rather than lost.
func (t *coreTx) GetMemory(ctx context.Context, s engram.Scope, id string) (*engram.Memory, error) {
	q := &query{}
	q.scope("m.", s)
	q.where("m.id = " + q.arg(id))
	// Ids are unique per user, so only a scope that includes shared
	// records can hold two: the user's own comes first.
	sql := "SELECT " + storeutil.MemoryCols + " FROM memories m WHERE " + q.String() + " ORDER BY m.user_id = '' LIMIT 1"
	if !t.readOnly {
		sql += " FOR NO KEY UPDATE"
	}
	m, err := scanMemory(t.ptx.QueryRow(ctx, sql, q.args...))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, engram.Errorf(engram.ENOTFOUND, "memory %s not found", id)
	} else if err != nil {
		return nil, t.mapErr(ctx, "get memory", err)
	}
	return &m, nil
}

// GetMemories returns the memories among ids that s contains, in any status
// and in no particular order; ids are valid and given once (storecheck
// drops the others in front of the store), and those unknown or outside s
// are skipped.
func (t *coreTx) GetMemories(ctx context.Context, s engram.Scope, want []string) ([]engram.Memory, error) {
	if len(want) == 0 {
		return nil, nil
	}
	// The scope is checked here, by its reference rule (see
	// getMemoriesSQL).
	var out []engram.Memory
	users := []string{s.User}
	if s.IncludeShared && s.User != "" {
		users = append(users, "")
	}
	err := t.each(ctx, "get memories", getMemoriesSQL, []any{s.Tenant(), want, users},
		func(row pgx.Row) error {
			m, err := scanMemory(row)
			if err == nil && s.Contains(m.Namespace) {
				out = append(out, m)
			}
			return err
		})
	if err != nil {
		return nil, err
	}
	return storeutil.OwnMemories(s, out), nil
}

// ListEpisodes returns a page of the episodes in s matching f, by
// (occurred_at, id); EINVALID for a bad scope, filter or cursor.
func (t *coreTx) ListEpisodes(ctx context.Context, s engram.Scope, f engram.EpisodeFilter) ([]engram.Episode, string, error) {
	return storeutil.ListEpisodes(s, f, listEpisodesSQL, func(sql string, args []any) ([]engram.Episode, error) {
		return collect(ctx, t.base, "list episodes", sql, args, scanEpisode)
	})
}

// listEpisodesSQL is the statement of a page of ListEpisodes (a
// storeutil.Statement); EINVALID for a bad filter.
func listEpisodesSQL(s engram.Scope, f *engram.EpisodeFilter, after storeutil.EpisodeAfter, n int) (string, []any, error) {
	q := &query{}
	q.scope("e.", s)
	if err := episodeFilter(q, f); err != nil {
		return "", nil, err
	}
	if after.ID != "" {
		q.where("(e.occurred_at, e.id) > (" + q.arg(time.UnixMicro(after.Micros).UTC()) + ", " + q.arg(after.ID) + ")")
	}
	sql := "SELECT " + storeutil.EpisodeCols + " FROM episodes e WHERE " + q.String() +
		" ORDER BY e.occurred_at, e.id LIMIT " + q.arg(n)
	return sql, q.args, nil
}

// ListMemories returns a page of the memories in s matching f, newest id
// first; EINVALID for a bad scope, filter or cursor.
func (t *coreTx) ListMemories(ctx context.Context, s engram.Scope, f engram.MemoryFilter) ([]engram.Memory, string, error) {
	return storeutil.ListMemories(s, f, listMemoriesSQL, func(sql string, args []any) ([]engram.Memory, error) {
		return memoryRows(ctx, t.base, "list memories", sql, args)
	})
}

// listMemoriesSQL is the statement of a page of ListMemories (a
// storeutil.Statement): at most n memories with an id below after (any,
// if after is ""); EINVALID for a bad filter.
func listMemoriesSQL(s engram.Scope, f *engram.MemoryFilter, after string, n int) (string, []any, error) {
	q := &query{}
	q.scope("m.", s)
	if err := memoryFilter(q, f); err != nil {
		return "", nil, err
	}
	if after != "" {
		q.where("m.id < " + q.arg(after))
	}
	sql := "SELECT " + storeutil.MemoryCols + " FROM memories m WHERE " + q.String() + " ORDER BY m.id DESC LIMIT " + q.arg(n)
	return sql, q.args, nil
}

// rankWeights are ts_rank_cd's weights of the D, C, B and A labels: value
// (C) 1, cues (B) 1.5, abstraction (A) 2, relative to one another as the
// embedded store weighs its columns in BM25, scaled so A is 1.
const rankWeights = "'{0, 0.5, 0.75, 1}'"

// SearchText ranks the memories in s matching f by ts_rank_cd (cover
// density, with length normalisation) against the terms of query, best
// first, at most limit of them (0 means engram.DefaultLimit); equal scores
// are ordered by id, newest first. f.Limit and f.Cursor are ignored. A
// query without terms gives no hits and no error; EINVALID for a bad scope,
// filter or limit.
func (t *coreTx) SearchText(ctx context.Context, s engram.Scope, text string, f engram.MemoryFilter, limit int) ([]engram.TextHit, error) {
	n := limit // clamped in front of the store
	q := &query{}
	tsq := q.arg(tsQuery(text))
	q.scope("m.", s)
	if err := memoryFilter(q, &f); err != nil {
		return nil, err
	}
	if q.args[0] == "" {
		return nil, nil
	}
	q.where("m.tsv @@ tq.q")
	// Normalisation 1 divides by 1 + log(length): longer texts need more
	// matches, as in BM25.
	sql := "SELECT " + storeutil.MemoryCols + ", ts_rank_cd(" + rankWeights + ", m.tsv, tq.q, 1) AS r " +
		"FROM websearch_to_tsquery('simple', " + tsq + ") AS tq(q), memories m WHERE " + q.String() +
		" ORDER BY r DESC, m.id DESC LIMIT " + q.arg(n)
	var hits []engram.TextHit
	err := t.each(ctx, "search", sql, q.args, func(row pgx.Row) error {
		var rank float32
		m, err := scanMemory(row, &rank)
		hits = append(hits, engram.TextHit{Memory: m, Score: float64(rank)})
		return err
	})
	if err != nil {
		return nil, err
	}
	return hits, nil
}

// Versions returns the history of memory id in s, oldest first; ENOTFOUND
// if s holds neither the memory nor any of its versions.
func (t *coreTx) Versions(ctx context.Context, s engram.Scope, id string) ([]engram.Version, error) {
	q := &query{}
	q.scope("v.", s)
	q.where("v.memory_id = " + q.arg(id))
	var out []engram.Version
	err := t.each(ctx, "versions", "SELECT "+storeutil.VersionCols+" FROM memory_versions v WHERE "+q.String()+" ORDER BY v.version",
		q.args, func(row pgx.Row) error {
			v, err := scanVersion(row)
			out = append(out, v)
			return err
		})
	if err != nil {
		return nil, err
	}
	out = storeutil.OwnVersions(s, out)
	if len(out) == 0 {
		mq := &query{}
		mq.scope("m.", s)
		mq.where("m.id = " + mq.arg(id))
		var exists bool
		if err := t.ptx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM memories m WHERE "+mq.String()+")", mq.args...).Scan(&exists); err != nil {
			return nil, t.mapErr(ctx, "versions", err)
		}
		if !exists {
			return nil, engram.Errorf(engram.ENOTFOUND, "memory %s not found", id)
		}
	}
	return out, nil
}
