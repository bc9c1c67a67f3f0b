package finetune_test

import (
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/finetune"
	"github.com/engramhq/engram/openai"
	"github.com/engramhq/engram/openai/openaitest"
)

// TestLLMPairs: with a model, each memory's pairs are the model's; a
// malformed reply, one without pairs and one with an empty answer each
// fall back to the templates for that memory, and are counted.
func TestLLMPairs(t *testing.T) {
	e := mustEngine(t)
	seed(t, e)
	srv := openaitest.NewServer(t, openaitest.Options{Chat: func(r openaitest.ChatRequest) string {
		in := r.Messages[len(r.Messages)-1].Content
		switch {
		case strings.Contains(in, "Munich"):
			return `{"pairs":[{"question":"Which city do you call home?","answer":"Munich, these days."},{"question":"Where's home?","answer":"Munich."}]}`
		case strings.Contains(in, "Siemens"):
			return `{"pairs": [{"question": "Wo arbeitest du?", "answer": ` // cut off: no JSON object
		case strings.Contains(in, "gatos"):
			return `{"pairs":[]}`
		case strings.Contains(in, "azul"):
			return `{"pairs":[{"question":"¿Color favorito?","answer":"  "}]}`
		}
		return `{"pairs":[{"question":"Q?","answer":"A."}]}`
	}})
	chat, err := openai.NewChat(openai.Config{BaseURL: srv.URL(), Model: "m", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	out, c := export(t, e, alice, finetune.Options{Format: finetune.SFT, Asker: finetune.NewLLM(chat)})
	pairs := sftPairs(t, out)
	for q, want := range map[string]string{
		"Which city do you call home?":   "Munich, these days.",
		"Where's home?":                  "Munich.",
		"Wo arbeitest du?":               "Ich arbeite bei Siemens.",
		"¿Qué cantidad de gatos tienes?": "Tengo dos gatos.",
		"¿Qué color prefieres?":          "Prefiero el azul.",
	} {
		if got := pairs[q]; len(got) != 1 || got[0] != want {
			t.Errorf("answers to %q = %q, want [%q]\n%s", q, got, want, out)
		}
	}
	if c.Fallbacks != 3 {
		t.Errorf("fallbacks = %d, want 3 (cut-off JSON, no pairs, empty answer)", c.Fallbacks)
	}
	if strings.Contains(out, "Berlin") || strings.Contains(out, "4711") || strings.Contains(out, "falconry") {
		t.Errorf("the model was asked about, or the export holds, a memory it must not:\n%s", out)
	}
	for _, r := range srv.Requests() {
		for _, bad := range []string{"Berlin", "4711", "falconry", "Paris"} {
			if strings.Contains(string(r.Body), bad) {
				t.Errorf("a request to the model names %q: %s", bad, r.Body)
			}
		}
	}
}

// TestLLMServerDown: a model that fails every call leaves the templates.
func TestLLMServerDown(t *testing.T) {
	e := mustEngine(t)
	seed(t, e)
	srv := openaitest.NewServer(t, openaitest.Options{})
	srv.FailNext(1000, openaitest.Fault{Status: 500})
	chat, err := openai.NewChat(openai.Config{BaseURL: srv.URL(), Model: "m", MaxRetries: -1, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	withLLM, c := export(t, e, alice, finetune.Options{Format: finetune.SFT, Asker: finetune.NewLLM(chat)})
	plain, _ := export(t, e, alice, finetune.Options{Format: finetune.SFT})
	if withLLM != plain || c.Fallbacks != c.Memories || c.Memories == 0 {
		t.Errorf("with a failing model: counts %+v, export differs from the templates' one:\n%s\n---\n%s", c, withLLM, plain)
	}
}
