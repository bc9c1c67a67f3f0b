package engram_test

import (
	"sort"
	"testing"
	"time"

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

// TestNewIDSameMillisecond: IDs made in one millisecond are unique and
// increasing, and one does not give away the next: their random parts
// differ by more than the last character.
func TestNewIDSameMillisecond(t *testing.T) {
	at := time.Date(2031, 1, 2, 3, 4, 5, 6e6, time.UTC)
	const n = 5000
	ids := make([]string, n)
	seen := map[string]bool{}
	for i := range ids {
		ids[i] = engram.NewIDAt(at)
		if !engram.ValidID(ids[i]) {
			t.Fatalf("NewIDAt = %q is not ValidID", ids[i])
		}
		if seen[ids[i]] {
			t.Fatalf("duplicate id %q", ids[i])
		}
		seen[ids[i]] = true
		if i > 0 && ids[i][:10] != ids[i-1][:10] {
			t.Fatalf("ids %q and %q of one millisecond have different time prefixes", ids[i-1], ids[i])
		}
	}
	if !sort.StringsAreSorted(ids) {
		t.Errorf("ids of one millisecond are not increasing")
	}
	close := 0
	for i := 1; i < n; i++ {
		// Characters 10 to 24 are the random part but its last character.
		if ids[i][10:25] == ids[i-1][10:25] {
			close++
		}
	}
	if close > 0 {
		t.Errorf("%d of %d consecutive ids differ only in the last character, e.g. guessable from each other", close, n-1)
	}
}
