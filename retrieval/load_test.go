package retrieval

import (
	"context"
	"slices"
	"testing"

	"github.com/engramhq/engram"
)

// countingReader serves memories by id and records each GetMemories call.
type countingReader struct {
	engram.Reader
	ms    map[string]engram.Memory
	calls [][]string
}

func (r *countingReader) GetMemories(_ context.Context, s engram.Scope, ids []string) ([]engram.Memory, error) {
	r.calls = append(r.calls, slices.Clone(ids))
	var out []engram.Memory
	for _, id := range ids {
		if m, ok := r.ms[id]; ok && s.Contains(m.Namespace) {
			out = append(out, m)
		}
	}
	return out, nil
}

// judgeAll is a text index that keeps every memory, sure of it.
type judgeAll struct{}

func (judgeAll) SearchText(string, engram.MemoryFilter, int) []TextScore     { return nil }
func (judgeAll) Judge(*engram.Memory, engram.MemoryFilter) (bool, bool)      { return true, true }
func (judgeAll) Memories(ids []string, _ map[string]*engram.Memory) []string { return ids }
func (judgeAll) Remember([]engram.Memory)                                    {}

// TestLoadReadsEachMemoryOnce: two channels loading overlapping ids in one
// transaction read each id from the store once, unknown and out-of-scope
// ids included; a new transaction reads again.
func TestLoadReadsEachMemoryOnce(t *testing.T) {
	ctx := context.Background()
	mine := engram.Namespace{Org: "o", Project: "p", User: "u"}
	other := engram.Namespace{Org: "o", Project: "p", User: "v"}
	r := &countingReader{ms: map[string]engram.Memory{
		"a": {ID: "a", Namespace: mine}, "b": {ID: "b", Namespace: mine},
		"c": {ID: "c", Namespace: mine}, "x": {ID: "x", Namespace: other},
	}}
	g := NewGathering(r, engram.ScopeOf(mine), engram.MemoryFilter{}, &Query{}, &Config{}, 10)
	g.Text = judgeAll{}
	first, err := g.Load(ctx, []string{"a", "b", "x", "gone"})
	if err != nil {
		t.Fatal(err)
	}
	second, err := g.loadFound(ctx, engram.MemoryFilter{}, []string{"b", "c", "x", "gone"})
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != 2 || first["a"] == nil || first["b"] == nil || len(second) != 2 || second["b"] == nil || second["c"] == nil {
		t.Errorf("loaded %v then %v, want a, b then b, c (never another user's x)", keys(first), keys(second))
	}
	want := [][]string{{"a", "b", "x", "gone"}, {"c"}}
	if !slices.EqualFunc(r.calls, want, slices.Equal[[]string]) {
		t.Errorf("store reads %v, want %v", r.calls, want)
	}
	g.SetReader(&countingReader{ms: r.ms}) // the next transaction
	if _, err := g.Load(ctx, []string{"a"}); err != nil {
		t.Fatal(err)
	}
	if calls := g.Reader.(*countingReader).calls; len(calls) != 1 {
		t.Errorf("a new transaction read %v, want a again", calls)
	}
}

func keys(m map[string]*engram.Memory) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
