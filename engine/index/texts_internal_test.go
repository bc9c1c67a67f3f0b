package index

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/syncbuf"
)

// With a bound on their bytes, the text indexes searched least recently
// are dropped first, the one a search uses never, and the total stays
// under the bound once the search is over.
func TestTextsEvictLeastRecent(t *testing.T) {
	db := openStore(t)
	open := func(budget int64) *Texts {
		x := NewTexts(0, budget, 0, slog.New(slog.DiscardHandler))
		t.Cleanup(func() { x.Close() })
		return x
	}
	free := open(-1)
	users := []string{"ann", "ben", "cem"}
	for _, u := range users { // the same texts: indexes of one size
		ns := engram.Namespace{Org: "o", Project: "p", User: u}
		putMemories(t, db, ns, "The garden has roses.", "Der Garten hat Rosen.", "El jardín tiene rosas.", "花园里有玫瑰。")
	}
	search := func(x *Texts, u string) {
		t.Helper()
		if ids := searchText(t, x, db, engram.Scope{Org: "o", Project: "p", User: u}, "garden roses", 10); len(ids) == 0 {
			t.Fatalf("search of %s: no hits", u)
		}
	}
	loaded := func(x *Texts) map[string]bool {
		out := map[string]bool{}
		for k, p := range x.parts {
			p.mu.RLock()
			out[k.user] = p.idx != nil
			p.mu.RUnlock()
		}
		return out
	}

	for _, u := range users {
		search(free, u)
	}
	one := free.total.Load() / 3
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
	if total := e.total.Load(); total > one*5/2 {
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
// searches, and the indexes say so once, naming the flag to raise.
func TestTextsWarnOverBudget(t *testing.T) {
	db := openStore(t)
	var logs syncbuf.Buffer
	x := NewTexts(0, 1, 0, slog.New(slog.NewTextHandler(&logs, nil)))
	t.Cleanup(func() { x.Close() })
	for _, u := range []string{"ann", "ben"} {
		ns := engram.Namespace{Org: "o", Project: "p", User: u}
		putMemories(t, db, ns, "Der Garten hat Rosen.", "花园里有玫瑰。")
	}
	search := func(u string) {
		t.Helper()
		if ids := searchText(t, x, db, engram.Scope{Org: "o", Project: "p", User: u}, "Garten Rosen", 10); len(ids) == 0 {
			t.Fatalf("search of %s: no hits", u)
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
