package engram_test

import (
	"sort"
	"testing"

	"github.com/engramhq/engram"
)

func TestNewIDSortedUniqueValid(t *testing.T) {
	const n = 10000
	ids := make([]string, n)
	seen := map[string]bool{}
	for i := range ids {
		ids[i] = engram.NewID()
		if !engram.ValidID(ids[i]) {
			t.Fatalf("NewID() = %q is not ValidID", ids[i])
		}
		if seen[ids[i]] {
			t.Fatalf("duplicate id %q", ids[i])
		}
		seen[ids[i]] = true
	}
	if !sort.StringsAreSorted(ids) {
		t.Errorf("ids from one process are not increasing")
	}
}

func TestValidID(t *testing.T) {
	for _, tc := range []struct {
		id   string
		want bool
	}{
		{"01JDQ0000000000000000000AA", true},
		{"01jdq0000000000000000000aa", false}, // stores compare ids exactly
		{"01JDQ000000000000000000", false},
		{"81JDQ0000000000000000000AA", false}, // overflows 128 bits
		{"01JDQ000000000000000000IAA", false},
		{"01JDQ0000000000000000000A!", false},
		{"", false},
	} {
		if got := engram.ValidID(tc.id); got != tc.want {
			t.Errorf("ValidID(%q) = %v, want %v", tc.id, got, tc.want)
		}
	}
}
