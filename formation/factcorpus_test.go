package formation

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/engramhq/engram/lang"
)

// corpusLine is one sentence of testdata/facts_corpus.jsonl and the facts
// it states of its speaker (none for a sentence that states none: a noun
// that looks like the verb, a negation, a wish, someone else's fact).
// Held marks the third kept aside while the rules were tuned.
type corpusLine struct {
	Lang  string `json:"lang"`
	Text  string `json:"text"`
	Facts []struct {
		Attr  string `json:"attr"`
		Value string `json:"value"`
	} `json:"facts"`
	Held bool `json:"held"`
}

// score counts facts formed and stated: tp formed and stated, fp formed
// and not stated, fn stated and not formed.
type score struct{ tp, fp, fn int }

func (s score) precision() float64 {
	if s.tp+s.fp == 0 {
		return 1
	}
	return float64(s.tp) / float64(s.tp+s.fp)
}

func (s score) recall() float64 {
	if s.tp+s.fn == 0 {
		return 1
	}
	return float64(s.tp) / float64(s.tp+s.fn)
}

// TestFactCorpus measures the precision and recall of the rules former's
// facts on a corpus of sentences in five languages, the held-out third
// apart, and fails when either falls below what was measured when the
// verb-reading checks (see facts_verb.go) were made. Run with -v for the
// figures and every fact formed wrongly or missed.
func TestFactCorpus(t *testing.T) {
	lines := readCorpus(t, "testdata/facts_corpus.jsonl")
	var dev, held score
	for _, l := range lines {
		want := map[string]bool{}
		for _, f := range l.Facts {
			want[strings.ToLower(f.Attr+"="+f.Value)] = true
		}
		got := map[string]bool{}
		for _, f := range factsOf(lang.Detect(l.Text), l.Text) {
			got[strings.ToLower(f.attr+"="+f.value)] = true
		}
		s := &dev
		if l.Held {
			s = &held
		}
		for k := range got {
			if want[k] {
				s.tp++
			} else {
				s.fp++
				t.Logf("formed, not stated: %s %q → %s", l.Lang, l.Text, k)
			}
		}
		for k := range want {
			if !got[k] {
				s.fn++
				t.Logf("stated, not formed: %s %q → %s", l.Lang, l.Text, k)
			}
		}
	}
	for _, c := range []struct {
		name                    string
		s                       score
		minPrecision, minRecall float64
	}{
		// Measured with the checks: dev 20 of 20 formed right, 20 of 23
		// stated formed; held 5 of 6 and 5 of 5. Before them: dev 20 of
		// 24 and 20 of 23; held 5 of 10 and 5 of 5.
		{"dev", dev, 0.999, 0.869},
		{"held", held, 0.833, 0.999},
	} {
		t.Logf("%s: precision %.3f (%d of %d formed), recall %.3f (%d of %d stated)", c.name,
			c.s.precision(), c.s.tp, c.s.tp+c.s.fp, c.s.recall(), c.s.tp, c.s.tp+c.s.fn)
		if c.s.precision() < c.minPrecision || c.s.recall() < c.minRecall {
			t.Errorf("%s: precision %.3f, recall %.3f; measured at least %.3f and %.3f", c.name,
				c.s.precision(), c.s.recall(), c.minPrecision, c.minRecall)
		}
	}
}

func readCorpus(t *testing.T, path string) []corpusLine {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []corpusLine
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l corpusLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("%s line %d: %v", path, len(out)+1, err)
		}
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
