package retrieval

import (
	"regexp"
	"strings"
	"time"

	"github.com/engramhq/engram/formation"
	"github.com/engramhq/engram/textsearch"
)

// Query is what analysis reads out of a search's free text: the text each
// channel should see and the hints the reranker uses.
type Query struct {
	Text string
	// Dense is the text to embed: the question with its question words,
	// auxiliaries and question mark stripped, so that it looks like the
	// statements it should meet rather than like other questions.
	Dense string
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
	// AsksAssistant is true when the query is about what the assistant
	// said ("you told me", "you recommended"); AsksUser when it is about
	// the user ("I", "my").
	AsksAssistant, AsksUser bool
}

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
	assistantRef     = regexp.MustCompile(`(?i)\byou (told|mentioned|said|recommended|suggested|provided|gave|listed|shared|wrote|described|explained|proposed|advised|came up with|helped)\b|\bremind me (what|of|which|how|about)\b|\b(your|you're|you) (recommendation|suggestion|advice|list|answer|response)s?\b|\bour (previous|last|earlier) (chat|conversation|discussion)\b`)
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
	q.Temporal = temporalQuestion.MatchString(text)
	for _, m := range formation.Resolve(text, now) {
		if !m.Relative && m.Unit == formation.Month && !strings.ContainsAny(m.Text, "0123456789") {
			q.Months = append(q.Months, m.From.Month())
			continue
		}
		q.Periods = append(q.Periods, m)
	}
	if len(q.Periods) > 0 || len(q.Months) > 0 {
		q.Temporal = true
	}
	q.AsksAssistant = assistantRef.MatchString(text)
	q.AsksUser = !q.AsksAssistant && firstPerson.MatchString(text)
	return q
}

// Lexical returns the text the full-text channel searches for: the
// query's terms, with the names left out when dropNames is set (a name
// alone then matches every line its person said, and the reranker's speaker
// boost weighs names instead) and with each term's regular English
// inflections when inflect is set (see Inflections).
func (q *Query) Lexical(inflect, dropNames bool) string {
	drop := map[string]bool{}
	if dropNames {
		for _, n := range q.Names {
			for _, w := range strings.FieldsFunc(n, textsearch.IsSeparator) {
				drop[strings.ToLower(w)] = true
			}
		}
	}
	var out []string
	for _, t := range q.Terms {
		if drop[t] {
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
