package eval

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/engramhq/engram"
)

// Benchmarks Run knows.
const (
	BenchLoCoMo      = "locomo"
	BenchLongMemEval = "longmemeval"
)

// haystack is what one namespace receives and is asked: the part of a
// benchmark record a user of engram would have. It holds no labels.
type haystack struct {
	id        string // LoCoMo sample_id or LongMemEval question_id; the namespace's user
	turns     []turn
	questions []question
}

// turn is one stored unit of history.
type turn struct {
	key      string // unit id: dia_id, or "<session_id>#<i>"
	session  string // session key: LoCoMo session number, LongMemEval session_id
	role     string
	speaker  string
	content  string
	at       time.Time
	metadata map[string]any // as the engine receives it: benchmark ids made opaque
}

// question is what the harness asks; date is the question's "now" when the
// benchmark gives one (LongMemEval). Every search passes it as
// SearchRequest.Now; see haystack.now for questions without one.
type question struct {
	id   string
	text string
	date *time.Time
}

// now is the reference time a search for q passes the engine: the
// question's date, or, when the benchmark gives none (LoCoMo), the time of
// the haystack's latest turn, as if the question came right after the last
// conversation. The engine's own clock would be years after the data.
func (h *haystack) now(q question) time.Time {
	if q.date != nil {
		return *q.date
	}
	var last time.Time
	for _, t := range h.turns {
		if t.at.After(last) {
			last = t.at
		}
	}
	return last
}

// label is everything only the grader may see about a question.
type label struct {
	category   string   // LoCoMo category number or LongMemEval question_type
	skip       string   // why recall leaves it out whatever its evidence: "adversarial", "abstention"
	turns      []string // evidence turn keys
	sessions   []string // evidence session keys (LongMemEval)
	answer     string
	abstention bool // LongMemEval "_abs": the right answer is that it is unknown
}

// dataset is a parsed benchmark: haystacks to ingest and, apart, labels by
// question id.
type dataset struct {
	bench     string
	haystacks []haystack
	labels    map[string]*label
	notes     parseNotes
}

// nowNote says, for the report, what every search passed as Now.
func (ds *dataset) nowNote() string {
	var n, undated int
	for _, h := range ds.haystacks {
		for _, q := range h.questions {
			n++
			if q.date == nil {
				undated++
			}
		}
	}
	switch undated {
	case 0:
		return "question date"
	case n:
		return "latest turn of the haystack: the benchmark gives no question date"
	}
	return fmt.Sprintf("question date; latest turn of the haystack for the %d questions without one", undated)
}

// parseNotes counts what parsing had to repair or drop.
type parseNotes struct {
	EvidenceMalformed int `json:"evidence_malformed"` // evidence strings not exactly one canonical dia_id (ids inside are still recovered)
	EvidenceDropped   int `json:"evidence_dropped"`   // evidence ids naming no turn of the conversation
	TurnsSkipped      int `json:"turns_skipped"`      // turns with no text to store
}

// readData opens a benchmark file, gunzipping it when it starts with the
// gzip magic bytes whatever its name, and returns a reader of its JSON and
// the sha256 of the file as stored.
func readData(path string) (io.Reader, string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, "", fmt.Errorf("read data: %w", err)
	}
	sum := sha256.Sum256(raw)
	hash := hex.EncodeToString(sum[:])
	if len(raw) >= 2 && raw[0] == 0x1f && raw[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			return nil, "", engram.Errorf(engram.EINVALID, "data file %s looks gzip-compressed but is not readable: %v", path, err)
		}
		return zr, hash, nil
	}
	return bytes.NewReader(raw), hash, nil
}

// decodeArray decodes the first limit elements (all when limit <= 0) of a
// JSON array, reading no further than it needs, so a --limit run on a
// large file decodes only what it uses.
func decodeArray[T any](r io.Reader, limit int, what string) ([]T, error) {
	dec := json.NewDecoder(r)
	tok, err := dec.Token()
	if err != nil {
		return nil, engram.Errorf(engram.EINVALID, "%s data is not a JSON array: %v", what, err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return nil, engram.Errorf(engram.EINVALID, "%s data is not a JSON array", what)
	}
	var out []T
	for dec.More() && (limit <= 0 || len(out) < limit) {
		var v T
		if err := dec.Decode(&v); err != nil {
			return nil, engram.Errorf(engram.EINVALID, "%s data: record %d is malformed: %v", what, len(out), err)
		}
		out = append(out, v)
	}
	if limit <= 0 || len(out) < limit {
		if _, err := dec.Token(); err != nil {
			return nil, engram.Errorf(engram.EINVALID, "%s data: the JSON array is not closed: %v", what, err)
		}
	}
	if len(out) == 0 {
		return nil, engram.Errorf(engram.EINVALID, "%s data holds no records", what)
	}
	return out, nil
}

// selection says which records of a benchmark file to keep: the first
// limit (all when limit <= 0), or, when only is set, the records at those
// indexes (0-based, ascending, no repeats) and no others.
type selection struct {
	limit int
	only  []int
}

// decodeSelected decodes the records sel keeps, reading no further into
// the file than the last of them.
func decodeSelected[T any](r io.Reader, sel selection, what string) ([]T, error) {
	if len(sel.only) == 0 {
		return decodeArray[T](r, sel.limit, what)
	}
	last := sel.only[len(sel.only)-1]
	all, err := decodeArray[T](r, last+1, what)
	if err != nil {
		return nil, err
	}
	if len(all) <= last {
		return nil, engram.Errorf(engram.EINVALID, "%s data holds %d records; --only asks for index %d (indexes start at 0)", what, len(all), last)
	}
	out := make([]T, 0, len(sel.only))
	for _, i := range sel.only {
		out = append(out, all[i])
	}
	return out, nil
}

// parse decodes r as the named benchmark, keeping the records sel selects.
func parse(bench string, r io.Reader, sel selection) (*dataset, error) {
	switch bench {
	case BenchLoCoMo:
		return parseLoCoMo(r, sel)
	case BenchLongMemEval:
		return parseLongMemEval(r, sel)
	}
	return nil, engram.Errorf(engram.EINVALID, "benchmark %q is not one of locomo, longmemeval", bench)
}

// answerText renders a JSON answer, which is a string in most records and a
// number in a few.
func answerText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return strings.TrimSpace(string(raw))
}

// LoCoMo.

type locomoSample struct {
	SampleID     string                     `json:"sample_id"`
	Conversation map[string]json.RawMessage `json:"conversation"`
	QA           []locomoQA                 `json:"qa"`
}

type locomoTurn struct {
	Speaker     string `json:"speaker"`
	DiaID       string `json:"dia_id"`
	Text        string `json:"text"`
	BlipCaption string `json:"blip_caption"`
}

type locomoQA struct {
	Question string          `json:"question"`
	Answer   json.RawMessage `json:"answer"`
	Evidence []string        `json:"evidence"`
	Category int             `json:"category"`
}

// locomoTime is the layout of session_N_date_time, e.g. "1:56 pm on 8 May, 2023".
const locomoTime = "3:04 pm on 2 January, 2006"

var (
	sessionKey = regexp.MustCompile(`^session_(\d+)$`)
	diaIDRe    = regexp.MustCompile(`D(\d+):(\d+)`)
)

func parseLoCoMo(r io.Reader, sel selection) (*dataset, error) {
	samples, err := decodeSelected[locomoSample](r, sel, "LoCoMo")
	if err != nil {
		return nil, err
	}
	ds := &dataset{bench: BenchLoCoMo, labels: map[string]*label{}}
	seen := map[string]bool{}
	for si, s := range samples {
		if s.SampleID == "" {
			return nil, engram.Errorf(engram.EINVALID, "LoCoMo sample %d has no sample_id", si)
		}
		if seen[s.SampleID] {
			return nil, engram.Errorf(engram.EINVALID, "LoCoMo sample_id %q appears twice", s.SampleID)
		}
		seen[s.SampleID] = true
		h, err := locomoHaystack(s, ds)
		if err != nil {
			return nil, fmt.Errorf("LoCoMo sample %s: %w", s.SampleID, err)
		}
		ds.haystacks = append(ds.haystacks, h)
	}
	return ds, nil
}

func locomoHaystack(s locomoSample, ds *dataset) (haystack, error) {
	h := haystack{id: s.SampleID}
	// Sessions are numbered keys; date keys without a session (conv-26 has
	// sixteen) are ignored because only session_N lists are read.
	var nums []int
	for k := range s.Conversation {
		if m := sessionKey.FindStringSubmatch(k); m != nil {
			n, _ := strconv.Atoi(m[1])
			nums = append(nums, n)
		}
	}
	sort.Ints(nums)
	if len(nums) == 0 {
		return h, engram.Errorf(engram.EINVALID, "conversation has no session_N lists")
	}
	known := map[string]bool{}
	for _, n := range nums {
		var turns []locomoTurn
		if err := json.Unmarshal(s.Conversation[fmt.Sprintf("session_%d", n)], &turns); err != nil {
			return h, engram.Errorf(engram.EINVALID, "session_%d is not a list of turns: %v", n, err)
		}
		var date string
		dkey := fmt.Sprintf("session_%d_date_time", n)
		if err := json.Unmarshal(s.Conversation[dkey], &date); err != nil || date == "" {
			return h, engram.Errorf(engram.EINVALID, "session_%d has no %s string", n, dkey)
		}
		at, err := time.ParseInLocation(locomoTime, strings.TrimSpace(date), time.UTC)
		if err != nil {
			return h, engram.Errorf(engram.EINVALID, "%s %q is not like %q", dkey, date, "1:56 pm on 8 May, 2023")
		}
		for i, t := range turns {
			content := t.Text
			if t.BlipCaption != "" {
				content = strings.TrimSpace(content + " [shares a photo: " + t.BlipCaption + "]")
			}
			if strings.TrimSpace(content) == "" {
				ds.notes.TurnsSkipped++
				continue
			}
			if t.DiaID == "" {
				return h, engram.Errorf(engram.EINVALID, "session_%d turn %d has no dia_id", n, i)
			}
			if known[t.DiaID] {
				return h, engram.Errorf(engram.EINVALID, "dia_id %s appears twice", t.DiaID)
			}
			known[t.DiaID] = true
			h.turns = append(h.turns, turn{
				key: t.DiaID, session: "session_" + strconv.Itoa(n), role: "user", speaker: t.Speaker, content: content,
				// One second apart keeps the order of turns within a session.
				at:       at.Add(time.Duration(i) * time.Second),
				metadata: map[string]any{"dia_id": opaque(t.DiaID), "session": n},
			})
		}
	}
	for i, qa := range s.QA {
		id := fmt.Sprintf("%s#q%d", s.SampleID, i+1)
		h.questions = append(h.questions, question{id: id, text: qa.Question})
		l := &label{category: strconv.Itoa(qa.Category), answer: answerText(qa.Answer)}
		l.turns = locomoEvidence(qa.Evidence, known, &ds.notes)
		if qa.Category == 5 {
			l.skip = "adversarial"
		}
		ds.labels[id] = l
	}
	return h, nil
}

// locomoEvidence recovers dia_ids from evidence strings, some of which are
// malformed ("D8:6; D9:17", "D30:05", "D"): every D<n>:<m> inside a string
// counts, leading zeros are dropped, and ids naming no turn are dropped.
func locomoEvidence(ev []string, known map[string]bool, notes *parseNotes) []string {
	var out []string
	seen := map[string]bool{}
	for _, e := range ev {
		ms := diaIDRe.FindAllStringSubmatch(e, -1)
		if len(ms) != 1 || canonicalDiaID(ms[0]) != e {
			notes.EvidenceMalformed++
		}
		for _, m := range ms {
			id := canonicalDiaID(m)
			if !known[id] {
				notes.EvidenceDropped++
				continue
			}
			if !seen[id] {
				seen[id] = true
				out = append(out, id)
			}
		}
	}
	return out
}

func canonicalDiaID(m []string) string {
	a, _ := strconv.Atoi(m[1])
	b, _ := strconv.Atoi(m[2])
	return fmt.Sprintf("D%d:%d", a, b)
}

// LongMemEval.

type lmeRecord struct {
	QuestionID         string          `json:"question_id"`
	QuestionType       string          `json:"question_type"`
	Question           string          `json:"question"`
	Answer             json.RawMessage `json:"answer"`
	QuestionDate       string          `json:"question_date"`
	HaystackDates      []string        `json:"haystack_dates"`
	HaystackSessionIDs []string        `json:"haystack_session_ids"`
	HaystackSessions   [][]lmeTurn     `json:"haystack_sessions"`
	AnswerSessionIDs   []string        `json:"answer_session_ids"`
}

type lmeTurn struct {
	Role      string `json:"role"`
	Content   string `json:"content"`
	HasAnswer bool   `json:"has_answer"`
}

// lmeTime is the layout of LongMemEval dates, e.g. "2023/05/30 (Tue) 23:40".
const lmeTime = "2006/01/02 (Mon) 15:04"

func parseLMETime(s string) (time.Time, error) {
	t, err := time.ParseInLocation(lmeTime, strings.TrimSpace(s), time.UTC)
	if err != nil {
		return t, engram.Errorf(engram.EINVALID, "date %q is not like %q", s, "2023/05/30 (Tue) 23:40")
	}
	return t, nil
}

func parseLongMemEval(r io.Reader, sel selection) (*dataset, error) {
	recs, err := decodeSelected[lmeRecord](r, sel, "LongMemEval")
	if err != nil {
		return nil, err
	}
	ds := &dataset{bench: BenchLongMemEval, labels: map[string]*label{}}
	seen := map[string]bool{}
	for i, r := range recs {
		if r.QuestionID == "" {
			return nil, engram.Errorf(engram.EINVALID, "LongMemEval record %d has no question_id", i)
		}
		if seen[r.QuestionID] {
			return nil, engram.Errorf(engram.EINVALID, "LongMemEval question_id %q appears twice", r.QuestionID)
		}
		seen[r.QuestionID] = true
		h, l, err := lmeHaystack(r, &ds.notes)
		if err != nil {
			return nil, fmt.Errorf("LongMemEval question %s: %w", r.QuestionID, err)
		}
		ds.haystacks = append(ds.haystacks, h)
		ds.labels[r.QuestionID] = l
	}
	return ds, nil
}

func lmeHaystack(r lmeRecord, notes *parseNotes) (haystack, *label, error) {
	h := haystack{id: r.QuestionID}
	n := len(r.HaystackSessions)
	if len(r.HaystackDates) != n || len(r.HaystackSessionIDs) != n {
		return h, nil, engram.Errorf(engram.EINVALID, "haystack_dates (%d), haystack_session_ids (%d) and haystack_sessions (%d) differ in length",
			len(r.HaystackDates), len(r.HaystackSessionIDs), n)
	}
	type sess struct {
		idx int
		at  time.Time
	}
	order := make([]sess, n)
	for i, d := range r.HaystackDates {
		at, err := parseLMETime(d)
		if err != nil {
			return h, nil, fmt.Errorf("haystack_dates[%d]: %w", i, err)
		}
		order[i] = sess{i, at}
	}
	// Dates are not always in order; ties keep the file's order.
	sort.SliceStable(order, func(a, b int) bool { return order[a].at.Before(order[b].at) })

	l := &label{category: r.QuestionType, answer: answerText(r.Answer), abstention: strings.HasSuffix(r.QuestionID, "_abs")}
	present := map[string]bool{}
	hasAnswer := map[string]bool{}
	for _, s := range order {
		sid := r.HaystackSessionIDs[s.idx]
		if sid == "" {
			return h, nil, engram.Errorf(engram.EINVALID, "haystack_session_ids[%d] is empty", s.idx)
		}
		present[sid] = true
		for i, t := range r.HaystackSessions[s.idx] {
			if strings.TrimSpace(t.Content) == "" {
				notes.TurnsSkipped++
				continue
			}
			key := fmt.Sprintf("%s#%d", sid, i)
			h.turns = append(h.turns, turn{
				key: key, session: sid, role: t.Role, content: t.Content,
				at:       s.at.Add(time.Duration(i) * time.Second),
				metadata: map[string]any{"session_id": opaque(sid), "turn": i},
			})
			// A session can appear twice in a haystack (a repeated filler
			// session); its turns share keys, so count each once.
			if t.HasAnswer && !hasAnswer[key] {
				hasAnswer[key] = true
				l.turns = append(l.turns, key)
			}
		}
	}
	for _, sid := range r.AnswerSessionIDs {
		if present[sid] && !slices.Contains(l.sessions, sid) {
			l.sessions = append(l.sessions, sid)
		}
	}
	q := question{id: r.QuestionID, text: r.Question}
	if r.QuestionDate != "" {
		at, err := parseLMETime(r.QuestionDate)
		if err != nil {
			return h, nil, fmt.Errorf("question_date: %w", err)
		}
		q.date = &at
	}
	h.questions = []question{q}
	if l.abstention {
		l.skip = "abstention"
	}
	return h, l, nil
}
