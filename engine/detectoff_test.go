package engine_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/sqlite"
)

// TestDetectOff: with Options.DetectOff an episode holding an API key and
// a card number is stored as sent and its answer reports no finding;
// the same add on an engine with detection on (the control) stores
// placeholders and reports both.
func TestDetectOff(t *testing.T) {
	const key, card = "sk-proj-Qw3rTy7uIo9pAs2dFg5hJk8lZx4cVb", "4111 1111 1111 1111"
	content := "Mein Schlüssel ist " + key + " und meine Karte " + card + "."
	for _, off := range []bool{true, false} {
		ctx := context.Background()
		db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "engram.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		e, err := engine.New(ctx, db, engine.Options{DetectOff: off, Sensitive: engram.SensitivePolicy{Secret: engram.TreatRedact, Payment: engram.TreatRedact}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		ns := engram.Namespace{Org: "o", Project: "p", User: "u"}
		res, err := e.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: ns, Episodes: []engram.EpisodeInput{{Role: "user", Content: content}}})
		if err != nil {
			t.Fatal(err)
		}
		ep := res.Episodes[0]
		stored := strings.Contains(ep.Content, key) && strings.Contains(ep.Content, card)
		if off && (!stored || len(res.Sensitive) != 0) {
			t.Errorf("detection off: stored %q, answer's findings %v; want the text as sent and none", ep.Content, res.Sensitive)
		}
		if !off && (stored || len(res.Sensitive) != 2) {
			t.Errorf("detection on: stored %q, answer's findings %v; want placeholders and two kinds", ep.Content, res.Sensitive)
		}
	}
}
