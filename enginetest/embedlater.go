package enginetest

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
)

// heldEmbedder is a BagEmbedder whose calls wait while it is held (only
// those with a text containing on, when on is set), and fail while fails
// is above zero (counting it down).
type heldEmbedder struct {
	BagEmbedder
	mu    sync.Mutex
	held  chan struct{} // closed to let held calls through; nil: not held
	on    string
	fails atomic.Int64
	// waiting counts the calls held now.
	waiting atomic.Int64
}

func (h *heldEmbedder) hold() { h.holdOn("") }

// holdOn holds the calls with a text that contains on ("": every call).
func (h *heldEmbedder) holdOn(on string) {
	h.mu.Lock()
	h.held, h.on = make(chan struct{}), on
	h.mu.Unlock()
}

func (h *heldEmbedder) release() {
	h.mu.Lock()
	if h.held != nil {
		close(h.held)
		h.held = nil
	}
	h.mu.Unlock()
}

func (h *heldEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	h.mu.Lock()
	held, on := h.held, h.on
	h.mu.Unlock()
	if on != "" && !slices.ContainsFunc(texts, func(t string) bool { return strings.Contains(t, on) }) {
		held = nil
	}
	if held != nil {
		h.waiting.Add(1)
		select {
		case <-held:
			h.waiting.Add(-1)
		case <-ctx.Done():
			h.waiting.Add(-1)
			return nil, ctx.Err()
		}
	}
	if h.fails.Add(-1) >= 0 {
		return nil, errors.New("embedder out of service")
	}
	return h.BagEmbedder.Embed(ctx, texts)
}

// laterEngine is an engine over st that embeds in background jobs: an
// embedder, one worker polling often, retries after 10 ms.
func laterEngine(t *testing.T, st engram.Store, emb engram.Embedder) *engine.Engine {
	t.Helper()
	e, err := engine.New(ctx, st, engine.Options{Embedder: emb, Workers: 1, JobPoll: 10 * time.Millisecond,
		JobBackoff: 10 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// laterSetup is a store from open and a laterEngine over it with a
// heldEmbedder, all closed (the embedder released first) when t ends.
func laterSetup(t *testing.T, open Open) (engram.Store, *heldEmbedder, *engine.Engine) {
	t.Helper()
	st := open(t)
	t.Cleanup(func() { st.Close() })
	emb := &heldEmbedder{}
	e := laterEngine(t, st, emb)
	t.Cleanup(func() { e.Close() })
	t.Cleanup(emb.release)
	return st, emb, e
}

// addTurn adds one turn of Alice's at at, failing the test if the add
// does not answer within a minute (it must not wait for a held embedder).
func addTurn(t *testing.T, e *engine.Engine, at time.Time, text string) *engram.AddEpisodesResult {
	t.Helper()
	return addTurnBy(t, e, at, "Alice", text)
}

// addTurnBy is addTurn with another speaker.
func addTurnBy(t *testing.T, e *engine.Engine, at time.Time, speaker, text string) *engram.AddEpisodesResult {
	t.Helper()
	type result struct {
		res *engram.AddEpisodesResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := e.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: nsA,
			Episodes: []engram.EpisodeInput{{Role: "user", Speaker: speaker, Content: text, OccurredAt: &at}}})
		done <- result{res, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatalf("add %q: %v", text, r.err)
		}
		return r.res
	case <-time.After(time.Minute):
		t.Fatalf("add %q waited for the embedder", text)
	}
	return nil
}

// textIDs lists the memories a full-text-only search for q finds.
func textIDs(t *testing.T, e *engine.Engine, q string) []string {
	t.Helper()
	res, err := e.Search(ctx, engram.SearchRequest{Scope: scA, Query: q, K: 10, Channels: []string{engine.ChannelBM25}})
	if err != nil {
		t.Fatalf("full-text search %q: %v", q, err)
	}
	var ids []string
	for _, h := range res.Hits {
		ids = append(ids, h.Memory.ID)
	}
	return ids
}

func waitJobDone(t *testing.T, e *engine.Engine, j *engram.Job) {
	t.Helper()
	waitUntil(t, "embed job "+j.ID+" done", 30*time.Second, func() bool { return jobState(t, e, j.Namespace, j.ID).State == engram.JobDone })
}

// storedVector returns the stored vector of one field of a memory, nil
// when it has none.
func storedVector(t *testing.T, st engram.Store, emb engram.Embedder, id, field string) []float32 {
	t.Helper()
	var out []float32
	err := st.View(ctx, func(r engram.Reader) error {
		recs, err := r.GetVectors(ctx, nsA, emb.Name(), []string{id})
		for _, rec := range recs {
			if rec.Field == field {
				out = rec.Vec
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// testEmbedLater: an add of episodes answers while the embedder is held,
// with an embed job naming its memories; full-text search finds the new
// turn at once, the dense channel once the job is done. The next turn, by
// another speaker, is found by full text at once; its job names the turn
// before too, whose abstraction gains the answer as context and which
// links to it once the job ran: its stored vector is then that of its new
// abstraction. In English, German and Spanish.
func testEmbedLater(t *testing.T, open Open) {
	for _, tc := range []struct{ lang, first, second, word, marker string }{
		{"en", "I adopted a beagle called Rufus.", "Does he like chasing squirrels in the park?", "beagle", "squirrels"},
		{"de", "Ich habe einen Beagle namens Rufus adoptiert.", "Jagt er gern Eichhörnchen im Park?", "Beagle", "Eichhörnchen"},
		{"es", "Adopté un beagle llamado Rufus.", "¿Le gusta perseguir ardillas en el parque?", "beagle", "ardillas"},
	} {
		t.Run(tc.lang, func(t *testing.T) {
			st, emb, e := laterSetup(t, open)
			emb.hold()
			first := addTurn(t, e, t0, tc.first)
			j := first.EmbedJob
			if j == nil || j.Kind != engram.JobEmbed || len(first.Memories) == 0 || !slices.Contains(j.Memories, first.Memories[0].ID) {
				t.Fatalf("add: embed job %+v, memories %d; want a job naming the new memory", j, len(first.Memories))
			}
			// While the job waits (a search's dense channel would wait
			// for the held embedder too, so the text channel answers).
			turn := first.Memories[0].ID
			if ids := textIDs(t, e, tc.word); !slices.Contains(ids, turn) {
				t.Errorf("full-text search %q right after the add = %v, want the new turn (read-your-writes)", tc.word, ids)
			}
			if v := storedVector(t, st, emb, turn, engram.FieldValue); v != nil {
				t.Errorf("the turn has a stored vector before its embed job ran")
			}
			if st := jobState(t, e, nsA, j.ID).State; st == engram.JobDone {
				t.Errorf("embed job done while the embedder is held")
			}
			if hasEntity(t, e, "Rufus") {
				t.Error("the add staged the turn's graph; want it left to the job")
			}
			emb.release()
			waitJobDone(t, e, j)
			if ids := denseIDs(t, e, scA, tc.word); !slices.Contains(ids, turn) {
				t.Errorf("dense search after the embed job = %v, want the turn", ids)
			}
			if en := entityByName(t, e, scA, "Rufus"); en.Mentions != 1 {
				t.Errorf("Rufus after the embed job: %d mentions, want 1", en.Mentions)
			}

			// Bob answers: the turn before gains his answer as context, in
			// the job, which is held while it embeds that.
			emb.holdOn(tc.marker)
			second := addTurnBy(t, e, t0.Add(time.Minute), "Bob", tc.second)
			if second.EmbedJob == nil || !slices.Contains(second.EmbedJob.Memories, turn) {
				t.Fatalf("second add's embed job %+v, want it to name the turn before (%s)", second.EmbedJob, turn)
			}
			if m := getMemory(t, e, turn); strings.Contains(m.Abstraction, tc.marker) || m.Metadata[engram.MetaNext] != nil {
				t.Errorf("the turn before changed before the embed job ran: %q %v", m.Abstraction, m.Metadata)
			}
			if ids := textIDs(t, e, tc.marker); !slices.Contains(ids, second.Memories[0].ID) {
				t.Errorf("full-text search %q right after the second add = %v, want the new turn", tc.marker, ids)
			}
			emb.release()
			waitJobDone(t, e, second.EmbedJob)
			m := getMemory(t, e, turn)
			if !strings.Contains(m.Abstraction, tc.marker) || m.Metadata[engram.MetaNext] != second.Memories[0].ID {
				t.Errorf("after the embed job the turn before is %q %v, want Bob's answer as context and a link to it", m.Abstraction, m.Metadata)
			}
			want, _ := emb.BagEmbedder.Embed(ctx, []string{m.Abstraction})
			if got := storedVector(t, st, emb, turn, engram.FieldAbstraction); !slices.Equal(got, want[0]) {
				t.Errorf("the turn before's stored abstraction vector is not that of its abstraction now %q", m.Abstraction)
			}
			if v := storedVector(t, st, emb, second.Memories[0].ID, engram.FieldValue); v == nil {
				t.Errorf("the second turn has no stored vector after its embed job")
			}
		})
	}
}

// testEmbedLaterRetries: an embed job whose embedder fails is retrying,
// with the error, and is done once the embedder works again; the memory
// is then found by the dense channel.
func testEmbedLaterRetries(t *testing.T, open Open) {
	_, emb, e := laterSetup(t, open)
	emb.fails.Store(3)
	res := addTurn(t, e, t0, "My sister Carmen lives in Valencia.")
	j := res.EmbedJob
	if j == nil {
		t.Fatal("no embed job")
	}
	var seen *engram.Job
	waitUntil(t, "the embed job retrying", 30*time.Second, func() bool {
		got := jobState(t, e, nsA, j.ID)
		if got.State == engram.JobRetrying || got.State == engram.JobDone && got.Attempts > 1 {
			seen = got
			return true
		}
		return false
	})
	if seen.State == engram.JobRetrying && seen.LastError == "" {
		t.Errorf("retrying job has no last error")
	}
	waitJobDone(t, e, j)
	if got := jobState(t, e, nsA, j.ID); got.Attempts != 4 {
		t.Errorf("attempts = %d, want 4 (three failures, then done)", got.Attempts)
	}
	if ids := denseIDs(t, e, scA, "Carmen Valencia"); !slices.Contains(ids, res.Memories[0].ID) {
		t.Errorf("dense search after the retried job = %v, want the turn", ids)
	}
}

// testEmbedLaterRestart: an embed job left queued by an engine that
// closed before it ran is run by the next engine on the store; nothing
// acknowledged is lost.
func testEmbedLaterRestart(t *testing.T, open Open) {
	st := open(t)
	defer st.Close()
	emb := &heldEmbedder{}
	emb.hold()
	first := laterEngine(t, st, emb)
	res := addTurn(t, first, t0, "Wir fahren im August nach Lissabon.")
	// A held call gives up with the worker's context; the job goes back
	// to the queue.
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	if got := jobState(t, first, nsA, res.EmbedJob.ID); got.State == engram.JobDone {
		t.Fatalf("embed job done by an engine whose embedder never answered")
	}
	second := laterEngine(t, st, &heldEmbedder{})
	defer second.Close()
	waitJobDone(t, second, res.EmbedJob)
	if ids := denseIDs(t, second, scA, "Lissabon August"); !slices.Contains(ids, res.Memories[0].ID) {
		t.Errorf("dense search after restart = %v, want the turn", ids)
	}
	if n := countEpisodes(t, second, scA); n != 1 {
		t.Errorf("episodes after restart = %d, want 1", n)
	}
}

// testEmbedInline: with EmbedInline an add embeds before it answers: no
// embed job, and the dense channel finds the turn at once.
func testEmbedInline(t *testing.T, open Open) {
	emb := &BagEmbedder{}
	e := newEngine(t, open, engine.Options{Embedder: emb, Workers: 1, EmbedInline: true, Logger: slog.New(slog.DiscardHandler)})
	res := addTurn(t, e, t0, "Mi hermano toca el violonchelo.")
	if res.EmbedJob != nil {
		t.Errorf("inline add made embed job %+v", res.EmbedJob)
	}
	if ids := denseIDs(t, e, scA, "violonchelo"); !slices.Contains(ids, res.Memories[0].ID) {
		t.Errorf("dense search right after an inline add = %v, want the turn", ids)
	}
}

// testEmbedLaterEdited: a held update of the turn before is dropped when
// the turn was edited after the add (the edit wins, as during an add),
// and the new turn is still embedded. A turn edited before its own job
// ran has the graph of its edit, each entity mentioned once.
func testEmbedLaterEdited(t *testing.T, open Open) {
	st, emb, e := laterSetup(t, open)
	// The first turn's job is held while it embeds the turn as added; the
	// edit, made meanwhile, embeds its own text and stages its graph.
	emb.holdOn("called Rufus.")
	first := addTurn(t, e, t0, "I adopted a beagle called Rufus.")
	turn := first.Memories[0].ID
	waitUntil(t, "the first job running", 10*time.Second, func() bool {
		return jobState(t, e, nsA, first.EmbedJob.ID).State == engram.JobRunning
	})
	renamed := "I adopted a beagle called Rufus, and Max too."
	if _, err := e.UpdateMemory(ctx, scA, turn, engram.MemoryPatch{Value: &renamed, Abstraction: &renamed}); err != nil {
		t.Fatal(err)
	}
	emb.release()
	waitJobDone(t, e, first.EmbedJob)
	for _, name := range []string{"Rufus", "Max"} {
		if en := entityByName(t, e, scA, name); en.Mentions != 1 {
			t.Errorf("%s after the edit and the job: %d mentions, want 1", name, en.Mentions)
		}
	}
	emb.holdOn("squirrels")
	second := addTurnBy(t, e, t0.Add(time.Minute), "Bob", "Does he like chasing squirrels?")
	edited := "I adopted a beagle called Rufus last spring."
	if _, err := e.UpdateMemory(ctx, scA, turn, engram.MemoryPatch{Value: &edited}); err != nil {
		t.Fatal(err)
	}
	emb.release()
	waitJobDone(t, e, second.EmbedJob)
	m := getMemory(t, e, turn)
	if m.Value != edited || strings.Contains(m.Abstraction, "squirrels") {
		t.Errorf("turn before after the job: value %q, abstraction %q; want the edit, without the held update", m.Value, m.Abstraction)
	}
	if v := storedVector(t, st, emb, second.Memories[0].ID, engram.FieldValue); v == nil {
		t.Errorf("the second turn has no stored vector after its embed job")
	}
}

// testEditEmbedsOutsideWriter: an edit embeds its new texts before its
// write transaction, so other writes go on while the encoder works on it,
// and the edit is then found by the dense channel.
func testEditEmbedsOutsideWriter(t *testing.T, open Open) {
	_, emb, e := laterSetup(t, open)
	first := addTurn(t, e, t0, "I adopted a beagle called Rufus.")
	waitJobDone(t, e, first.EmbedJob)
	turn := first.Memories[0].ID
	edited := "I adopted a beagle called Rufus and a parrot called Kiwi."
	emb.holdOn("parrot called Kiwi")
	done := make(chan error, 1)
	go func() {
		_, err := e.UpdateMemory(ctx, scA, turn, engram.MemoryPatch{Value: &edited})
		done <- err
	}()
	waitUntil(t, "the edit embedding", 10*time.Second, func() bool { return emb.waiting.Load() > 0 })
	added := make(chan error, 1)
	go func() {
		at := t0.Add(time.Hour)
		_, err := e.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: nsA,
			Episodes: []engram.EpisodeInput{{Role: "user", Speaker: "Alice", Content: "We walked by the river.", OccurredAt: &at}}})
		added <- err
	}()
	select {
	case err := <-added:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Error("an add waited for the encoder working on an edit")
	}
	emb.release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if ids := denseIDs(t, e, scA, "parrot Kiwi"); !slices.Contains(ids, turn) {
		t.Errorf("dense search after the edit = %v, want the edited turn", ids)
	}
}

// hasEntity reports whether alice's graph names an entity name.
func hasEntity(t *testing.T, e *engine.Engine, name string) bool {
	t.Helper()
	page, err := e.ListEntities(ctx, scA, engram.EntityFilter{Prefix: name, Limit: engram.MaxEntityLimit})
	if err != nil {
		t.Fatal(err)
	}
	return slices.ContainsFunc(page.Entities, func(en engram.Entity) bool { return en.Norm == engram.NormalizeName(name) })
}

func getMemory(t *testing.T, e *engine.Engine, id string) *engram.Memory {
	t.Helper()
	m, err := e.GetMemory(ctx, scA, id)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
