package eval_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/engramhq/engram/eval"
	"github.com/engramhq/engram/openai/openaitest"
)

var turnLine = regexp.MustCompile(`(?m)^\[(\d+)\] \([^)]*\) [^:]*: (.*)$`)

// scriptedModel answers the LLM former as a model would: one memory per
// new turn, its value the turn, and ADD for every decision.
func scriptedModel(req openaitest.ChatRequest) string {
	if strings.Contains(req.Messages[0].Content, "keep a memory store current") {
		return `{"decision": "ADD", "target": 0, "reason": "new", "abstraction": "", "value": "", "cues": []}`
	}
	var mems []string
	for _, m := range turnLine.FindAllStringSubmatch(req.Messages[1].Content, -1) {
		v, _ := json.Marshal(m[2])
		mems = append(mems, fmt.Sprintf(`{"kind": "episodic", "abstraction": "turn", "cues": [], "value": %s, "language": "", "about": "user",
			"valid_from": "", "valid_to": "", "foresight": false, "confidence": 0.8, "importance": 0.5, "profile": "", "sources": [%s]}`, v, m[1]))
	}
	return `{"episodes": [], "memories": [` + strings.Join(mems, ",") + `]}`
}

// TestEvalWithLLMFormer runs engram eval --former llm against the fake
// server, configured through the environment as in CI.
func TestEvalWithLLMFormer(t *testing.T) {
	fake := openaitest.NewServer(t, openaitest.Options{Chat: scriptedModel})
	t.Setenv("ENGRAM_LLM_URL", fake.URL())
	t.Setenv("ENGRAM_LLM_MODEL", "fake")
	out := filepath.Join(t.TempDir(), "out")
	var stdout, stderr bytes.Buffer
	args := []string{"longmemeval", "--data", "testdata/longmemeval_mini.json.gz", "--out", out, "--limit", "1",
		"--data-dir", t.TempDir(), "--systems", "engram", "--former", "llm", "--quiet"}
	if code := eval.Main(context.Background(), args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr.String())
	}
	raw, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep eval.Report
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatal(err)
	}
	f := rep.Run.Former
	if f == nil || f.Name != "former:llm:fake" || f.LLM == nil || f.LLM.Turns != int64(rep.Run.Episodes) || f.CallsPerTurn <= 0 || f.TokensPerTurn <= 0 {
		t.Fatalf("former report %+v (episodes %d)", f, rep.Run.Episodes)
	}
	if got := int64(len(fake.Requests())); got != f.LLM.Calls {
		t.Errorf("report counts %d calls, the server saw %d", f.LLM.Calls, got)
	}
	if !strings.Contains(stdout.String(), "former: former:llm:fake") {
		t.Errorf("summary lacks the former:\n%s", stdout.String())
	}
	if s := rep.Systems["engram"].Session; s == nil || s.Overall["recall@5"] == 0 {
		t.Errorf("no session recall with the LLM former's memories: %s", raw)
	}

	if code := eval.Main(context.Background(), []string{"longmemeval", "--data", "x", "--former", "magic"}, &stdout, &stderr); code != 2 {
		t.Errorf("--former magic: exit %d, want 2", code)
	}
}
