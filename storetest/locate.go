package storetest

import (
	"testing"

	"github.com/engramhq/engram"
)

// testLocate checks engram.Locator: a memory is located in its own tenant
// only, whatever its status, and the namespaces listed are the tenant's
// with active memories, counted and in order.
func testLocate(t *testing.T, open Opener) {
	st := open(t)
	tenant := engram.Namespace{Org: "acme", Project: "app"}
	agent := engram.Namespace{Org: "acme", Project: "app", User: "u1", Agent: "bot", Session: "s1"}
	m1, m2, m3 := Memory(nsU1, "one"), Memory(nsU1, "two"), Memory(agent, "three")
	gone := Memory(nsU2, "deleted")
	gone.Status = engram.StatusDeleted
	other := Memory(nsOther, "other tenant")
	Put(t, st, m1, m2, m3, gone, other)

	var err error
	var ns engram.Namespace
	var counts []engram.NamespaceCount
	view(t, st, func(r engram.Reader) error {
		l := r.(engram.Locator)
		for _, c := range []struct {
			id   string
			want engram.Namespace
		}{{m1.ID, nsU1}, {m3.ID, agent}, {gone.ID, nsU2}} {
			if ns, err = l.LocateMemory(ctx, tenant, c.id); err != nil || ns != c.want {
				t.Errorf("LocateMemory(%s) = %+v, %v; want %+v", c.id, ns, err, c.want)
			}
		}
		_, err = l.LocateMemory(ctx, tenant, other.ID)
		wantCode(t, "another tenant's memory", err, engram.ENOTFOUND)
		_, err = l.LocateMemory(ctx, tenant, "not-an-id")
		wantCode(t, "a malformed id", err, engram.EINVALID)
		_, err = l.LocateMemory(ctx, engram.Namespace{Org: "acme"}, m1.ID)
		wantCode(t, "no project", err, engram.EINVALID)
		if counts, err = l.Namespaces(ctx, tenant, 0); err != nil {
			t.Fatal(err)
		}
		_, err = l.Namespaces(ctx, tenant, engram.MaxLimit+1)
		wantCode(t, "a limit above the maximum", err, engram.EINVALID)
		one, err := l.Namespaces(ctx, tenant, 1)
		if err != nil || len(one) != 1 {
			t.Errorf("Namespaces with limit 1 = %v, %v", one, err)
		}
		return nil
	})
	want := []engram.NamespaceCount{{Namespace: nsU1, Memories: 2}, {Namespace: agent, Memories: 1}}
	if len(counts) != len(want) || counts[0] != want[0] || counts[1] != want[1] {
		t.Fatalf("Namespaces = %+v, want %+v (active memories of the tenant only)", counts, want)
	}
}
