package engine_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/sqlite"
	"github.com/engramhq/engram/vault"
)

// BenchmarkAddSensitive adds the turns of LoCoMo's first conversation, one
// AddEpisodes per session, into a fresh SQLite engine without an embedder
// (so detection is not lost in the model's time), with detection on (the
// default policy; LoCoMo's turns hold almost no findings, so this is the
// cost of looking) and off (Options.DetectOff), and reports
// microseconds per turn. The ratio of the two is what detection costs the
// write path. "secrets" is detection on over the same turns each with an
// API key and a card number appended, all sealed into the vault.
//
//	go test -run '^$' -bench BenchmarkAddSensitive -benchtime 3x ./engine/
func BenchmarkAddSensitive(b *testing.B) {
	sessions := locomoSessions(b)
	withSecrets := make([][]engram.EpisodeInput, len(sessions))
	for i, s := range sessions {
		withSecrets[i] = make([]engram.EpisodeInput, len(s))
		for j, in := range s {
			in.Content += fmt.Sprintf(" my key is sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8t%04d%04d and the card 4111 1111 1111 1111", i, j)
			withSecrets[i][j] = in
		}
	}
	for _, c := range []struct {
		name     string
		sessions [][]engram.EpisodeInput
		detect   bool
	}{{"off", sessions, false}, {"on", sessions, true}, {"secrets", withSecrets, true}} {
		b.Run(c.name, func(b *testing.B) { addSensitive(b, c.sessions, c.detect) })
	}
}

func addSensitive(b *testing.B, sessions [][]engram.EpisodeInput, detect bool) {
	turns := 0
	for _, s := range sessions {
		turns += len(s)
	}
	ctx := context.Background()
	var spent time.Duration
	for i := range b.N {
		b.StopTimer()
		db, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "engram.db"))
		if err != nil {
			b.Fatal(err)
		}
		e, err := engine.New(ctx, db, engine.Options{Vault: benchVault(b), DetectOff: !detect})
		if err != nil {
			b.Fatal(err)
		}
		ns := engram.Namespace{Org: "o", Project: "p", User: fmt.Sprintf("u%d", i)}
		b.StartTimer()
		start := time.Now()
		for _, s := range sessions {
			if _, err := e.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: ns, Episodes: s}); err != nil {
				b.Fatal(err)
			}
		}
		spent += time.Since(start)
		b.StopTimer()
		e.Close()
		db.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(spent.Microseconds())/float64(b.N*turns), "us/turn")
}

func benchVault(b *testing.B) *vault.Vault {
	b.Helper()
	v, err := vault.New([]byte(strings.Repeat("k", vault.KeySize)))
	if err != nil {
		b.Fatal(err)
	}
	return v
}
