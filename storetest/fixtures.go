package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
)

// T0 is the reference time of fixtures: UTC, truncated to microseconds,
// with a fractional second so that precision loss shows.
var T0 = time.Date(2025, 3, 14, 15, 9, 26, 535897000, time.UTC)

// At returns T0 plus d.
func At(d time.Duration) time.Time { return T0.Add(d) }

// Ptr returns a pointer to t.
func Ptr(t time.Time) *time.Time { return &t }

// Episode returns a valid text episode with a new id in ns, occurred and
// received at T0.
func Episode(ns engram.Namespace, content string) *engram.Episode {
	return &engram.Episode{
		ID: engram.NewID(), Namespace: ns, Role: "user", Content: content,
		Modality: engram.ModalityText, OccurredAt: T0, ReceivedAt: T0,
	}
}

// Memory returns a valid active semantic memory with a new id in ns,
// created at T0, at version 1.
func Memory(ns engram.Namespace, value string) *engram.Memory {
	return &engram.Memory{
		ID: engram.NewID(), Namespace: ns, Kind: engram.KindSemantic, Value: value,
		Confidence: 0.8, Importance: 0.5, Status: engram.StatusActive,
		CreatedAt: T0, UpdatedAt: T0, Version: 1,
	}
}

// Version returns version n of m, recording op with m as the new state.
func Version(m *engram.Memory, n int, op engram.Op) *engram.Version {
	c := *m
	return &engram.Version{
		MemoryID: m.ID, Namespace: m.Namespace, Version: n, Op: op, New: &c,
		Actor: "tester", Reason: "fixture", At: T0,
	}
}

// Audit returns an audit entry with a new id in ns.
func Audit(ns engram.Namespace, op string, ids ...string) *engram.AuditEntry {
	return &engram.AuditEntry{ID: engram.NewID(), Namespace: ns, Actor: "tester", Op: op, IDs: ids, At: T0}
}

// Put inserts records (*engram.Episode, *engram.Memory, *engram.Version,
// *engram.AuditEntry) in one Update, failing the test on any error.
func Put(t testing.TB, st engram.Store, recs ...any) {
	t.Helper()
	err := st.Update(context.Background(), func(tx engram.Tx) error {
		return insert(context.Background(), tx, recs...)
	})
	if err != nil {
		t.Fatalf("Put: %v", err)
	}
}

func insert(ctx context.Context, tx engram.Tx, recs ...any) error {
	for _, r := range recs {
		var err error
		switch r := r.(type) {
		case *engram.Episode:
			err = tx.InsertEpisode(ctx, r)
		case *engram.Memory:
			err = tx.InsertMemory(ctx, r)
		case *engram.Version:
			err = tx.InsertVersion(ctx, r)
		case *engram.AuditEntry:
			err = tx.InsertAudit(ctx, r)
		default:
			return fmt.Errorf("storetest: cannot insert %T", r)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// idRE matches an id engram.NewID makes (a ULID: 26 characters of
// Crockford's base 32).
var idRE = regexp.MustCompile(`\b[0-9A-HJKMNP-TV-Z]{26}\b`)

// wantCode fails unless err carries code. For coded errors it also checks
// that the message does not leak database internals.
func wantCode(t testing.TB, what string, err error, code string) {
	t.Helper()
	if got := engram.ErrorCode(err); got != code {
		t.Errorf("%s: error code %q (%v), want %q", what, got, err, code)
		return
	}
	// Ids are left out first: a random one may spell a marker ("…PQ:").
	msg := strings.ToLower(idRE.ReplaceAllString(engram.ErrorMessage(err), "<id>"))
	for _, leak := range []string{"sql", "constraint", "unique", "syntax", "select ", "insert ", "pq:", "sqlstate"} {
		if strings.Contains(msg, leak) {
			t.Errorf("%s: error message %q leaks %q", what, engram.ErrorMessage(err), leak)
		}
	}
}

func getEpisode(t testing.TB, st engram.Store, s engram.Scope, id string) (*engram.Episode, error) {
	t.Helper()
	var e *engram.Episode
	err := st.View(ctx, func(r engram.Reader) error {
		var err error
		e, err = r.GetEpisode(ctx, s, id)
		return err
	})
	return e, err
}

func getMemory(t testing.TB, st engram.Store, s engram.Scope, id string) (*engram.Memory, error) {
	t.Helper()
	var m *engram.Memory
	err := st.View(ctx, func(r engram.Reader) error {
		var err error
		m, err = r.GetMemory(ctx, s, id)
		return err
	})
	return m, err
}

func mustMemory(t testing.TB, st engram.Store, s engram.Scope, id string) *engram.Memory {
	t.Helper()
	m, err := getMemory(t, st, s, id)
	if err != nil {
		t.Fatalf("GetMemory(%s): %v", id, err)
	}
	return m
}

func search(t testing.TB, st engram.Store, s engram.Scope, q string, f engram.MemoryFilter, k int) []engram.TextHit {
	t.Helper()
	var hits []engram.TextHit
	view(t, st, func(r engram.Reader) error {
		var err error
		hits, err = r.SearchText(ctx, s, q, f, k)
		return err
	})
	return hits
}

// allPages reads, in one View, every page list returns, setting *cursor
// to the next page's cursor before each further call.
func allPages[T any](t testing.TB, st engram.Store, cursor *string, list func(r engram.Reader) ([]T, string, error)) []T {
	t.Helper()
	var out []T
	view(t, st, func(r engram.Reader) error {
		for {
			page, next, err := list(r)
			if err != nil {
				return err
			}
			out = append(out, page...)
			if next == "" {
				return nil
			}
			*cursor = next
		}
	})
	return out
}

func listMemories(t testing.TB, st engram.Store, s engram.Scope, f engram.MemoryFilter) []engram.Memory {
	t.Helper()
	return allPages(t, st, &f.Cursor, func(r engram.Reader) ([]engram.Memory, string, error) { return r.ListMemories(ctx, s, f) })
}

func listEpisodes(t testing.TB, st engram.Store, s engram.Scope, f engram.EpisodeFilter) []engram.Episode {
	t.Helper()
	return allPages(t, st, &f.Cursor, func(r engram.Reader) ([]engram.Episode, string, error) { return r.ListEpisodes(ctx, s, f) })
}

func listAudit(t testing.TB, st engram.Store, s engram.Scope, f engram.AuditFilter) []engram.AuditEntry {
	t.Helper()
	return allPages(t, st, &f.Cursor, func(r engram.Reader) ([]engram.AuditEntry, string, error) { return r.Audit(ctx, s, f) })
}

func exportAll(t testing.TB, st engram.Store, s engram.Scope) []engram.Record {
	t.Helper()
	var out []engram.Record
	view(t, st, func(r engram.Reader) error {
		return r.Export(ctx, s, func(rec engram.Record) error {
			out = append(out, rec)
			return nil
		})
	})
	return out
}

// idsOf returns id of each of xs, in order.
func idsOf[T any](xs []T, id func(T) string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = id(x)
	}
	return out
}

func memoryIDs(ms []engram.Memory) []string {
	return idsOf(ms, func(m engram.Memory) string { return m.ID })
}

func hitIDs(hs []engram.TextHit) []string {
	return idsOf(hs, func(h engram.TextHit) string { return h.Memory.ID })
}

func episodeIDs(es []engram.Episode) []string {
	return idsOf(es, func(e engram.Episode) string { return e.ID })
}

func auditIDs(as []engram.AuditEntry) []string {
	return idsOf(as, func(a engram.AuditEntry) string { return a.ID })
}

// sameSet reports whether a and b hold the same strings, ignoring order;
// duplicates count.
func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// sameJSON fails unless got and want encode to the same JSON. Comparing the
// encodings treats nil and empty slices and maps alike, compares metadata
// the way it is stored (numbers as JSON numbers), and compares times as
// RFC 3339 text, which also requires them to be in UTC.
func sameJSON(t testing.TB, what string, got, want any) {
	t.Helper()
	g, err := json.Marshal(got)
	if err != nil {
		t.Fatalf("%s: marshal got: %v", what, err)
	}
	w, err := json.Marshal(want)
	if err != nil {
		t.Fatalf("%s: marshal want: %v", what, err)
	}
	if string(g) != string(w) {
		t.Errorf("%s:\n got %s\nwant %s", what, g, w)
	}
}

var errBoom = errors.New("storetest: boom")
