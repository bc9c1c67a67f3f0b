package engine_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/retrieval"
	"github.com/engramhq/engram/sqlite"
)

// probe is a channel that records the stages a search runs it in and
// finds again, in reverse order, what the channels before it found.
type probe struct{ log *stageLog }

type stageLog struct {
	mu     sync.Mutex
	stages []string
}

func (l *stageLog) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stages = append(l.stages, s)
}

func (l *stageLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.stages
	l.stages = nil
	return out
}

var errProbe = errors.New("probe: asked to fail")

func (probe) Name() string { return "probe" }

func (p probe) Prepare(_ context.Context, g *retrieval.Gathering) (retrieval.Gatherer, error) {
	p.log.add(fmt.Sprintf("prepare reader=%t", g.Reader != nil))
	if strings.Contains(g.Query.Text, "fail") {
		return nil, errProbe
	}
	return &probeSearch{log: p.log, query: g.Query.Text}, nil
}

// probeSearch is the probe prepared for one search: what Prepare saw.
type probeSearch struct {
	log   *stageLog
	query string
}

func (p *probeSearch) Prefetch(g *retrieval.Gathering) {
	p.log.add(fmt.Sprintf("prefetch reader=%t", g.Reader != nil))
}

func (p *probeSearch) Gather(_ context.Context, g *retrieval.Gathering) ([]retrieval.Find, error) {
	p.log.add(fmt.Sprintf("gather %q reader=%t", p.query, g.Reader != nil))
	before := g.Candidates()
	out := make([]retrieval.Find, len(before))
	for i, c := range before {
		out[len(before)-1-i] = retrieval.Find{Memory: c.Memory, Rank: len(before) - i, Score: float64(i + 1)}
	}
	return out, nil
}

// TestChannelStages: a search runs a channel in its stages (Prepare
// without a transaction, then Prefetch and Gather in one, the gatherer
// holding what Prepare found), a channel sees the finds of the channels
// registered before it, and its own finds reach fusion and the
// explanation under its name; a failing Prepare fails the search.
func TestChannelStages(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "engram.db"))
	if err != nil {
		t.Fatal(err)
	}
	log := &stageLog{}
	e, err := engine.New(ctx, db, engine.Options{Channels: []retrieval.Channel{probe{log}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(); db.Close() })
	ns := engram.Namespace{Org: "acme", Project: "p", User: "alice"}
	addValues(t, e, ns, nil, "Caroline went surfing at dawn.", "Caroline surfs in the cold sea.", "The clock stopped.")
	log.take()
	q := "Where does Caroline go surfing?"
	res, err := e.Search(ctx, engram.SearchRequest{Scope: engram.ScopeOf(ns), Query: q, K: 10, Explain: true,
		Channels: []string{engine.ChannelBM25, "probe"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"prepare reader=false", "prefetch reader=true", fmt.Sprintf("gather %q reader=true", q)}
	if got := log.take(); !slices.Equal(got, want) {
		t.Errorf("stages %q, want %q", got, want)
	}
	if len(res.Hits) != 2 {
		t.Fatalf("%d hits, want the 2 about surfing", len(res.Hits))
	}
	for _, h := range res.Hits {
		i := slices.IndexFunc(h.Explain, func(c engram.ChannelHit) bool { return c.Channel == engine.ChannelBM25 })
		j := slices.IndexFunc(h.Explain, func(c engram.ChannelHit) bool { return c.Channel == "probe" })
		if i < 0 || j < 0 || h.Explain[i].Rank+h.Explain[j].Rank != 3 {
			t.Errorf("hit %q explained %v, want a full-text rank and the probe's reverse of it", h.Memory.Value, h.Explain)
		}
	}
	_, err = e.Search(ctx, engram.SearchRequest{Scope: engram.ScopeOf(ns), Query: "fail now", Channels: []string{"probe"}})
	if !errors.Is(err, errProbe) {
		t.Errorf("search with a failing Prepare: %v, want %v", err, errProbe)
	}
}
