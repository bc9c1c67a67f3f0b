package retrieval_test

import (
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/retrieval"
)

// words counts whitespace-separated words as tokens, so budgets are easy to
// reason about.
type words struct{}

func (words) Count(s string) int { return len(strings.Fields(s)) }

func TestRender(t *testing.T) {
	at := time.Date(2023, 5, 8, 13, 56, 30, 0, time.FixedZone("x", 3600))
	tests := []struct {
		m    engram.Memory
		want string
	}{
		{engram.Memory{Value: "hi", ValidFrom: &at, Metadata: map[string]any{"speaker": "Ann", "role": "user"}}, "[2023-05-08 12:56] Ann: hi"},
		{engram.Memory{Value: "hi", Metadata: map[string]any{"role": "assistant"}}, "assistant: hi"},
		{engram.Memory{Value: "hi"}, "hi"},
	}
	for _, tt := range tests {
		if got := retrieval.Render(&tt.m); got != tt.want {
			t.Errorf("Render = %q, want %q", got, tt.want)
		}
	}
}

func TestAssemble(t *testing.T) {
	ms := []*engram.Memory{
		{Value: "one two three"},           // 3 tokens + 1
		{Value: "a b c d e f g h i j k l"}, // 12 + 1: never fits in 10
		{Value: "four five"},               // 2 + 1
		{Value: "six seven eight nine"},    // 4 + 1
	}
	taken, pieces, ctx, tokens := retrieval.Assemble(ms, 10, words{})
	// 4 + 3 = 7; the fourth would make 12.
	if got, want := len(taken), 2; got != want || taken[0] != 0 || taken[1] != 2 {
		t.Fatalf("taken = %v, want [0 2]", taken)
	}
	if tokens != 7 {
		t.Errorf("tokens = %d, want 7", tokens)
	}
	if want := "one two three\nfour five"; ctx != want {
		t.Errorf("context = %q, want %q", ctx, want)
	}
	if pieces[0].Tokens != 3 || pieces[1].Tokens != 2 {
		t.Errorf("pieces = %+v", pieces)
	}
	if taken, _, ctx, tokens := retrieval.Assemble(ms, 1, words{}); len(taken) != 0 || ctx != "" || tokens != 0 {
		t.Errorf("tiny budget assembled %v", taken)
	}
}

func TestCL100K(t *testing.T) {
	c, err := retrieval.CL100K()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.Count("hello world"), 2; got != want {
		t.Errorf("Count(hello world) = %d, want %d", got, want)
	}
	if got := c.Count("我昨天去了东京。"); got < 4 {
		t.Errorf("Count of a Chinese sentence = %d, want several tokens", got)
	}
}
