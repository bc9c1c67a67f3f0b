package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const fixtureData = `[{"sample_id": "s1",
  "conversation": {"speaker_a": "Ann", "speaker_b": "Bob",
    "session_1_date_time": "1:00 pm on 8 May, 2023",
    "session_1": [
      {"speaker": "Ann", "dia_id": "D1:1", "text": "Ann here: I love surfing at the beach."},
      {"speaker": "Bob", "dia_id": "D1:2", "text": "Bob here: I adopted a puppy last week.", "blip_caption": "a photo of a dog"},
      {"speaker": "Ann", "dia_id": "D1:3", "text": "Lovely!"}]},
  "qa": [
    {"question": "What does Ann love?", "evidence": ["D1:1"]},
    {"question": "Does Bob have pets?", "evidence": ["D1:2", "D9:9"]},
    {"question": "What did Ann say about Bob's cat?", "evidence": ["D1:3"]}]}]`

// Question 1 is found first; question 2's evidence is in place 12 and
// shares no word with it (pets, not dog or puppy; names do not count);
// question 3 is not scored and so left out.
const fixtureQuestions = `{"id":"s1#q1","category":"4","systems":{"engram":{"ranked":[["D1:1"],["D1:3"]],"scores":{}}}}
{"id":"s1#q2","category":"1","systems":{"engram":{"ranked":[["D1:3"],["x2"],["x3"],["x4"],["x5"],["x6"],["x7"],["x8"],["x9"],["x10"],["x11"],["D1:2"]],"scores":{}}}}
{"id":"s1#q3","category":"5","systems":{"engram":{"ranked":[["D1:3"]]}}}
`

func TestRun(t *testing.T) {
	dir := t.TempDir()
	data, questions := filepath.Join(dir, "locomo.json"), filepath.Join(dir, "questions.jsonl")
	if err := os.WriteFile(data, []byte(fixtureData), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(questions, []byte(fixtureQuestions), 0o600); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := run(&out, data, questions, "engram"); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := [][]string{
		{"category", "questions", "evidence", "in", "first", "10", "in", "first", "20", "share", "a", "word:", "found", "missed"},
		{"1", "1", "1", "0.000", "1.000", "-", "0.000"},
		{"4", "1", "1", "1.000", "1.000", "1.000", "-"},
	}
	if len(lines) != len(want) {
		t.Fatalf("got %d lines, want %d:\n%s", len(lines), len(want), out.String())
	}
	for i, l := range lines {
		if got := strings.Fields(l); strings.Join(got, " ") != strings.Join(want[i], " ") {
			t.Errorf("line %d: got %q, want %q", i, got, want[i])
		}
	}
}

func TestRunUnknownQuestion(t *testing.T) {
	dir := t.TempDir()
	data, questions := filepath.Join(dir, "locomo.json"), filepath.Join(dir, "questions.jsonl")
	if err := os.WriteFile(data, []byte(fixtureData), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(questions, []byte(`{"id":"s1#q9","category":"1","systems":{"engram":{"ranked":[],"scores":{}}}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := run(&strings.Builder{}, data, questions, "engram")
	if err == nil || !strings.Contains(err.Error(), `"s1#q9"`) {
		t.Fatalf("got %v, want an error naming the question", err)
	}
}
