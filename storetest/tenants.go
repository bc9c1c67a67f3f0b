package storetest

import (
	"testing"
	"time"

	"github.com/engramhq/engram"
)

// testTenants checks engram.TenantLister: the tenants with active memories,
// counted and in order; a tenant whose memories are all deleted is not
// listed; within keeps one org or one tenant.
func testTenants(t *testing.T, open Opener) {
	st := open(t)
	m1, m2 := Memory(nsU1, "one"), Memory(nsU2, "two")
	m2.UpdatedAt = m2.UpdatedAt.Add(time.Hour)
	other := Memory(nsOther, "other tenant")
	second := engram.Namespace{Org: "acme", Project: "site", User: "u9"}
	gone := Memory(second, "deleted")
	gone.Status = engram.StatusDeleted
	Put(t, st, m1, m2, other, gone)

	view(t, st, func(r engram.Reader) error {
		l := r
		all, err := l.Tenants(ctx, engram.Namespace{}, 0)
		if err != nil {
			t.Fatal(err)
		}
		want := []engram.NamespaceCount{
			{Namespace: engram.Namespace{Org: "acme", Project: "app"}, Memories: 2, LastActivity: m2.UpdatedAt.Truncate(time.Microsecond)},
			{Namespace: engram.Namespace{Org: "globex", Project: "app"}, Memories: 1, LastActivity: other.UpdatedAt.Truncate(time.Microsecond)},
		}
		if len(all) != len(want) {
			t.Fatalf("Tenants = %+v, want %+v", all, want)
		}
		for i := range want {
			if all[i].Namespace != want[i].Namespace || all[i].Memories != want[i].Memories || !all[i].LastActivity.Equal(want[i].LastActivity) {
				t.Errorf("Tenants[%d] = %+v, want %+v", i, all[i], want[i])
			}
		}
		for _, c := range []struct {
			within engram.Namespace
			want   int
		}{
			{engram.Namespace{Org: "globex"}, 1},
			{engram.Namespace{Org: "acme", Project: "app"}, 1},
			{engram.Namespace{Org: "acme", Project: "site"}, 0},
		} {
			got, err := l.Tenants(ctx, c.within, 0)
			if err != nil || len(got) != c.want {
				t.Errorf("Tenants(within %+v) = %+v, %v; want %d", c.within, got, err, c.want)
			}
			for _, g := range got {
				if g.Namespace.Org != c.within.Org {
					t.Errorf("Tenants(within %+v) lists %+v", c.within, g.Namespace)
				}
			}
		}
		_, err = l.Tenants(ctx, engram.Namespace{Org: "acme", Project: "app", User: "u1"}, 0)
		wantCode(t, "within a user", err, engram.EINVALID)
		_, err = l.Tenants(ctx, engram.Namespace{Project: "app"}, 0)
		wantCode(t, "a project without its org", err, engram.EINVALID)
		_, err = l.Tenants(ctx, engram.Namespace{}, engram.MaxLimit+1)
		wantCode(t, "a limit above the maximum", err, engram.EINVALID)
		return nil
	})
}
