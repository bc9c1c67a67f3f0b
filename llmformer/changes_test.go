package llmformer_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/openai"
	"github.com/engramhq/engram/openai/openaitest"
)

func decision(op string, target int, value string) string {
	return fmt.Sprintf(`{"decision": %q, "target": %d, "reason": "the model's %s", "abstraction": "", "value": %q, "cues": []}`, op, target, op, value)
}

// TestChangesAskedAndApplied: the extraction and decision requests carry
// the operations of a change (stopping supersedes, a job of title and
// employer, a refinement merges keeping the broader value, a
// contradiction supersedes, a place that cannot be told is added beside
// the held one), in the five languages' phrasings; and the scripted
// answers of a conversation over several sessions, in English, German,
// Spanish, French and Chinese, are applied as those operations.
func TestChangesAskedAndApplied(t *testing.T) {
	held := []string{"Bob's favourite drink is black coffee", "Bob lives in Munich", "Bob works as a teacher at Lincoln High"}
	for _, tc := range []struct {
		name, turn string
		extracted  []string // the values the model extracts
		decisions  []string // one per extracted value
		wantOps    []engram.Op
		wantTgts   []int    // index into held, -1 for none
		wantVals   []string // a word each op's value must hold
	}{
		{"en stop and start", "I stopped drinking coffee last week; now I only drink green tea.",
			[]string{"Bob no longer drinks coffee", "Bob now drinks only green tea"},
			[]string{decision("SUPERSEDE", 1, ""), decision("SUPERSEDE", 1, "")},
			// the second candidate's target is already changed in this batch: it is added
			[]engram.Op{engram.OpSupersede, engram.OpAdd}, []int{0, -1}, []string{"no longer", "green tea"}},
		{"en job", "I quit teaching and started a new job as a software engineer at Siemens.",
			[]string{"Bob works as a software engineer at Siemens"}, []string{decision("SUPERSEDE", 3, "")},
			[]engram.Op{engram.OpSupersede}, []int{2}, []string{"Siemens"}},
		{"de refinement", "Ich wohne jetzt in Schwabing, einem Stadtteil von München.",
			[]string{"Bob wohnt in Schwabing"}, []string{decision("MERGE", 2, "Bob wohnt in Schwabing, München")},
			[]engram.Op{engram.OpMerge}, []int{1}, []string{"München"}},
		{"de ambiguous", "Ich wohne jetzt in Schwabing.",
			[]string{"Bob wohnt in Schwabing"}, []string{decision("ADD", 0, "")},
			[]engram.Op{engram.OpAdd}, []int{-1}, []string{"Schwabing"}},
		{"es contradiction", "Me mudé a Madrid el mes pasado.",
			[]string{"Bob vive en Madrid"}, []string{decision("SUPERSEDE", 2, "")},
			[]engram.Op{engram.OpSupersede}, []int{1}, []string{"Madrid"}},
		{"fr stop", "J'ai arrêté de boire du café.",
			[]string{"Bob ne boit plus de café"}, []string{decision("SUPERSEDE", 1, "")},
			[]engram.Op{engram.OpSupersede}, []int{0}, []string{"ne boit plus"}},
		{"zh job", "我辞去了教师的工作，现在在西门子当软件工程师。",
			[]string{"Bob在西门子当软件工程师"}, []string{decision("SUPERSEDE", 3, "")},
			[]engram.Op{engram.OpSupersede}, []int{2}, []string{"西门子"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, srv := newFormer(t, openaitest.Options{StructuredOutputs: true}, openai.Config{})
			var facts []string
			for _, v := range tc.extracted {
				facts = append(facts, fact("semantic", "change", v))
			}
			srv.QueueChat(append([]string{extraction(facts...)}, tc.decisions...)...)
			r := stored(held...)
			eps := episodes(tc.turn)
			eps[0].Speaker, eps[0].OccurredAt = "Bob", t0.AddDate(0, 2, 0)
			ops, err := f.Form(context.Background(), engram.FormRequest{View: r, Episodes: eps})
			if err != nil {
				t.Fatal(err)
			}
			if len(ops) != len(tc.wantOps) {
				t.Fatalf("ops = %+v, want %v", ops, tc.wantOps)
			}
			for i, op := range ops {
				want := ""
				if tc.wantTgts[i] >= 0 {
					want = r.ms[tc.wantTgts[i]].ID
				}
				if op.Op != tc.wantOps[i] || op.TargetID != want || !strings.Contains(op.Memory.Value, tc.wantVals[i]) {
					t.Errorf("op %d = %s %q -> %q, want %s of %d holding %q", i, op.Op, op.Memory.Value, op.TargetID, tc.wantOps[i], tc.wantTgts[i], tc.wantVals[i])
				}
				// a change holds from the turn, or the earlier time it names ("last week")
				if op.Op == engram.OpSupersede && (op.Memory.ValidFrom == nil || op.Memory.ValidFrom.After(eps[0].OccurredAt)) {
					t.Errorf("op %d holds from %v, want no later than the turn", i, op.Memory.ValidFrom)
				}
			}
			checkChangePrompts(t, srv.Requests())
		})
	}
}

// checkChangePrompts checks that the extraction request (the first) and
// the decision requests (the others) ask for a change's operations.
func checkChangePrompts(t *testing.T, reqs []openaitest.Request) {
	t.Helper()
	asks := []struct {
		req   int
		words []string
	}{
		{0, []string{"stops, quits, gives up or no longer", "keinen Kaffee mehr", "ya no", "j'ai arrêté", "不再", "title and employer", "我在Y当X", "district or a street", "never invent the city"}},
		{1, []string{"Stopping is a change", "SUPERSEDE [target]", "title and employer", "A refinement is not a change", "keeps the broader one answerable",
			"A contradiction is a change", "cannot tell whether a new place", "ADD: never SUPERSEDE", "改喝", "dejé de"}},
	}
	for _, a := range asks {
		if a.req >= len(reqs) || reqs[a.req].Chat == nil {
			t.Fatalf("request %d missing: %d requests", a.req, len(reqs))
		}
		system := reqs[a.req].Chat.Messages[0].Content
		for _, w := range a.words {
			if !strings.Contains(system, w) {
				t.Errorf("request %d does not ask %q", a.req, w)
			}
		}
	}
	if user := reqs[1].Chat.Messages[1].Content; !strings.Contains(user, "NEW memory") || !strings.Contains(user, "[2] ") {
		t.Errorf("decision request shows %q", user)
	}
}
