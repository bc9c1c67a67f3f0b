package storetest

import (
	"cmp"
	"fmt"
	"slices"
	"testing"

	"github.com/engramhq/engram"
)

func meta(t testing.TB, st engram.Store, key string) string {
	t.Helper()
	var v string
	view(t, st, func(r engram.Reader) error {
		var err error
		v, err = r.Meta(ctx, key)
		return err
	})
	return v
}

func testMeta(t *testing.T, open Opener) {
	st := open(t)
	if got := meta(t, st, "embedder"); got != "" {
		t.Errorf("Meta of a key never set = %q, want \"\"", got)
	}
	update(t, st, func(tx engram.Tx) error {
		if err := tx.SetMeta(ctx, "embedder", "use-lite"); err != nil {
			return err
		}
		// The transaction sees its own write.
		if got, err := tx.Meta(ctx, "embedder"); err != nil || got != "use-lite" {
			t.Errorf("Meta inside the transaction = %q, %v; want use-lite", got, err)
		}
		return nil
	})
	if got := meta(t, st, "embedder"); got != "use-lite" {
		t.Errorf("Meta = %q, want use-lite", got)
	}
	odd := "ünïcödé 中文 🙂\n\"quoted\" ' ; -- \x01 and a tail "
	update(t, st, func(tx engram.Tx) error {
		if err := tx.SetMeta(ctx, "embedder", "openai:text-embedding-3-small"); err != nil {
			return err
		}
		return tx.SetMeta(ctx, "odd key ✓", odd)
	})
	if got := meta(t, st, "embedder"); got != "openai:text-embedding-3-small" {
		t.Errorf("Meta after overwriting = %q", got)
	}
	if got := meta(t, st, "odd key ✓"); got != odd {
		t.Errorf("Meta(odd key) = %q, want %q", got, odd)
	}
	if got := meta(t, st, "Embedder"); got != "" {
		t.Errorf("keys are case-sensitive, but Meta(Embedder) = %q", got)
	}
	// An empty value deletes; deleting a missing key is not an error.
	update(t, st, func(tx engram.Tx) error {
		if err := tx.SetMeta(ctx, "embedder", ""); err != nil {
			return err
		}
		return tx.SetMeta(ctx, "never set", "")
	})
	if got := meta(t, st, "embedder"); got != "" {
		t.Errorf("Meta after deleting = %q, want \"\"", got)
	}
	if got := meta(t, st, "odd key ✓"); got != odd {
		t.Errorf("deleting one key changed another: %q", got)
	}
	err := st.Update(ctx, func(tx engram.Tx) error { return tx.SetMeta(ctx, "", "x") })
	wantCode(t, "SetMeta with an empty key", err, engram.EINVALID)
	err = st.View(ctx, func(r engram.Reader) error {
		_, err := r.Meta(ctx, "")
		return err
	})
	wantCode(t, "Meta with an empty key", err, engram.EINVALID)
}

func keyOf(m engram.Memory) engram.MemoryKey {
	return engram.MemoryKey{Org: m.Namespace.Org, Project: m.Namespace.Project, User: m.Namespace.User, ID: m.ID}
}

// compareKeys orders keys by org, project, user and id, comparing bytes.
func compareKeys(a, b engram.MemoryKey) int {
	return cmp.Or(cmp.Compare(a.Org, b.Org), cmp.Compare(a.Project, b.Project), cmp.Compare(a.User, b.User), cmp.Compare(a.ID, b.ID))
}

func scanMemories(t testing.TB, st engram.Store, after engram.MemoryKey, limit int) []engram.Memory {
	t.Helper()
	var out []engram.Memory
	view(t, st, func(r engram.Reader) error {
		var err error
		out, err = r.ScanMemories(ctx, after, limit)
		return err
	})
	return out
}

func testScanMemories(t *testing.T, open Opener) {
	st := open(t)
	// Tenants whose names order differently by bytes than by a
	// case-insensitive or locale collation, or that prefix one another.
	tenants := []engram.Namespace{
		{Org: "acme", Project: "app"}, {Org: "acme", Project: "app2"}, {Org: "acme", Project: "ap"},
		{Org: "Acme", Project: "app"}, {Org: "acme-", Project: "app"}, {Org: "acme", Project: "App"},
		{Org: "globex", Project: "app"}, {Org: "ácme", Project: "app"},
	}
	statuses := allStatuses
	var all []*engram.Memory
	for i, tn := range tenants {
		for j := range 4 {
			ns := tn
			ns.User = []string{"u1", "u2", ""}[j%3]
			m := Memory(ns, fmt.Sprintf("memory %d of tenant %d", j, i))
			m.Status = statuses[(i+j)%len(statuses)]
			all = append(all, m)
		}
	}
	// The same id in two tenants is two memories.
	twin := *all[0]
	twin.Namespace = tenants[1]
	all = append(all, &twin)
	recs := make([]any, len(all))
	for i, m := range all {
		recs[i] = m
	}
	Put(t, st, recs...)
	want := make([]engram.MemoryKey, len(all))
	for i, m := range all {
		want[i] = keyOf(*m)
	}
	slices.SortFunc(want, compareKeys)

	for _, limit := range []int{1, 4, 7, len(all), engram.MaxLimit} {
		var got []engram.MemoryKey
		var after engram.MemoryKey
		for pages := 0; ; pages++ {
			if pages > len(all)+1 {
				t.Fatalf("limit %d: the walk does not end", limit)
			}
			page := scanMemories(t, st, after, limit)
			if len(page) > limit {
				t.Errorf("limit %d: a page of %d", limit, len(page))
			}
			if len(page) == 0 {
				break
			}
			for _, m := range page {
				got = append(got, keyOf(m))
			}
			after = keyOf(page[len(page)-1])
		}
		if !slices.Equal(got, want) {
			t.Errorf("limit %d: walked\n%v\nwant every memory once, in byte order:\n%v", limit, got, want)
		}
	}

	// Records come back whole, whatever their status.
	byID := map[engram.MemoryKey]*engram.Memory{}
	for _, m := range all {
		byID[keyOf(*m)] = m
	}
	for _, m := range scanMemories(t, st, engram.MemoryKey{}, len(all)) {
		sameJSON(t, "scanned memory", m, byID[keyOf(m)])
	}
	// A key strictly after: a stored one, or a prefix of tenants.
	for _, c := range []struct {
		after engram.MemoryKey
		first int // index in want, len(want) for none
	}{
		{want[9], 10},
		{engram.MemoryKey{Org: "acme", Project: "app"}, slices.IndexFunc(want, func(k engram.MemoryKey) bool { return k.Org == "acme" && k.Project == "app" })},
		{engram.MemoryKey{Org: "acme"}, slices.IndexFunc(want, func(k engram.MemoryKey) bool { return k.Org == "acme" })},
		{want[len(want)-1], len(want)},
		{engram.MemoryKey{Org: "\U0010ffff"}, len(want)},
	} {
		page := scanMemories(t, st, c.after, 3)
		var wantPage []engram.MemoryKey
		if c.first < len(want) {
			wantPage = want[c.first:min(c.first+3, len(want))]
		}
		var gotPage []engram.MemoryKey
		for _, m := range page {
			gotPage = append(gotPage, keyOf(m))
		}
		if !slices.Equal(gotPage, wantPage) {
			t.Errorf("ScanMemories after %+v = %v, want %v", c.after, gotPage, wantPage)
		}
	}
	for _, limit := range []int{0, -1} {
		err := st.View(ctx, func(r engram.Reader) error {
			_, err := r.ScanMemories(ctx, engram.MemoryKey{}, limit)
			return err
		})
		wantCode(t, fmt.Sprintf("ScanMemories with limit %d", limit), err, engram.EINVALID)
	}
}
