package storeutil

import (
	"github.com/engramhq/engram"
)

// Statement is a backend's statement of one page of a list: the SQL and
// its arguments selecting the rows in s matching f that sort after the key
// after (its zero value on the first page), at most n of them; EINVALID
// for a filter the backend cannot express.
type Statement[F, K any] func(s engram.Scope, f *F, after K, n int) (string, []any, error)

// EpisodeAfter is the key an episode page starts after, in the list's
// order (occurred_at, id): the last episode's occurred_at in unix
// microseconds and its id; the zero value, with no ID, on the first page.
type EpisodeAfter struct {
	Micros int64
	ID     string
}

// ListMemories is a store's ListMemories around its statement: it decodes
// f.Cursor into the memory id the page starts after ("" on the first
// page), has build make the statement of limit+1 memories, newest id
// first, reads them with read and trims them to a page with the next
// page's cursor. A bad limit or cursor is EINVALID (before build and read
// are called); build's and read's errors are returned as is.
func ListMemories(s engram.Scope, f engram.MemoryFilter, build Statement[engram.MemoryFilter, string], read func(sql string, args []any) ([]engram.Memory, error)) ([]engram.Memory, string, error) {
	return listPage(s, &f, f.Limit, f.Cursor, MemoryAfter, build, read, MemoryPage)
}

// ListEpisodes is ListMemories for ListEpisodes, whose pages start after
// an EpisodeAfter, in the order (occurred_at, id).
func ListEpisodes(s engram.Scope, f engram.EpisodeFilter, build Statement[engram.EpisodeFilter, EpisodeAfter], read func(sql string, args []any) ([]engram.Episode, error)) ([]engram.Episode, string, error) {
	return listPage(s, &f, f.Limit, f.Cursor, episodeAfter, build, read, EpisodePage)
}

// episodeAfter decodes an episode cursor; ErrBadCursor for any other.
func episodeAfter(cursor string) (EpisodeAfter, error) {
	micros, id, err := DecodeEpisodeCursor(cursor)
	return EpisodeAfter{Micros: micros, ID: id}, err
}

// listPage reads one page of a list: the limit (0 means
// engram.DefaultLimit), the key the cursor decodes to through after (not
// called on the first page), the backend's statement of limit+1 rows after
// it, their read, and page's trim to limit rows with the next cursor.
func listPage[F, K, T any](s engram.Scope, f *F, limit int, cursor string, after func(string) (K, error),
	build Statement[F, K], read func(string, []any) ([]T, error), page func([]T, int, error) ([]T, string, error)) ([]T, string, error) {
	n, err := engram.ClampLimit(limit)
	if err != nil {
		return nil, "", err
	}
	var key K
	if cursor != "" {
		if key, err = after(cursor); err != nil {
			return nil, "", err
		}
	}
	sql, args, err := build(s, f, key, n+1)
	if err != nil {
		return nil, "", err
	}
	out, err := read(sql, args)
	return page(out, n, err)
}
