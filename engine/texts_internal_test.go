package engine

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/syncbuf"
	"github.com/engramhq/engram/sqlite"
)

// With a bound on their bytes, the text indexes searched least recently
// are dropped first, the one a search uses never, and the total stays
// under the bound once the search is over.
func TestTextsEvictLeastRecent(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "engram.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	open := func(budget int64) *Engine {
		e, err := New(ctx, db, Options{Logger: slog.New(slog.DiscardHandler), TextIndexBytes: budget})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		return e
	}
	free := open(-1)
	users := []string{"ann", "ben", "cem"}
	for _, u := range users { // the same texts: indexes of one size
		ns := engram.Namespace{Org: "o", Project: "p", User: u}
		var ms []engram.Memory
		for _, v := range []string{"The garden has roses.", "Der Garten hat Rosen.", "El jardín tiene rosas.", "花园里有玫瑰。"} {
			ms = append(ms, engram.Memory{Kind: engram.KindSemantic, Value: v})
		}
		if _, err := free.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: ns, Memories: ms}); err != nil {
			t.Fatal(err)
		}
	}
	search := func(e *Engine, u string) {
		t.Helper()
		req := engram.SearchRequest{Scope: engram.Scope{Org: "o", Project: "p", User: u}, Query: "garden roses", Channels: []string{ChannelBM25}}
		if res, err := e.Search(ctx, req); err != nil || len(res.Hits) == 0 {
			t.Fatalf("search of %s: %d hits, %v", u, len(res.Hits), err)
		}
	}
	loaded := func(e *Engine) map[string]bool {
		out := map[string]bool{}
		for k, p := range e.text.parts {
			p.mu.RLock()
			out[k.user] = p.idx != nil
			p.mu.RUnlock()
		}
		return out
	}

	for _, u := range users {
		search(free, u)
	}
	one := free.text.total.Load() / 3
	if got := loaded(free); !got["ann"] || !got["ben"] || !got["cem"] || one <= 0 {
		t.Fatalf("without a bound: loaded %v, %d bytes each; want all three", got, one)
	}

	e := open(one * 5 / 2) // two fit, three do not
	for _, u := range users {
		search(e, u)
	}
	if got := loaded(e); got["ann"] || !got["ben"] || !got["cem"] {
		t.Errorf("after ann, ben, cem: loaded %v, want ann dropped", got)
	}
	search(e, "ben")
	search(e, "ann") // loaded again; cem is now the least recent
	if got := loaded(e); !got["ann"] || !got["ben"] || got["cem"] {
		t.Errorf("after ben, ann: loaded %v, want cem dropped", got)
	}
	if total := e.text.total.Load(); total > one*5/2 {
		t.Errorf("total %d bytes, over the bound %d", total, one*5/2)
	}

	tiny := open(1) // only the index in use stays
	for _, u := range append(users, "ann") {
		search(tiny, u)
		if got := loaded(tiny); !got[u] || countTrue(got) != 1 {
			t.Errorf("bound of 1 byte, after searching %s: loaded %v, want only %s", u, got, u)
		}
	}
}

func countTrue(m map[string]bool) int {
	n := 0
	for _, v := range m {
		if v {
			n++
		}
	}
	return n
}

// A text index larger than the whole budget is dropped when another user
// searches, and the engine says so once, naming the flag to raise.
func TestTextsWarnOverBudget(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "engram.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	var logs syncbuf.Buffer
	e, err := New(ctx, db, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil)), TextIndexBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	for _, u := range []string{"ann", "ben"} {
		ns := engram.Namespace{Org: "o", Project: "p", User: u}
		ms := []engram.Memory{{Kind: engram.KindSemantic, Value: "Der Garten hat Rosen."}, {Kind: engram.KindSemantic, Value: "花园里有玫瑰。"}}
		if _, err := e.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: ns, Memories: ms}); err != nil {
			t.Fatal(err)
		}
	}
	search := func(u string) {
		t.Helper()
		req := engram.SearchRequest{Scope: engram.Scope{Org: "o", Project: "p", User: u}, Query: "Garten Rosen", Channels: []string{ChannelBM25}}
		if res, err := e.Search(ctx, req); err != nil || len(res.Hits) == 0 {
			t.Fatalf("search of %s: %d hits, %v", u, len(res.Hits), err)
		}
	}
	search("ann")
	if strings.Contains(logs.String(), "text-index-mb") {
		t.Fatalf("warned before any index was dropped: %s", logs.String())
	}
	for range 3 {
		search("ben")
		search("ann")
	}
	if n := strings.Count(logs.String(), "raise serve --text-index-mb"); n != 2 {
		t.Errorf("warned %d times, want once for each of the two indexes:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), "level=WARN") {
		t.Errorf("not a warning: %s", logs.String())
	}
}
