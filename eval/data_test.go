package eval

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
)

func mustParse(t *testing.T, bench, path string, limit int) *dataset {
	t.Helper()
	r, _, err := readData(path)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := parse(bench, r, selection{limit: limit})
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

func findTurn(h *haystack, key string) *turn {
	for i := range h.turns {
		if h.turns[i].key == key {
			return &h.turns[i]
		}
	}
	return nil
}

func TestParseLoCoMo(t *testing.T) {
	ds := mustParse(t, BenchLoCoMo, "testdata/locomo_mini.json", 0)
	if got, want := len(ds.haystacks), 2; got != want {
		t.Fatalf("haystacks = %d, want %d", got, want)
	}
	a := &ds.haystacks[0]
	// session_4/5 date keys have no session and must not create turns.
	if got, want := len(a.turns), 28; got != want {
		t.Errorf("conv-a turns = %d, want %d", got, want)
	}
	if got, want := a.turns[0].at, time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("first turn at %v, want %v", got, want)
	}
	if got, want := a.turns[2].at, time.Date(2023, 5, 8, 13, 56, 2, 0, time.UTC); !got.Equal(want) {
		t.Errorf("third turn at %v, want %v (one second per turn)", got, want)
	}
	if got, want := findTurn(a, "D2:1").at, time.Date(2023, 6, 20, 10, 15, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("D2:1 at %v, want %v", got, want)
	}
	photo := findTurn(a, "D1:7")
	if got, want := photo.content, "Here she is sleeping on my laptop. [shares a photo: a photo of a grey kitten sleeping on a laptop keyboard]"; got != want {
		t.Errorf("photo turn content = %q, want %q", got, want)
	}
	if got, want := photo.metadata, map[string]any{"dia_id": opaque("D1:7"), "session": 1}; !reflect.DeepEqual(got, want) {
		t.Errorf("metadata = %v, want %v", got, want)
	}
	if photo.speaker != "Alice" || photo.role != "user" || photo.session != "session_1" {
		t.Errorf("photo turn speaker/role/session = %q/%q/%q", photo.speaker, photo.role, photo.session)
	}

	tests := []struct {
		id       string
		category string
		skip     string
		turns    []string
		answer   string
	}{
		{"conv-a#q1", "4", "", []string{"D1:3"}, "Pepper"},
		{"conv-a#q2", "2", "", []string{"D2:5"}, "2022"},                              // int answer
		{"conv-a#q3", "1", "", []string{"D2:8", "D3:3"}, "A model tall ship; Lisbon"}, // "D2:8; D3:3"
		{"conv-a#q4", "3", "", nil, "Probably yes"},                                   // no evidence
		{"conv-a#q5", "5", "adversarial", []string{"D1:3"}, ""},
		{"conv-a#q6", "4", "", []string{"D1:5"}, "A feather toy"},          // "D01:05"
		{"conv-a#q7", "4", "", []string{"D2:1"}, "At the bakery downtown"}, // "D" dropped
		{"conv-a#q8", "1", "", nil, "The city marathon"},                   // "D:3:6" unrecoverable, "D9:9" absent
		{"conv-b#q5", "2", "", []string{"D1:4", "D2:1"}, "April 2023"},
	}
	for _, tt := range tests {
		l := ds.labels[tt.id]
		if l == nil {
			t.Errorf("%s: no label", tt.id)
			continue
		}
		if l.category != tt.category || l.skip != tt.skip || !reflect.DeepEqual(l.turns, tt.turns) || l.answer != tt.answer {
			t.Errorf("%s: label = {%s %q %v %q}, want {%s %q %v %q}", tt.id, l.category, l.skip, l.turns, l.answer, tt.category, tt.skip, tt.turns, tt.answer)
		}
	}
	// "D2:8; D3:3", "D01:05", "D", "D:3:6" are malformed; D9:9 names no turn.
	if got, want := ds.notes, (parseNotes{EvidenceMalformed: 4, EvidenceDropped: 1}); got != want {
		t.Errorf("notes = %+v, want %+v", got, want)
	}
	if got, want := len(a.questions), 11; got != want {
		t.Errorf("conv-a questions = %d, want %d", got, want)
	}
	if a.questions[0].date != nil {
		t.Errorf("LoCoMo question has a date")
	}

	if ds := mustParse(t, BenchLoCoMo, "testdata/locomo_mini.json", 1); len(ds.haystacks) != 1 || len(ds.labels) != 11 {
		t.Errorf("limit 1: %d haystacks, %d labels", len(ds.haystacks), len(ds.labels))
	}
}

func TestParseLongMemEval(t *testing.T) {
	ds := mustParse(t, BenchLongMemEval, "testdata/longmemeval_mini.json", 0)
	if got, want := len(ds.haystacks), 4; got != want {
		t.Fatalf("haystacks = %d, want %d", got, want)
	}
	q1 := &ds.haystacks[0]
	// Sessions sorted by date: answer_q1a (05/10), f_3 (05/15), f_1 (05/20), f_2 (05/25).
	var order []string
	for _, tr := range q1.turns {
		if len(order) == 0 || order[len(order)-1] != tr.session {
			order = append(order, tr.session)
		}
	}
	if want := []string{"answer_q1a", "f_3", "f_1", "f_2"}; !reflect.DeepEqual(order, want) {
		t.Errorf("session order = %v, want %v", order, want)
	}
	first := q1.turns[0]
	if first.key != "answer_q1a#0" || first.role != "user" || !first.at.Equal(time.Date(2023, 5, 10, 8, 30, 0, 0, time.UTC)) {
		t.Errorf("first turn = %+v", first)
	}
	if got, want := first.metadata, map[string]any{"session_id": opaque("answer_q1a"), "turn": 0}; !reflect.DeepEqual(got, want) {
		t.Errorf("metadata = %v, want %v", got, want)
	}
	if got, want := q1.turns[1].at, first.at.Add(time.Second); !got.Equal(want) {
		t.Errorf("second turn at %v, want %v", got, want)
	}
	if d := q1.questions[0].date; d == nil || !d.Equal(time.Date(2023, 6, 1, 9, 0, 0, 0, time.UTC)) {
		t.Errorf("question date = %v", d)
	}

	l1 := ds.labels["q1"]
	if l1.answer != "12" || l1.category != "single-session-user" || l1.skip != "" ||
		!reflect.DeepEqual(l1.turns, []string{"answer_q1a#0"}) || !reflect.DeepEqual(l1.sessions, []string{"answer_q1a"}) {
		t.Errorf("q1 label = %+v", l1)
	}
	// q2: the empty turn is skipped, later turns keep their index; the
	// has_answer turn is the assistant's; f_4 appears twice.
	q2 := &ds.haystacks[1]
	if findTurn(q2, "answer_q2a#2") != nil || findTurn(q2, "answer_q2a#3") == nil {
		t.Errorf("empty turn not skipped or indexes shifted")
	}
	if got, want := ds.labels["q2"].turns, []string{"answer_q2a#1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("q2 evidence turns = %v, want %v", got, want)
	}
	if got, want := ds.notes.TurnsSkipped, 1; got != want {
		t.Errorf("turns skipped = %d, want %d", got, want)
	}
	n := 0
	for _, tr := range q2.turns {
		if tr.key == "f_4#0" {
			n++
		}
	}
	if n != 2 {
		t.Errorf("duplicate session f_4 stored %d times, want 2", n)
	}
	if l := ds.labels["q3_abs"]; l.skip != "abstention" || !l.abstention {
		t.Errorf("q3_abs label = %+v", l)
	}
	if got, want := ds.labels["q4"].sessions, []string{"answer_q4a", "answer_q4b"}; !reflect.DeepEqual(got, want) {
		t.Errorf("q4 sessions = %v, want %v", got, want)
	}

	gz := mustParse(t, BenchLongMemEval, "testdata/longmemeval_mini.json.gz", 0)
	if !reflect.DeepEqual(gz.haystacks, ds.haystacks) || !reflect.DeepEqual(gz.labels, ds.labels) {
		t.Errorf(".json.gz parses differently from .json")
	}
	if ds := mustParse(t, BenchLongMemEval, "testdata/longmemeval_mini.json", 2); len(ds.haystacks) != 2 {
		t.Errorf("limit 2 kept %d questions", len(ds.haystacks))
	}
}

// Gzip is recognised by its bytes, not by the file name.
func TestReadDataGzipByMagic(t *testing.T) {
	plain, err := os.ReadFile("testdata/longmemeval_mini.json")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(plain)
	zw.Close()
	dir := t.TempDir()
	misnamed := filepath.Join(dir, "data.json")
	if err := os.WriteFile(misnamed, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	r, _, err := readData(misnamed)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, plain) {
		t.Errorf("gzip content in a .json file was not decompressed")
	}
	corrupt := filepath.Join(dir, "bad.json.gz")
	os.WriteFile(corrupt, buf.Bytes()[:20], 0o644)
	r, _, err = readData(corrupt)
	if err == nil {
		_, err = parse(BenchLongMemEval, r, selection{})
	}
	if engram.ErrorCode(err) != engram.EINVALID {
		t.Errorf("truncated gzip: err = %v, want EINVALID", err)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, bench, data string
	}{
		{"not json", BenchLoCoMo, `{`},
		{"empty locomo", BenchLoCoMo, `[]`},
		{"no sample id", BenchLoCoMo, `[{"conversation":{"session_1":[],"session_1_date_time":"1:56 pm on 8 May, 2023"}}]`},
		{"bad date", BenchLoCoMo, `[{"sample_id":"x","conversation":{"session_1":[{"speaker":"a","dia_id":"D1:1","text":"hi"}],"session_1_date_time":"8 May 2023"}}]`},
		{"no date", BenchLoCoMo, `[{"sample_id":"x","conversation":{"session_1":[{"speaker":"a","dia_id":"D1:1","text":"hi"}]}}]`},
		{"duplicate dia_id", BenchLoCoMo, `[{"sample_id":"x","conversation":{"session_1":[{"dia_id":"D1:1","text":"a"},{"dia_id":"D1:1","text":"b"}],"session_1_date_time":"1:56 pm on 8 May, 2023"}}]`},
		{"lengths differ", BenchLongMemEval, `[{"question_id":"q","haystack_dates":["2023/05/30 (Tue) 23:40"],"haystack_session_ids":[],"haystack_sessions":[[]]}]`},
		{"bad lme date", BenchLongMemEval, `[{"question_id":"q","haystack_dates":["30 May"],"haystack_session_ids":["s"],"haystack_sessions":[[]]}]`},
		{"duplicate question", BenchLongMemEval, `[{"question_id":"q"},{"question_id":"q"}]`},
		{"unknown bench", "other", `[]`},
		{"object not array", BenchLongMemEval, `{"question_id":"q"}`},
		{"unclosed array", BenchLongMemEval, `[{"question_id":"q","haystack_dates":[],"haystack_session_ids":[],"haystack_sessions":[]}`},
		{"bad record", BenchLoCoMo, `[{"sample_id": 3}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parse(tt.bench, strings.NewReader(tt.data), selection{})
			if got, want := engram.ErrorCode(err), engram.EINVALID; got != want {
				t.Errorf("err = %v, want code %s", err, want)
			}
		})
	}
}

func TestParseRange(t *testing.T) {
	tests := []struct {
		in   string
		want []int
	}{
		{"5-9", []int{5, 6, 7, 8, 9}},
		{"0,2,4", []int{0, 2, 4}},
		{"4, 0-2,1", []int{0, 1, 2, 4}},
		{"7", []int{7}},
	}
	for _, tt := range tests {
		got, err := parseRange(tt.in)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("parseRange(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "-3", "3-", "9-5", "a", "1,,2", "0-99999999"} {
		if got, err := parseRange(bad); err == nil {
			t.Errorf("parseRange(%q) = %v, want an error", bad, got)
		}
	}
}

func TestParseOnly(t *testing.T) {
	ds := mustParseSel(t, BenchLoCoMo, "testdata/locomo_mini.json", selection{only: []int{1}})
	if len(ds.haystacks) != 1 || ds.haystacks[0].id != "conv-b" {
		t.Errorf("only [1]: haystacks %v", ds.haystacks)
	}
}

func mustParseSel(t *testing.T, bench, path string, sel selection) *dataset {
	t.Helper()
	r, _, err := readData(path)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := parse(bench, r, sel)
	if err != nil {
		t.Fatal(err)
	}
	return ds
}
