package llmformer_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/llmformer"
	"github.com/engramhq/engram/openai"
	"github.com/engramhq/engram/openai/openaitest"
)

var ns = engram.Namespace{Org: "acme", Project: "app", User: "alice"}

var t0 = time.Date(2024, 6, 10, 9, 0, 0, 0, time.UTC)

// newFormer returns a former talking to a fresh fake server.
func newFormer(t *testing.T, opts openaitest.Options, cfg openai.Config) (*llmformer.Former, *openaitest.Server) {
	t.Helper()
	srv := openaitest.NewServer(t, opts)
	cfg.BaseURL, cfg.Model = srv.URL(), "fake-model"
	if cfg.RetryBase == 0 {
		cfg.RetryBase = time.Millisecond
	}
	chat, err := openai.NewChat(cfg)
	if err != nil {
		t.Fatal(err)
	}
	f, err := llmformer.New(llmformer.Config{LLM: chat, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return f, srv
}

func episodes(texts ...string) []engram.Episode {
	eps := make([]engram.Episode, len(texts))
	for i, s := range texts {
		eps[i] = engram.Episode{ID: engram.NewID(), Namespace: ns, Role: "user", Speaker: "Alice", Content: s, OccurredAt: t0.Add(time.Duration(i) * time.Minute)}
	}
	return eps
}

// fact is one extracted memory as the fake model writes it.
func fact(kind, abstraction, value string, extra ...string) string {
	m := map[string]any{
		"kind": kind, "abstraction": abstraction, "cues": []string{}, "value": value, "language": "",
		"about": "user", "valid_from": "", "valid_to": "", "foresight": false,
		"confidence": 0.9, "importance": 0.6, "profile": "", "sources": []int{1},
	}
	for i := 0; i+1 < len(extra); i += 2 {
		var v any
		if err := json.Unmarshal([]byte(extra[i+1]), &v); err != nil {
			v = extra[i+1]
		}
		m[extra[i]] = v
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func extraction(facts ...string) string {
	return `{"episodes": [], "memories": [` + strings.Join(facts, ",") + `]}`
}

// reader is an in-memory view of one scope; SearchText returns every
// memory it holds, in order.
type reader struct{ ms []engram.Memory }

func (r *reader) Scope() engram.Scope { return engram.ScopeOf(ns) }
func (r *reader) GetMemory(_ context.Context, id string) (*engram.Memory, error) {
	for i := range r.ms {
		if r.ms[i].ID == id {
			return &r.ms[i], nil
		}
	}
	return nil, engram.Errorf(engram.ENOTFOUND, "memory %s not found", id)
}
func (r *reader) ListMemories(_ context.Context, f engram.MemoryFilter) ([]engram.Memory, string, error) {
	var out []engram.Memory
	for _, m := range r.ms {
		if want, ok := f.Metadata[engram.MetaProfile]; ok && m.Metadata[engram.MetaProfile] != want {
			continue
		}
		out = append(out, m)
	}
	return out, "", nil
}
func (r *reader) SearchText(_ context.Context, _ string, _ engram.MemoryFilter, limit int) ([]engram.TextHit, error) {
	var out []engram.TextHit
	for _, m := range r.ms {
		if len(out) < limit {
			out = append(out, engram.TextHit{Memory: m, Score: 1})
		}
	}
	return out, nil
}

// CurrentProfile returns the profile memory the reader holds in exactly
// the profile namespace of its scope's user, nil when it holds none.
func (r *reader) CurrentProfile(context.Context) (*engram.Memory, error) {
	for i := range r.ms {
		if r.ms[i].Namespace == engram.ProfileNamespace(ns) && engram.IsProfile(&r.ms[i]) {
			return &r.ms[i], nil
		}
	}
	return nil, nil
}

// ListEpisodes lists none: the reader holds memories only.
func (r *reader) ListEpisodes(context.Context, engram.EpisodeFilter) ([]engram.Episode, string, error) {
	return nil, "", nil
}

func stored(values ...string) *reader {
	r := &reader{}
	for _, v := range values {
		at := t0.AddDate(0, -3, 0)
		r.ms = append(r.ms, engram.Memory{ID: engram.NewID(), Namespace: ns, Kind: engram.KindSemantic, Value: v, Abstraction: v, Status: engram.StatusActive, ValidFrom: &at})
	}
	return r
}

func TestDecisions(t *testing.T) {
	cases := []struct {
		decision string
		target   int
		value    string
		wantOp   engram.Op
		wantTgt  int // index in the stored memories, -1 for none
		wantVal  string
	}{
		{"ADD", 0, "", engram.OpAdd, -1, "Alice lives in Munich"},
		{"MERGE", 2, "Alice lives in Munich, in Schwabing", engram.OpMerge, 1, "Alice lives in Munich, in Schwabing"},
		{"UPDATE", 1, "Alice is vegetarian but eats fish", engram.OpUpdate, 0, "Alice is vegetarian but eats fish"},
		{"SUPERSEDE", 2, "", engram.OpSupersede, 1, "Alice lives in Munich"},
		{"DELETE", 1, "", engram.OpDelete, 0, ""},
		{"NOOP", 2, "", engram.OpNoop, 1, ""},
		{"CONFLICT", 2, "", engram.OpConflict, 1, "Alice lives in Munich"},
	}
	for _, c := range cases {
		t.Run(c.decision, func(t *testing.T) {
			f, srv := newFormer(t, openaitest.Options{StructuredOutputs: true}, openai.Config{})
			srv.QueueChat(extraction(fact("semantic", "lives in", "Alice lives in Munich")),
				fmt.Sprintf(`{"decision": %q, "target": %d, "reason": "because %s", "abstraction": "", "value": %q, "cues": []}`, c.decision, c.target, c.decision, c.value))
			r := stored("Alice is vegetarian", "Alice lives in Berlin")
			eps := episodes("I moved to Munich")
			ops, err := f.Form(context.Background(), engram.FormRequest{View: r, Episodes: eps})
			if err != nil {
				t.Fatal(err)
			}
			if len(ops) != 1 {
				t.Fatalf("ops = %+v, want one", ops)
			}
			op := ops[0]
			if op.Op != c.wantOp {
				t.Errorf("op = %s, want %s", op.Op, c.wantOp)
			}
			wantID := ""
			if c.wantTgt >= 0 {
				wantID = r.ms[c.wantTgt].ID
			}
			if op.TargetID != wantID {
				t.Errorf("target = %q, want %q", op.TargetID, wantID)
			}
			if op.Memory.Value != c.wantVal {
				t.Errorf("value = %q, want %q", op.Memory.Value, c.wantVal)
			}
			if c.wantVal != "" && (len(op.Memory.Sources) != 1 || op.Memory.Sources[0] != eps[0].ID) {
				t.Errorf("sources = %v, want the turn %s", op.Memory.Sources, eps[0].ID)
			}
			if c.decision != "ADD" && !strings.Contains(op.Reason, "because "+c.decision) {
				t.Errorf("reason = %q, want the model's", op.Reason)
			}
			if c.wantOp == engram.OpSupersede && (op.Memory.ValidFrom == nil || !op.Memory.ValidFrom.Equal(t0)) {
				t.Errorf("supersede valid_from = %v, want the turn's time %v", op.Memory.ValidFrom, t0)
			}
			reqs := srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests, want extraction and one decision", len(reqs))
			}
			prompt := reqs[1].Chat.Messages[1].Content
			for _, m := range r.ms {
				if strings.Contains(prompt, m.ID) {
					t.Errorf("the decision prompt shows the raw id %s: %s", m.ID, prompt)
				}
			}
			if !strings.Contains(prompt, "[2] ") || reqs[1].Chat.ResponseFormat.Type != "json_schema" {
				t.Errorf("decision request: format %+v, prompt %q", reqs[1].Chat.ResponseFormat, prompt)
			}
		})
	}
}

func TestFormWithoutNeighboursAddsWithoutAsking(t *testing.T) {
	f, srv := newFormer(t, openaitest.Options{StructuredOutputs: true}, openai.Config{})
	srv.QueueChat(`{"episodes": [{"turns": [1, 2], "title": "moving", "summary": "Alice tells that she moved to Munich and plans to start a job."}],
		"memories": [`+fact("core", "home", "Alice lives in Munich", "cues", `["Munich"]`)+`,`+
		fact("episodic", "new job", "Alice starts a new job at Siemens", "foresight", "true", "valid_from", "2024-07-01", "sources", "[2]")+`]}`,
		`{"traits": ["Lives in Munich", "", "Works at Siemens"], "states": ["Settling in after the move"]}`)
	eps := episodes("I moved to Munich last month.", "I start at Siemens next month!")
	ops, err := f.Form(context.Background(), engram.FormRequest{View: &reader{}, Episodes: eps})
	if err != nil {
		t.Fatal(err)
	}
	if len(ops) != 4 {
		t.Fatalf("ops = %+v, want two candidates, a summary and the profile", ops)
	}
	home, plan, sum, prof := ops[0].Memory, ops[1].Memory, ops[2].Memory, ops[3]
	traits, states := engram.ProfileOf(&prof.Memory)
	if prof.Op != engram.OpAdd || prof.Memory.Kind != engram.KindCore || strings.Join(traits, "|") != "Lives in Munich|Works at Siemens" || len(states) != 1 {
		t.Errorf("profile op = %+v, traits %q, states %q", prof, traits, states)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("%d requests, want extraction and profile (no decision without neighbours)", n)
	}
	if home.Kind != engram.KindCore || home.Cues[0] != "Munich" || home.Sources[0] != eps[0].ID {
		t.Errorf("home = %+v", home)
	}
	// "last month" in the turn is resolved against the turn's time when
	// the model gave no date.
	if home.ValidFrom == nil || !home.ValidFrom.Equal(time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("home valid_from = %v, want 2024-05-01", home.ValidFrom)
	}
	if plan.Metadata[llmformer.MetaForesight] != true || plan.ValidTo == nil || plan.Sources[0] != eps[1].ID {
		t.Errorf("plan = %+v, want foresight with a window from the second turn", plan)
	}
	if sum.Metadata[llmformer.MetaSummary] != true || len(sum.Sources) != 2 || sum.Kind != engram.KindEpisodic {
		t.Errorf("summary = %+v", sum)
	}
}
