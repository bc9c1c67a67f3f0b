package storetest

import (
	"slices"
	"testing"

	"github.com/engramhq/engram"
)

// testUsers checks engram.UserLister: the users of one tenant holding an
// episode or a memory in any status, in byte order, paged by the name
// after; records of no user and other tenants' users are not listed.
func testUsers(t *testing.T, open Opener) {
	st := open(t)
	onlyEpisode := engram.Namespace{Org: "acme", Project: "app", User: "Zoë", Agent: "bot"}
	deleted := Memory(engram.Namespace{Org: "acme", Project: "app", User: "ann"}, "deleted")
	deleted.Status = engram.StatusDeleted
	Put(t, st, Memory(nsU1, "one"), Memory(nsU2, "two"), Episode(nsU2, "two said"), Episode(onlyEpisode, "said"), deleted,
		Memory(engram.Namespace{Org: "acme", Project: "app"}, "shared"), Memory(nsOther, "other tenant"),
		Episode(engram.Namespace{Org: "acme", Project: "site", User: "u9"}, "other project"))
	view(t, st, func(r engram.Reader) error {
		all, err := r.Users(ctx, engram.Namespace{Org: "acme", Project: "app", User: "ignored"}, "", 0)
		if want := []string{"Zoë", "ann", "u1", "u2"}; err != nil || !slices.Equal(all, want) {
			t.Errorf("Users = %q, %v; want %q", all, err, want)
		}
		page, err := r.Users(ctx, engram.Namespace{Org: "acme", Project: "app"}, "ann", 1)
		if err != nil || !slices.Equal(page, []string{"u1"}) {
			t.Errorf("Users after ann, limit 1 = %q, %v; want [u1]", page, err)
		}
		if last, err := r.Users(ctx, engram.Namespace{Org: "acme", Project: "app"}, "u2", 0); err != nil || len(last) != 0 {
			t.Errorf("Users after the last = %q, %v; want none", last, err)
		}
		if _, err := r.Users(ctx, engram.Namespace{Org: "acme"}, "", 0); engram.ErrorCode(err) != engram.EINVALID {
			t.Errorf("Users without a project: %v, want EINVALID", err)
		}
		return nil
	})
}
