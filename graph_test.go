package engram_test

import (
	"testing"

	"github.com/engramhq/engram"
)

// A subgraph may ask for up to MaxGraphLimit edges, and relation reads
// accept as many; one more is EINVALID naming the limit.
func TestGraphLimit(t *testing.T) {
	for _, c := range []struct {
		limit int
		ok    bool
	}{{0, true}, {1, true}, {engram.MaxGraphLimit, true}, {engram.MaxGraphLimit + 1, false}, {-1, false}} {
		r := engram.GraphRequest{Limit: c.limit}
		if err := r.Validate(); (err == nil) != c.ok || (err != nil && engram.ErrorCode(err) != engram.EINVALID) {
			t.Errorf("GraphRequest{Limit: %d}.Validate() = %v, want ok %v", c.limit, err, c.ok)
		}
		n, err := engram.RelationLimit(c.limit)
		if (err == nil) != c.ok {
			t.Errorf("RelationLimit(%d) = %d, %v; want ok %v", c.limit, n, err, c.ok)
		}
	}
	if n, _ := engram.RelationLimit(0); n != engram.DefaultEntityLimit {
		t.Errorf("RelationLimit(0) = %d, want the default %d", n, engram.DefaultEntityLimit)
	}
}
