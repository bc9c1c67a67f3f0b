package llmformer

import (
	"testing"
	"time"

	"github.com/engramhq/engram"
)

// TestValidityFromTurnDates: a candidate with no dates of its own starts
// at the date its source turn names, resolved by the turn's tense (a
// change of schedule forward), and never at one occurrence of a recurring
// time, which leaves it at the turn's time.
func TestValidityFromTurnDates(t *testing.T) {
	at := time.Date(2024, 2, 29, 10, 0, 0, 0, time.UTC) // a Thursday
	for _, tt := range []struct {
		text, want string
	}{
		{"My doctor's appointment was moved to Thursday.", "2024-03-07"},
		{"Der Termin wurde auf Donnerstag verschoben.", "2024-03-07"},
		{"Our yoga class is now every Friday.", "2024-02-29"},
		{"我们的瑜伽课改到每周五了。", "2024-02-29"},
		{"La clase de yoga ahora es todos los viernes.", "2024-02-29"},
	} {
		m := engram.Memory{Kind: engram.KindEpisodic}
		src := engram.Episode{Content: tt.text, OccurredAt: at}
		if err := validity(&m, candidateReply{}, src); err != nil {
			t.Fatalf("validity(%q): %v", tt.text, err)
		}
		if m.ValidFrom == nil || m.ValidFrom.Format(time.DateOnly) != tt.want {
			t.Errorf("validity(%q) from %v, want %s", tt.text, m.ValidFrom, tt.want)
		}
	}
}
