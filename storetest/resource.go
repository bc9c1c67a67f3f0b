package storetest

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/engramhq/engram"
)

func resUpdate(st engram.Store, fn func(w engram.ResourceWriter) error) error {
	return st.Update(ctx, func(tx engram.Tx) error { return fn(tx) })
}

func resView(st engram.Store, fn func(r engram.ResourceReader) error) error {
	return st.View(ctx, func(r engram.Reader) error { return fn(r) })
}

// putResource stores a complete resource in n with content in chunks.
func putResource(t *testing.T, st engram.Store, n engram.Namespace, name string, chunks ...[]byte) *engram.Resource {
	t.Helper()
	r := &engram.Resource{ID: engram.NewID(), Namespace: n, Name: name, MIMEType: "application/octet-stream", CreatedAt: At(0)}
	err := resUpdate(st, func(w engram.ResourceWriter) error {
		if err := w.InsertResource(ctx, r); err != nil {
			return err
		}
		for i, c := range chunks {
			if err := w.PutResourceChunk(ctx, n, r.ID, i, c); err != nil {
				return err
			}
			r.Size += int64(len(c))
		}
		r.SHA256 = "abc"
		return w.CompleteResource(ctx, n, r.ID, r.SHA256, 2)
	})
	if err != nil {
		t.Fatalf("put resource: %v", err)
	}
	r.Memories = 2
	return r
}

// testResources: a resource round-trips with its chunks, is invisible
// until completed and outside its scope, lists newest first in pages, is
// counted in its tenant's bytes, and purging removes it with its content.
func testResources(t *testing.T, open Opener) {
	st := open(t)
	alice := engram.Namespace{Org: "acme", Project: "app", User: "alice"}
	big := bytes.Repeat([]byte{0xff, 0}, engram.ResourceChunkBytes/2)
	r1 := putResource(t, st, alice, "ä.bin", big, []byte("tail\x00"))
	r2 := putResource(t, st, alice, "b.txt", []byte("zwei"))

	var got *engram.Resource
	if err := resView(st, func(rr engram.ResourceReader) (err error) {
		got, err = rr.GetResource(ctx, engram.ScopeOf(alice), r1.ID)
		return err
	}); err != nil {
		t.Fatalf("GetResource: %v", err)
	}
	if got.Size != int64(len(big)+5) || got.Name != "ä.bin" || got.SHA256 != "abc" || got.Memories != 2 || !got.CreatedAt.Equal(At(0)) || got.Namespace != alice {
		t.Errorf("GetResource = %+v, want %+v", got, r1)
	}
	for seq, want := range [][]byte{big, []byte("tail\x00")} {
		var data []byte
		if err := resView(st, func(rr engram.ResourceReader) (err error) {
			data, err = rr.ResourceChunk(ctx, alice, r1.ID, seq)
			return err
		}); err != nil || !bytes.Equal(data, want) {
			t.Errorf("chunk %d: %d bytes, %v", seq, len(data), err)
		}
	}
	checkResourceScopes(t, st, alice, r1)

	var page []engram.Resource
	var next string
	if err := resView(st, func(rr engram.ResourceReader) (err error) {
		page, next, err = rr.ListResources(ctx, engram.ScopeOf(alice), engram.ResourceFilter{Limit: 1})
		return err
	}); err != nil || len(page) != 1 || page[0].ID != r2.ID || next == "" {
		t.Fatalf("first page: %v %q %v, want %s", page, next, err, r2.ID)
	}
	if err := resView(st, func(rr engram.ResourceReader) (err error) {
		page, next, err = rr.ListResources(ctx, engram.ScopeOf(alice), engram.ResourceFilter{Limit: 1, Cursor: next})
		return err
	}); err != nil || len(page) != 1 || page[0].ID != r1.ID || next != "" {
		t.Fatalf("second page: %v %q %v, want %s", page, next, err, r1.ID)
	}
	if n := tenantBytes(t, st, alice); n != r1.Size+r2.Size {
		t.Errorf("ResourceBytes = %d, want %d", n, r1.Size+r2.Size)
	}

	if err := resUpdate(st, func(w engram.ResourceWriter) error { return w.PurgeResource(ctx, alice, r1.ID) }); err != nil {
		t.Fatalf("PurgeResource: %v", err)
	}
	if err := resView(st, func(rr engram.ResourceReader) error {
		_, err := rr.ResourceChunk(ctx, alice, r1.ID, 0)
		return err
	}); engram.ErrorCode(err) != engram.ENOTFOUND {
		t.Errorf("a chunk of a purged resource: %v, want ENOTFOUND", err)
	}
	if n := tenantBytes(t, st, alice); n != r2.Size {
		t.Errorf("ResourceBytes after purge = %d, want %d", n, r2.Size)
	}
}

// checkResourceScopes: r (in n) is ENOTFOUND from another user, another
// tenant, and invisible to lists there.
func checkResourceScopes(t *testing.T, st engram.Store, n engram.Namespace, r *engram.Resource) {
	t.Helper()
	for _, s := range []engram.Scope{
		{Org: n.Org, Project: n.Project, User: "mallory"},
		{Org: "other", Project: n.Project, User: n.User},
		{Org: n.Org, Project: n.Project, IncludeShared: true},
	} {
		err := resView(st, func(rr engram.ResourceReader) error {
			_, err := rr.GetResource(ctx, s, r.ID)
			return err
		})
		if engram.ErrorCode(err) != engram.ENOTFOUND {
			t.Errorf("GetResource from %+v: %v, want ENOTFOUND", s, err)
		}
		var list []engram.Resource
		if err := resView(st, func(rr engram.ResourceReader) (err error) {
			list, _, err = rr.ListResources(ctx, s, engram.ResourceFilter{})
			return err
		}); err != nil || len(list) != 0 {
			t.Errorf("ListResources from %+v: %v, %v; want none", s, list, err)
		}
	}
}

func tenantBytes(t *testing.T, st engram.Store, n engram.Namespace) int64 {
	t.Helper()
	var b int64
	if err := resView(st, func(rr engram.ResourceReader) (err error) {
		b, err = rr.ResourceBytes(ctx, n)
		return err
	}); err != nil {
		t.Fatalf("ResourceBytes: %v", err)
	}
	return b
}

// testResourcesPending: a resource is invisible until completed; its size
// counts for the tenant from its first chunk; bad chunks, duplicates and
// unknown ids are refused; a scope purge removes resources in progress
// and complete ones, with their chunks, and nothing of other users.
func testResourcesPending(t *testing.T, open Opener) {
	st := open(t)
	alice := engram.Namespace{Org: "initech", Project: "app", User: "alice"}
	bob := engram.Namespace{Org: "initech", Project: "app", User: "bob"}
	r := &engram.Resource{ID: engram.NewID(), Namespace: alice, Name: "x", MIMEType: "text/plain", CreatedAt: At(0)}
	if err := resUpdate(st, func(w engram.ResourceWriter) error { return w.InsertResource(ctx, r) }); err != nil {
		t.Fatal(err)
	}
	if err := resUpdate(st, func(w engram.ResourceWriter) error { return w.InsertResource(ctx, r) }); engram.ErrorCode(err) != engram.ECONFLICT {
		t.Errorf("a second InsertResource: %v, want ECONFLICT", err)
	}
	if err := resUpdate(st, func(w engram.ResourceWriter) error { return w.PutResourceChunk(ctx, alice, r.ID, 0, []byte("abc")) }); err != nil {
		t.Fatal(err)
	}
	for name, fn := range map[string]func(w engram.ResourceWriter) error{
		"empty":     func(w engram.ResourceWriter) error { return w.PutResourceChunk(ctx, alice, r.ID, 1, nil) },
		"duplicate": func(w engram.ResourceWriter) error { return w.PutResourceChunk(ctx, alice, r.ID, 0, []byte("x")) },
		"unknown": func(w engram.ResourceWriter) error {
			return w.PutResourceChunk(ctx, alice, engram.NewID(), 0, []byte("x"))
		},
		"bad name": func(w engram.ResourceWriter) error {
			return w.InsertResource(ctx, &engram.Resource{ID: engram.NewID(), Namespace: alice, MIMEType: "a/b"})
		},
	} {
		if err := resUpdate(st, fn); err == nil {
			t.Errorf("%s chunk or resource: no error", name)
		}
	}
	if err := resView(st, func(rr engram.ResourceReader) error {
		_, err := rr.GetResource(ctx, engram.ScopeOf(alice), r.ID)
		return err
	}); engram.ErrorCode(err) != engram.ENOTFOUND {
		t.Errorf("GetResource of an upload in progress: %v, want ENOTFOUND", err)
	}
	if n := tenantBytes(t, st, alice); n != 3 {
		t.Errorf("ResourceBytes with an upload in progress = %d, want 3", n)
	}
	done := putResource(t, st, alice, "done", []byte("12345"))
	kept := putResource(t, st, bob, "kept", []byte("bob's"))
	var counts engram.PurgeCounts
	if err := st.Update(ctx, func(tx engram.Tx) (err error) {
		counts, err = tx.PurgeScope(ctx, engram.ScopeOf(alice))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if counts.Resources != 2 {
		t.Errorf("PurgeScope counted %d resources, want 2", counts.Resources)
	}
	for _, id := range []string{r.ID, done.ID} {
		if err := resView(st, func(rr engram.ResourceReader) error {
			_, err := rr.ResourceChunk(ctx, alice, id, 0)
			return err
		}); engram.ErrorCode(err) != engram.ENOTFOUND {
			t.Errorf("a chunk after the scope's purge: %v, want ENOTFOUND", err)
		}
	}
	if n := tenantBytes(t, st, alice); n != kept.Size {
		t.Errorf("ResourceBytes after purge = %d, want bob's %d", n, kept.Size)
	}
}

// testResourcesDump: DumpResources lists the completed resources of every
// tenant in byte order of (org, project, id), with their metadata, and
// leaves out uploads in progress.
func testResourcesDump(t *testing.T, open Opener) {
	st := open(t)
	var want []*engram.Resource
	for _, n := range []engram.Namespace{nsOther, {Org: "Acme", Project: "app"}, nsU2, nsU1} {
		want = append(want, putResource(t, st, n, "f "+n.Org+" "+n.User, []byte("data of "+n.User)))
	}
	pending := &engram.Resource{ID: engram.NewID(), Namespace: nsU1, Name: "pending", MIMEType: "text/plain", CreatedAt: At(0)}
	if err := resUpdate(st, func(w engram.ResourceWriter) error { return w.InsertResource(ctx, pending) }); err != nil {
		t.Fatal(err)
	}
	key := func(r *engram.Resource) string { return r.Namespace.Org + "\x00" + r.Namespace.Project + "\x00" + r.ID }
	slices.SortFunc(want, func(a, b *engram.Resource) int { return strings.Compare(key(a), key(b)) })
	mine := map[string]bool{pending.ID: true}
	for _, r := range want {
		mine[r.ID] = true
	}
	var got []engram.Resource
	last := ""
	err := st.View(ctx, func(r engram.Reader) error {
		return r.DumpResources(ctx, func(res engram.Resource) error {
			if k := key(&res); k < last {
				t.Errorf("DumpResources gave %q after %q", k, last)
			} else {
				last = k
			}
			if mine[res.ID] { // a store shared with other tests may hold more
				got = append(got, res)
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("DumpResources gave %d resources, want %d (the pending one left out)", len(got), len(want))
	}
	for i := range want {
		sameJSON(t, "dumped resource", got[i], want[i])
	}
}
