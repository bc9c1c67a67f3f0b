package storetest

import (
	"testing"
	"time"

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
	m2.UpdatedAt = m2.UpdatedAt.Add(time.Hour) // the latest of u1's
	gone := Memory(nsU2, "deleted")
	gone.Status = engram.StatusDeleted
	other := Memory(nsOther, "other tenant")
	Put(t, st, m1, m2, m3, gone, other)

	var err error
	var ns engram.Namespace
	var counts []engram.NamespaceCount
	view(t, st, func(r engram.Reader) error {
		for _, c := range []struct {
			id   string
			want engram.Namespace
		}{{m1.ID, nsU1}, {m3.ID, agent}, {gone.ID, nsU2}} {
			if ns, err = r.LocateMemory(ctx, tenant, c.id); err != nil || ns != c.want {
				t.Errorf("LocateMemory(%s) = %+v, %v; want %+v", c.id, ns, err, c.want)
			}
		}
		_, err = r.LocateMemory(ctx, tenant, other.ID)
		wantCode(t, "another tenant's memory", err, engram.ENOTFOUND)
		_, err = r.LocateMemory(ctx, tenant, "not-an-id")
		wantCode(t, "a malformed id", err, engram.EINVALID)
		_, err = r.LocateMemory(ctx, engram.Namespace{Org: "acme"}, m1.ID)
		wantCode(t, "no project", err, engram.EINVALID)
		if counts, err = r.Namespaces(ctx, tenant, 0); err != nil {
			t.Fatal(err)
		}
		_, err = r.Namespaces(ctx, tenant, engram.MaxLimit+1)
		wantCode(t, "a limit above the maximum", err, engram.EINVALID)
		one, err := r.Namespaces(ctx, tenant, 1)
		if err != nil || len(one) != 1 {
			t.Errorf("Namespaces with limit 1 = %v, %v", one, err)
		}
		return nil
	})
	latest := m1.UpdatedAt
	if m2.UpdatedAt.After(latest) {
		latest = m2.UpdatedAt
	}
	want := []engram.NamespaceCount{
		{Namespace: nsU1, Memories: 2, LastActivity: latest.Truncate(time.Microsecond)},
		{Namespace: agent, Memories: 1, LastActivity: m3.UpdatedAt.Truncate(time.Microsecond)},
	}
	if len(counts) != len(want) {
		t.Fatalf("Namespaces = %+v, want %+v (active memories of the tenant only)", counts, want)
	}
	for i := range want {
		if counts[i].Namespace != want[i].Namespace || counts[i].Memories != want[i].Memories || !counts[i].LastActivity.Equal(want[i].LastActivity) {
			t.Errorf("Namespaces[%d] = %+v, want %+v (last activity: the latest update)", i, counts[i], want[i])
		}
	}
}
