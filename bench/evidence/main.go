// Command evidence tells, for each LoCoMo question category, how many of
// the evidence turns a search ranked in its first ten places, how many in
// its first twenty, and how often an evidence turn shares a content word
// with its question, apart for the turns found in the first ten places
// and the turns missed. A content word is an English Snowball stem that is
// not a stop word and not a speaker's name; a turn's text includes the
// caption of the photo it shares, as engram eval ingests it. Questions the
// run did not score are left out. It reads the
// data set and the questions.jsonl an `engram eval locomo --out DIR` run
// wrote (whose lists hold the first twenty places), so it explains that
// run's misses: evidence that shares no word with its question can only
// be found by the dense channel or by inference.
//
//	engram eval locomo --data ../shared/datasets/locomo/locomo10.json --systems engram --quiet --out /tmp/ev
//	go run ./bench/evidence --data ../shared/datasets/locomo/locomo10.json --questions /tmp/ev/questions.jsonl
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/engramhq/engram/lang"
	"github.com/engramhq/engram/textsearch"
)

func main() {
	data := flag.String("data", "", "the LoCoMo data file (locomo10.json)")
	questions := flag.String("questions", "", "questions.jsonl of an engram eval locomo run")
	system := flag.String("system", "engram", "the system of questions.jsonl whose rankings are read")
	flag.Parse()
	if *data == "" || *questions == "" {
		fmt.Fprintln(os.Stderr, "evidence: --data and --questions are required")
		os.Exit(2)
	}
	if err := run(os.Stdout, *data, *questions, *system); err != nil {
		fmt.Fprintln(os.Stderr, "evidence:", err)
		os.Exit(1)
	}
}

// conversation is what the tool needs of one LoCoMo sample: each turn's
// text by dia_id, the speakers' name stems, and the questions in order.
type conversation struct {
	turns    map[string]string
	speakers map[string]bool
	qa       []struct {
		Question string   `json:"question"`
		Evidence []string `json:"evidence"`
	}
}

// tally counts one category's evidence turns.
type tally struct {
	questions, evidence, top10, top20 int
	foundShare, found, missedShare    int
}

func run(w io.Writer, dataPath, questionsPath, system string) error {
	convs, err := readLoCoMo(dataPath)
	if err != nil {
		return err
	}
	f, err := os.Open(questionsPath)
	if err != nil {
		return err
	}
	defer f.Close()
	tallies := map[string]*tally{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var rec struct {
			ID       string `json:"id"`
			Category string `json:"category"`
			Systems  map[string]struct {
				Ranked [][]string      `json:"ranked"`
				Scores json.RawMessage `json:"scores"`
			} `json:"systems"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return fmt.Errorf("%s: %w", questionsPath, err)
		}
		conv, n, err := locate(convs, rec.ID)
		if err != nil {
			return err
		}
		sys, ok := rec.Systems[system]
		if !ok {
			return fmt.Errorf("%s: question %s has no system %q", questionsPath, rec.ID, system)
		}
		if sys.Scores == nil {
			continue // not scored by the run (adversarial, or no evidence it holds)
		}
		t := tallies[rec.Category]
		if t == nil {
			t = &tally{}
			tallies[rec.Category] = t
		}
		count(t, conv, conv.qa[n].Question, conv.qa[n].Evidence, firsts(sys.Ranked))
	}
	if err := sc.Err(); err != nil {
		return err
	}
	print(w, tallies)
	return nil
}

// count adds one question's evidence turns to t; evidence the data set
// names but does not hold is left out, as engram eval leaves it out.
func count(t *tally, conv *conversation, question string, evidence, ranked []string) {
	q := contentWords(question, conv.speakers)
	t.questions++
	for _, ev := range evidence {
		text, ok := conv.turns[ev]
		if !ok {
			continue
		}
		t.evidence++
		at := slices.Index(ranked, ev)
		shares := sharesAny(q, contentWords(text, conv.speakers))
		switch {
		case at >= 0 && at < 10:
			t.top10++
			t.top20++
			t.found++
			if shares {
				t.foundShare++
			}
		default:
			if at >= 10 && at < 20 {
				t.top20++
			}
			if shares {
				t.missedShare++
			}
		}
	}
}

func print(w io.Writer, tallies map[string]*tally) {
	cats := make([]string, 0, len(tallies))
	for c := range tallies {
		cats = append(cats, c)
	}
	slices.Sort(cats)
	fmt.Fprintln(w, "category  questions  evidence  in first 10  in first 20  share a word: found  missed")
	for _, c := range cats {
		t := tallies[c]
		missed := t.evidence - t.found
		fmt.Fprintf(w, "%-8s  %9d  %8d  %11s  %11s  %19s  %6s\n", c, t.questions, t.evidence,
			ratio(t.top10, t.evidence), ratio(t.top20, t.evidence), ratio(t.foundShare, t.found), ratio(t.missedShare, missed))
	}
}

func ratio(a, b int) string {
	if b == 0 {
		return "-"
	}
	return strconv.FormatFloat(float64(a)/float64(b), 'f', 3, 64)
}

// firsts returns the first id of each ranked place.
func firsts(ranked [][]string) []string {
	out := make([]string, 0, len(ranked))
	for _, ids := range ranked {
		if len(ids) > 0 {
			out = append(out, ids[0])
		} else {
			out = append(out, "")
		}
	}
	return out
}

// locate finds the conversation and question index of an id of the form
// SAMPLE#qN (N from 1), as engram eval names LoCoMo's questions.
func locate(convs map[string]*conversation, id string) (*conversation, int, error) {
	sample, q, ok := strings.Cut(id, "#q")
	conv := convs[sample]
	n, err := strconv.Atoi(q)
	if !ok || conv == nil || err != nil || n < 1 || n > len(conv.qa) {
		return nil, 0, fmt.Errorf("question %q is not in the data set", id)
	}
	return conv, n - 1, nil
}

// contentWords returns the English stems of text's words that are not
// stop words and not among skip.
func contentWords(text string, skip map[string]bool) map[string]bool {
	out := map[string]bool{}
	for _, w := range textsearch.Terms(text) {
		if lang.IsStopWord(lang.English, w) {
			continue // Terms keeps every word of an all-stop-word text
		}
		s := lang.Stem(lang.English, w)
		if !skip[s] {
			out[s] = true
		}
	}
	return out
}

func sharesAny(a, b map[string]bool) bool {
	for w := range a {
		if b[w] {
			return true
		}
	}
	return false
}

func readLoCoMo(path string) (map[string]*conversation, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var samples []struct {
		SampleID     string                     `json:"sample_id"`
		Conversation map[string]json.RawMessage `json:"conversation"`
		QA           json.RawMessage            `json:"qa"`
	}
	if err := json.Unmarshal(raw, &samples); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out := map[string]*conversation{}
	for _, s := range samples {
		c := &conversation{turns: map[string]string{}, speakers: map[string]bool{}}
		if err := json.Unmarshal(s.QA, &c.qa); err != nil {
			return nil, fmt.Errorf("%s: sample %s: qa: %w", path, s.SampleID, err)
		}
		for key, v := range s.Conversation {
			var name string
			if (key == "speaker_a" || key == "speaker_b") && json.Unmarshal(v, &name) == nil {
				c.speakers[lang.Stem(lang.English, strings.ToLower(name))] = true
				continue
			}
			if !strings.HasPrefix(key, "session_") || strings.HasSuffix(key, "date_time") {
				continue
			}
			var turns []struct {
				DiaID   string `json:"dia_id"`
				Text    string `json:"text"`
				Caption string `json:"blip_caption"`
			}
			if json.Unmarshal(v, &turns) != nil {
				continue // not a session's list of turns
			}
			for _, t := range turns {
				c.turns[t.DiaID] = strings.TrimSpace(t.Text + " " + t.Caption)
			}
		}
		out[s.SampleID] = c
	}
	return out, nil
}
