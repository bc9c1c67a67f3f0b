package retrieval

import (
	"testing"
	"time"

	"github.com/engramhq/engram"
)

// TestAccessAgedInDays: reads of the same day weigh the same, so a ranking
// does not depend on the seconds between reads; a read a half-life ago
// weighs as half a read.
func TestAccessAgedInDays(t *testing.T) {
	cfg := DefaultConfig()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	cfg.Clock = now
	at := func(d time.Duration) *engram.Memory {
		last := now.Add(-d)
		return &engram.Memory{AccessCount: 1, LastAccessed: &last}
	}
	if a, b := accessed(at(time.Second), cfg), accessed(at(7*time.Hour+3*time.Millisecond), cfg); a != b || a != 0.5 {
		t.Errorf("one read a second ago weighs %v, one 7 hours ago %v; want both 0.5", a, b)
	}
	if got, want := accessed(at(cfg.AccessHalfLife+time.Hour), cfg), 1-0.7071067811865476; !near(got, want) {
		t.Errorf("one read a half-life ago weighs %v, want %v (half a read)", got, want)
	}
	if got := accessed(&engram.Memory{}, cfg); got != 0 {
		t.Errorf("a memory never read weighs %v, want 0", got)
	}
}

func near(a, b float64) bool { return a-b < 1e-12 && b-a < 1e-12 }
