package eval_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/eval"
)

func TestMainCommand(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	var stdout, stderr bytes.Buffer
	args := []string{"longmemeval", "--data", "testdata/longmemeval_mini.json.gz", "--out", out, "--limit", "2",
		"--data-dir", t.TempDir(), "--systems", "engram,bm25,full"}
	if code := eval.Main(context.Background(), args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr.String())
	}
	for _, want := range []string{"session level", "turn level", "recall@10", "engram/bm25", "report written to"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
		}
	}
	if !strings.Contains(stderr.String(), "100%") {
		t.Errorf("no finished progress bar on stderr:\n%s", stderr.String())
	}
	raw, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep eval.Report
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Run.Limit != 2 || rep.Run.Questions != 2 {
		t.Errorf("limit %d, questions %d; want 2 and 2", rep.Run.Limit, rep.Run.Questions)
	}
	if _, ok := rep.Systems["dense"]; ok || len(rep.Systems) != 3 {
		t.Errorf("systems = %v, want engram, bm25, full", rep.Systems)
	}

	// --quiet: no progress bar.
	stdout.Reset()
	stderr.Reset()
	args = []string{"locomo", "--data", "testdata/locomo_mini.json", "--limit", "1", "--quiet", "--data-dir", t.TempDir()}
	if code := eval.Main(context.Background(), args, &stdout, &stderr); code != 0 || stderr.Len() != 0 {
		t.Errorf("quiet run: exit %d, stderr %q", code, stderr.String())
	}
}

func TestMainUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"no args", nil, 2, "usage"},
		{"flag first", []string{"--data", "x"}, 2, "name the benchmark first"},
		{"unknown bench", []string{"mmlu", "--data", "x"}, 2, "not one of locomo"},
		{"no data", []string{"locomo"}, 2, "--data FILE is required"},
		{"unknown flag", []string{"locomo", "--nope"}, 2, "flag provided but not defined"},
		{"extra arg", []string{"locomo", "--data", "x", "more"}, 2, "unexpected argument"},
		{"bad limit", []string{"locomo", "--data", "testdata/locomo_mini.json", "--limit", "-3"}, 2, "negative"},
		{"missing file", []string{"locomo", "--data", "testdata/nope.json"}, 1, "no such file"},
		{"bad only", []string{"longmemeval", "--data", "testdata/longmemeval_mini.json", "--only", "3-1"}, 2, "--only"},
		{"only not a number", []string{"longmemeval", "--data", "testdata/longmemeval_mini.json", "--only", "a"}, 2, "--only"},
		{"only and limit", []string{"longmemeval", "--data", "testdata/longmemeval_mini.json", "--only", "1", "--limit", "2"}, 2, "give one"},
		{"only past the end", []string{"longmemeval", "--data", "testdata/longmemeval_mini.json", "--only", "2-9"}, 2, "holds 4 records"},
		{"bad sensitive policy", []string{"locomo", "--data", "testdata/locomo_mini.json", "--sensitive", "secret=hide"}, 2, "--sensitive"},
		{"bad graph walk", []string{"locomo", "--data", "testdata/locomo_mini.json", "--graph", "dijkstra"}, 2, "--graph"},
		{"help", []string{"locomo", "-h"}, 0, "usage"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := eval.Main(context.Background(), tt.args, &stdout, &stderr)
			if code != tt.code || !strings.Contains(stderr.String(), tt.msg) {
				t.Errorf("exit %d, stderr %q; want exit %d mentioning %q", code, stderr.String(), tt.code, tt.msg)
			}
		})
	}
}

// TestMainWordNetMissing: --wordnet without the database installed still
// runs: expansion is off and the run reports as without it.
func TestMainWordNetMissing(t *testing.T) {
	t.Setenv("ENGRAM_WORDNET_DIR", filepath.Join(t.TempDir(), "none"))
	var stdout, stderr bytes.Buffer
	args := []string{"longmemeval", "--data", "testdata/longmemeval_mini.json.gz", "--limit", "2", "--quiet",
		"--data-dir", t.TempDir(), "--systems", "engram", "--wordnet"}
	if code := eval.Main(context.Background(), args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "recall@10") {
		t.Errorf("stdout lacks the report:\n%s", stdout.String())
	}
}

// TestSensitiveTune: (eval's and serve's) --sensitive off turns the engine's detection off, a
// policy sets its default policy, a bad one fails.
func TestSensitiveTune(t *testing.T) {
	var o engine.Options
	tune, err := engine.SensitiveTune("off")
	if err != nil {
		t.Fatal(err)
	}
	if tune(&o); !o.DetectOff {
		t.Error("--sensitive off left detection on")
	}
	o = engine.Options{}
	if tune, err = engine.SensitiveTune("payment=keep"); err != nil {
		t.Fatal(err)
	}
	if tune(&o); o.DetectOff || o.Sensitive.Payment != engram.TreatKeep {
		t.Errorf("--sensitive payment=keep: DetectOff %v, policy %+v", o.DetectOff, o.Sensitive)
	}
	if _, err := engine.SensitiveTune("all=seal"); err == nil {
		t.Error("a policy with an unknown group was taken")
	}
}
