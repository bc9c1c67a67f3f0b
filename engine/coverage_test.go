package engine_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/enginetest"
	"github.com/engramhq/engram/sqlite"
)

// englishOnly is a test embedder declaring that it covers English only,
// as USE-lite does.
type englishOnly struct{ enginetest.BagEmbedder }

func (*englishOnly) Languages() []string { return []string{"en"} }

// logRecorder is a slog.Handler that keeps every record.
type logRecorder struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (*logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (h *logRecorder) WithAttrs([]slog.Attr) slog.Handler     { return h }
func (h *logRecorder) WithGroup(string) slog.Handler          { return h }

func (h *logRecorder) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.recs = append(h.recs, r.Clone())
	return nil
}

// coverageWarnings returns the namespaces of the language warnings logged
// so far, and their messages.
func (h *logRecorder) coverageWarnings() (namespaces, messages []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range h.recs {
		if r.Level != slog.LevelWarn || !strings.Contains(r.Message, "does not cover") {
			continue
		}
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "namespace" {
				namespaces = append(namespaces, a.Value.String())
			}
			return true
		})
		messages = append(messages, r.Message)
	}
	return namespaces, messages
}

// langWrite adds n memories in language tag to a namespace.
type langWrite struct {
	ns  engram.Namespace
	tag string
	n   int
}

// TestLanguageCoverageWarning: an engine whose embedder declares its
// languages warns once per tenant and user when more than half of at
// least 20 recent memories are in other languages, and never when its
// embedder declares none.
func TestLanguageCoverageWarning(t *testing.T) {
	ann := engram.Namespace{Org: "acme", Project: "bot", User: "ann"}
	annChat := engram.Namespace{Org: "acme", Project: "bot", User: "ann", Session: "s1"}
	bob := engram.Namespace{Org: "acme", Project: "bot", User: "bob"}
	for _, tc := range []struct {
		name   string
		emb    engram.Embedder
		writes []langWrite
		want   []string // namespaces warned about, in order
	}{
		{"mostly German", &englishOnly{}, []langWrite{{ann, "de", 16}, {ann, "en", 4}}, []string{"acme/bot/ann"}},
		{"fewer than 20", &englishOnly{}, []langWrite{{ann, "de", 19}}, nil},
		{"exactly half", &englishOnly{}, []langWrite{{ann, "de", 10}, {ann, "en", 10}}, nil},
		{"undecided counts as covered", &englishOnly{}, []langWrite{{ann, "", 12}, {ann, "de", 11}}, nil},
		{"several uncovered languages", &englishOnly{}, []langWrite{{ann, "fr", 6}, {ann, "ja", 6}, {ann, "en", 10}}, []string{"acme/bot/ann"}},
		{"sessions count with their user", &englishOnly{}, []langWrite{{ann, "de", 10}, {annChat, "de", 10}}, []string{"acme/bot/ann"}},
		{"once per namespace", &englishOnly{}, []langWrite{{ann, "de", 25}, {ann, "de", 25}, {bob, "es", 30}, {ann, "de", 5}}, []string{"acme/bot/ann", "acme/bot/bob"}},
		{"recent memories weigh most", &englishOnly{}, []langWrite{{ann, "en", 200}, {ann, "de", 150}}, []string{"acme/bot/ann"}},
		{"embedder covering every language", &enginetest.BagEmbedder{}, []langWrite{{ann, "de", 25}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := &logRecorder{}
			e := newLoggedEngine(t, tc.emb, log)
			for _, w := range tc.writes {
				ms := make([]engram.Memory, w.n)
				for i := range ms {
					ms[i] = engram.Memory{Value: "memory", Language: w.tag}
				}
				if _, err := e.AddMemories(context.Background(), engram.AddMemoriesRequest{Namespace: w.ns, Memories: ms}); err != nil {
					t.Fatal(err)
				}
			}
			if got, _ := log.coverageWarnings(); !slices.Equal(got, tc.want) {
				t.Errorf("warned about %q, want %q", got, tc.want)
			}
		})
	}
}

// TestLanguageCoverageWarningMessage: the warning names the namespace, the
// embedder, the uncovered languages with their shares, and the remedy; it
// comes from memories formed from episodes as well.
func TestLanguageCoverageWarningMessage(t *testing.T) {
	log := &logRecorder{}
	e := newLoggedEngine(t, &englishOnly{BagEmbedder: enginetest.BagEmbedder{ID: "use-lite"}}, log)
	ns := engram.Namespace{Org: "acme", Project: "bot", User: "lena"}
	at := time.Date(2024, 5, 15, 18, 0, 0, 0, time.UTC)
	var eps []engram.EpisodeInput
	for i := range 20 {
		ts := at.Add(time.Duration(i) * time.Minute)
		content := "Gestern war ich mit Anna im Zoo, die Elefanten waren toll."
		if i%5 == 4 {
			content = "Yesterday I went to the zoo with Anna, the elephants were great."
		}
		// Each turn its own, so that none repeats another (which would merge).
		content += fmt.Sprintf(" (%d)", i)
		eps = append(eps, engram.EpisodeInput{Role: "user", Content: content, OccurredAt: &ts})
	}
	if _, err := e.AddEpisodes(context.Background(), engram.AddEpisodesRequest{Namespace: ns, Episodes: eps}); err != nil {
		t.Fatal(err)
	}
	_, msgs := log.coverageWarnings()
	if len(msgs) != 1 {
		t.Fatalf("%d warnings, want 1: %q", len(msgs), msgs)
	}
	for _, want := range []string{"namespace acme/bot/lena", "embedder use-lite", "(de 80%)", "--embedder openai"} {
		if !strings.Contains(msgs[0], want) {
			t.Errorf("warning %q does not say %q", msgs[0], want)
		}
	}
}

// newLoggedEngine returns an engine with embedder emb over a new SQLite
// store, logging to log.
func newLoggedEngine(t *testing.T, emb engram.Embedder, log *logRecorder) *engine.Engine {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "engram.db"))
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(ctx, db, engine.Options{Embedder: emb, Logger: slog.New(log), AccessFlush: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(); db.Close() })
	return e
}
