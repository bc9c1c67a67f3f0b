package main

import (
	"fmt"
	"testing"
)

// TestByTurn checks that the per-turn plan posts every turn once, one a
// request, each session whole and in order within one writer.
func TestByTurn(t *testing.T) {
	var convs []conversation
	for c := range 3 {
		conv := conversation{id: fmt.Sprintf("c%d", c)}
		for s := range 4 {
			var eps []episode
			for i := range s + 1 {
				eps = append(eps, episode{Content: fmt.Sprintf("c%d s%d t%d", c, s, i)})
			}
			conv.sessions = append(conv.sessions, eps)
			conv.turns += len(eps)
		}
		convs = append(convs, conv)
	}
	streams := byTurn(convs, 5)
	if len(streams) != 5 {
		t.Fatalf("%d streams, want 5", len(streams))
	}
	seen := map[string]string{}
	users := map[string]bool{}
	for _, w := range streams {
		if users[w.user] {
			t.Errorf("user %s has two streams", w.user)
		}
		users[w.user] = true
		last := map[string]int{}
		for _, r := range w.requests {
			if len(r) != 1 {
				t.Fatalf("request of %d turns, want 1", len(r))
			}
			var c, s, i int
			fmt.Sscanf(r[0].Content, "c%d s%d t%d", &c, &s, &i)
			key := fmt.Sprintf("c%d s%d", c, s)
			if prev, ok := seen[key]; ok && prev != w.user {
				t.Errorf("session %s split between %s and %s", key, prev, w.user)
			}
			seen[key] = w.user
			if n, ok := last[key]; ok && i != n+1 || !ok && i != 0 {
				t.Errorf("%s: turn %d after %d", key, i, n)
			}
			last[key] = i
		}
	}
	total := 0
	for _, w := range streams {
		total += len(w.requests)
	}
	if total != 3*(1+2+3+4) || len(seen) != 12 {
		t.Errorf("%d turns in %d sessions, want 30 in 12", total, len(seen))
	}
	if got := bySession(convs); len(got) != 3 || len(got[1].requests) != 4 || got[1].user != "c1" {
		t.Errorf("bySession = %+v", got)
	}
}
