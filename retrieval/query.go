package retrieval

import (
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/formation"
	"github.com/engramhq/engram/textsearch"
)

// Query is what analysis reads out of a search's free text: the text each
// channel should see and the hints the reranker uses.
type Query struct {
	Text string
	// Lang is the query's language as a BCP 47 base tag ("en", "de",
	// "zh"), or "" when analysis could not tell.
	Lang string
	// Dense is the text to embed: the question with its question words,
	// auxiliaries and question mark stripped, so that it looks like the
	// statements it should meet rather than like other questions.
	Dense string
	// Views are the phrasings of the query whose embeddings, averaged, make
	// the dense channel's query vector: Dense and the query as typed, each
	// also without the names it holds. A name weighs heavily in a short
	// embedding and pulls it towards everything that person said; the
	// question form meets the questions that came before an answer, which
	// formation indexes with it.
	Views []string
	// Parts are the occasions a comparison names ("which came first, the
	// tomatoes or the marigolds?", "how many days between A and B?"). The
	// dense channel searches for each on its own as well, since one
	// embedding of both lands between them.
	Parts []string
	// Terms are the query's content words, lower case (see
	// textsearch.Terms), without the question words.
	Terms []string
	// Names are the proper names in the query ("Caroline", "New York").
	Names []string
	// Temporal is true for questions about time: "when", "what date",
	// "how long ago", "which ... first".
	Temporal bool
	// Periods are the absolute periods the query names or implies, relative
	// ones resolved against the search's reference time.
	Periods []formation.Mention
	// Months are months named without a year ("in June"): a match in any
	// year counts, because the reference time of a question about an old
	// conversation is rarely the conversation's year.
	Months []time.Month
	// Answer is the kind of answer a question wants, when its question
	// word says: AnswerPlace ("where"), AnswerPerson ("who"), AnswerCount
	// ("how many"), AnswerName ("what is the name"), or "".
	Answer string
	// Gathers is true for questions whose answer is put together from
	// several occasions: counts and totals ("how many", "in total"),
	// comparisons and orders ("the most", "which ... first"), the
	// present state of something that changed ("currently", "so far"),
	// and occasions placed by a period relative to now that has ended
	// ("two months ago", "last month"): the answer is picked among the
	// times the subject came up by their dates.
	Gathers bool
	// AsksAssistant is true when the query is about what the assistant
	// said ("you told me", "you recommended"); AsksUser when it is about
	// the user ("I", "my").
	AsksAssistant, AsksUser bool
}

// Kinds of answer a question can ask for.
const (
	AnswerPlace  = "place"
	AnswerPerson = "person"
	AnswerCount  = "count"
	AnswerName   = "name"
)

var (
	placeQuestion  = regexp.MustCompile(`(?i)^\s*where\b|\bwhat (city|country|place|state|town)\b`)
	personQuestion = regexp.MustCompile(`(?i)^\s*(who|whom|whose)\b`)
	countQuestion  = regexp.MustCompile(`(?i)\bhow (many|much|long|old|often|far)\b`)
	nameQuestion   = regexp.MustCompile(`(?i)\bnames?\b|\bcalled\b|\bwhat (book|movie|show|song|band|game|restaurant|brand)s?\b`)
)

// leadingWords are stripped from the start of a question for the dense
// text: question words, auxiliaries and the articles after them.
var leadingWords = map[string]bool{
	"what": true, "when": true, "where": true, "who": true, "whom": true, "whose": true, "which": true,
	"why": true, "how": true, "many": true, "much": true, "long": true, "often": true, "old": true, "far": true,
	"did": true, "does": true, "do": true, "is": true, "are": true, "was": true, "were": true, "has": true,
	"have": true, "had": true, "will": true, "would": true, "can": true, "could": true, "should": true,
	"might": true, "the": true, "a": true, "an": true, "kind": true, "type": true, "types": true, "kinds": true,
	"of": true, "sort": true,
}

// questionWords are never content terms.
var questionWords = map[string]bool{
	"what": true, "when": true, "where": true, "who": true, "whom": true, "whose": true, "which": true,
	"why": true, "how": true, "kind": true, "type": true, "many": true, "much": true,
}

var (
	temporalQuestion = regexp.MustCompile(`(?i)^\s*when\b|\b(what|which) (date|day|time|year|month|week|season)\b|\bhow long (ago|since|before|after)\b|\bhow (many|much) (days|weeks|months|years|time)\b|\b(first|earlier|later|before|after|recently|most recent|latest|last time)\b|\bwhat order\b`)
	assistantRef     = regexp.MustCompile(`(?i)\byou (told|mentioned|said|recommended|suggested|provided|gave|listed|shared|wrote|described|explained|proposed|advised|came up with|helped)\b|\bremind me (what|of|which|how|about)\b|\b(your|you're|you) (recommendation|suggestion|advice|list|answer|response)s?\b`)
	userRef          = regexp.MustCompile(`(?i)\bI (mentioned|said|told you|shared|wrote|described|explained|asked)\b`)
	gathersQuestion  = regexp.MustCompile(`(?i)\b(how many|how much|total|in total|altogether|combined|the most|the least|first|both|different|each|every|between|currently|current|still|latest|recent|recently|all the|so far|what order)\b`)
	comparison       = regexp.MustCompile(`(?i)\b(first|before|after|earlier|later|sooner|between)\b`)
	between          = regexp.MustCompile(`(?i)\bbetween (.+?) and (.+?)[?.!]*$`)
	firstPerson      = regexp.MustCompile(`(?i)\b(i|i'm|i've|i'd|i'll|me|my|mine|myself)\b`)
)

// Analyze reads a query. now is the reference time for relative
// expressions ("last week").
func Analyze(text string, now time.Time) *Query {
	q := &Query{Text: text}
	q.Dense = denseText(text)
	for _, t := range textsearch.Terms(text) {
		if !questionWords[t] {
			q.Terms = append(q.Terms, t)
		}
	}
	known := map[string]bool{}
	for _, w := range strings.FieldsFunc(text, textsearch.IsSeparator) {
		known[strings.ToLower(w)] = true
	}
	q.Names = formation.Names(text, known)
	q.Views = views(q.Dense, text, q.Names)
	q.Temporal = temporalQuestion.MatchString(text)
	q.Gathers = gathersQuestion.MatchString(text)
	if comparison.MatchString(text) {
		q.Parts = parts(text)
	}
	switch {
	case placeQuestion.MatchString(text):
		q.Answer = AnswerPlace
	case personQuestion.MatchString(text):
		q.Answer = AnswerPerson
	case countQuestion.MatchString(text):
		q.Answer = AnswerCount
	case nameQuestion.MatchString(text):
		q.Answer = AnswerName
	}
	for _, m := range formation.Resolve(text, now) {
		if !m.Relative && m.Unit == formation.Month && !strings.ContainsAny(m.Text, "0123456789") {
			q.Months = append(q.Months, m.From.Month())
			continue
		}
		q.Periods = append(q.Periods, m)
		if m.Relative && !m.To.After(now) {
			// "two months ago", "last month": the subject came up on
			// several occasions, and the answer is the one of that time.
			q.Gathers = true
		}
	}
	if len(q.Periods) > 0 || len(q.Months) > 0 {
		q.Temporal = true
	}
	// "I mentioned ..." asks about the user's own words even when the
	// assistant is asked to remember them.
	q.AsksAssistant = assistantRef.MatchString(text) && !userRef.MatchString(text)
	q.AsksUser = !q.AsksAssistant && firstPerson.MatchString(text)
	return q
}

// Lexical returns the text the full-text channel searches for: the
// query's terms, without the words of the names drop says to leave out (a
// speaker's name alone matches every line that person said; the
// reranker's speaker boost weighs it instead), and, with inflect, each
// term's regular English inflections (see Inflections). A CJK term is
// split into its character bigrams.
func (q *Query) Lexical(inflect bool, drop func(name string) bool) string {
	skip := map[string]bool{}
	if drop != nil {
		for _, n := range q.Names {
			if !drop(n) {
				continue
			}
			for _, w := range strings.FieldsFunc(n, textsearch.IsSeparator) {
				skip[strings.ToLower(w)] = true
			}
		}
	}
	var out []string
	for _, t := range q.Terms {
		if skip[t] {
			continue
		}
		if seg := textsearch.Segment(t); seg != t {
			// A run of CJK characters is a phrase of its bigrams to the
			// text index: a whole question would have to appear verbatim.
			// Its bigrams as separate terms match the words it shares
			// with a memory.
			out = append(out, strings.Fields(seg)...)
			continue
		}
		out = append(out, t)
		if inflect {
			out = append(out, Inflections(t)...)
		}
	}
	if len(out) == 0 {
		return q.Text
	}
	return strings.Join(out, " ")
}

// Speakers collects the speakers of memories, as name keys for
// SpeakerNamed.
type Speakers map[string]bool

// Add records the speaker of m, if it has one.
func (s Speakers) Add(m *engram.Memory) {
	if sp := m.Speaker(); sp != "" {
		s[strings.ToLower(sp)] = true
		if i := strings.IndexByte(sp, ' '); i > 0 {
			s[strings.ToLower(sp[:i])] = true
		}
	}
}

// Named reports whether a name is one of the speakers (whole or first name).
func (s Speakers) Named(name string) bool {
	return s[strings.ToLower(strings.TrimSuffix(strings.TrimSuffix(name, "'s"), "’s"))]
}

// denseText strips a question's leading question words and auxiliaries
// and its question marks: "When did Caroline go to the support group?"
// becomes "Caroline go to the support group".
func denseText(text string) string {
	t := strings.TrimSpace(text)
	for {
		i := strings.IndexFunc(t, func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' })
		w := t
		if i >= 0 {
			w = t[:i]
		}
		if !leadingWords[strings.ToLower(strings.Trim(w, ",'\""))] || i < 0 {
			break
		}
		t = strings.TrimSpace(t[i:])
	}
	t = strings.TrimSpace(strings.ReplaceAll(t, "?", " "))
	if t == "" {
		return strings.TrimSpace(text)
	}
	return strings.Join(strings.Fields(t), " ")
}

// views returns the distinct phrasings of a query to embed (see
// Query.Views).
func views(dense, text string, names []string) []string {
	var nameRe *regexp.Regexp
	if len(names) > 0 {
		alt := make([]string, len(names))
		for i, n := range names {
			alt[i] = regexp.QuoteMeta(n)
		}
		// Whole words only, with their possessive endings.
		nameRe = regexp.MustCompile(`\b(?:` + strings.Join(alt, "|") + `)(?:'s|’s)?\b`)
	}
	var out []string
	for _, v := range []string{dense, withoutNames(dense, nameRe), strings.TrimSpace(text), withoutNames(text, nameRe)} {
		if v != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// withoutNames removes what names matches from text, or returns "" when
// there are no names or nothing else would be left.
func withoutNames(text string, names *regexp.Regexp) string {
	if names == nil {
		return ""
	}
	text = names.ReplaceAllString(text, " ")
	if len(textsearch.Terms(text)) == 0 {
		return ""
	}
	return strings.Join(strings.Fields(text), " ")
}

// parts returns the two occasions a comparison names: the alternatives
// after its last comma, dash or colon ("..., A or B?"), or the ends of
// "between A and B". It returns nil when the question has neither form.
func parts(text string) []string {
	clean := func(s string) string {
		return strings.Trim(strings.TrimSpace(s), "?.!,;:\"' ")
	}
	tail := text
	if i := strings.LastIndexAny(text, ",:;–—"); i >= 0 {
		_, n := utf8.DecodeRuneInString(text[i:])
		tail = text[i+n:]
	} else if i := strings.LastIndex(text, " - "); i >= 0 {
		tail = text[i+3:]
	}
	if a, b, ok := strings.Cut(tail, " or "); ok && tail != text {
		if a, b = clean(a), clean(b); a != "" && b != "" {
			return []string{a, b}
		}
	}
	if g := between.FindStringSubmatch(text); g != nil {
		if a, b := clean(g[1]), clean(g[2]); a != "" && b != "" {
			return []string{a, b}
		}
	}
	return nil
}
