package retrieval

import (
	"cmp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/lang"
)

// FactorCurrent is reported on a hit that Current moved: the score it had
// before it took another state's place (its score is now that place's).
const FactorCurrent = "current"

// SameFormAt is the word overlap (Jaccard, over the words of their texts)
// from which two memories that share no source read as two states of one
// thing ("the team meeting is on Monday at 10" and "… on Thursday at
// 3"), when neither states a fact the former recognised.
const SameFormAt = 0.6

// Current orders the states of each changing thing among the first
// cfg.Current candidates by when they became true: the latest first for a
// question about the present (Query.Tense TenseNow, and TenseOpen in a
// search as of cfg.AsOf, whose present is then), the earliest first for
// one about the past (TensePast); a question that does not say keeps the
// order. The states of one thing are the memories of one subject and
// attribute the question asks about (fact memories, engram.MetaFactSubject
// and MetaFactAttribute, with the turn and window memories formed from the
// same turns), and memories of the same form said at different times
// (see SameFormAt). (Grouping every memory of a person that holds the
// question's words was tried and left out: on LongMemEval it moved newer
// mentions of the same word ahead of an older count the question needs.)
// The members of a group take the places the group held, in time order, each with the score of the place it takes; other
// candidates keep theirs. Scores of moved hits are recorded as
// FactorCurrent. A Current of 0 turns the step off.
func Current(q *Query, cs []*Candidate, cfg Config) {
	n := min(cfg.Current, len(cs))
	latest := q.Tense == TenseNow || (q.Tense == TenseOpen && cfg.AsOf != nil)
	if n < 2 || !latest && q.Tense != TensePast {
		return
	}
	top := cs[:n]
	askedFirst(q, top)
	for _, g := range slices.Concat(factGroups(q, top, cfg.AsOf), formGroups(top)) {
		order(top, g, latest)
	}
}

// askedFirst puts, among the fact memories of each subject in cs, those
// of an attribute the question asks about (see asksFact) into the first
// of the places they hold: "where did she live?" wants her residence, not
// her car, whichever the channels found likelier.
func askedFirst(q *Query, cs []*Candidate) {
	words := queryWords(q)
	bySubject := map[string][]*Candidate{}
	var subjects []string
	for _, c := range cs {
		subj, _ := c.Memory.Metadata[engram.MetaFactSubject].(string)
		if _, fact := factKey(c.Memory); !fact {
			continue
		}
		subj = strings.ToLower(subj)
		if bySubject[subj] == nil {
			subjects = append(subjects, subj)
		}
		bySubject[subj] = append(bySubject[subj], c)
	}
	for _, subj := range subjects {
		facts := bySubject[subj]
		asked := func(c *Candidate) bool { return asksFact(q.Lang, words, c.Memory) }
		if len(facts) > 1 && slices.ContainsFunc(facts, asked) && !allOf(facts, asked) {
			arrange(cs, facts, func(a, b *Candidate) int { return cmpBool(asked(b), asked(a)) })
		}
	}
}

func allOf(cs []*Candidate, f func(*Candidate) bool) bool {
	return !slices.ContainsFunc(cs, func(c *Candidate) bool { return !f(c) })
}

// cmpBool orders false before true.
func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// order puts the members of group g, as they now stand in cs, into the
// places they hold, latest state first when latest is true, else
// earliest first; members that became true at the same time keep their
// order.
func order(cs []*Candidate, g []*Candidate, latest bool) {
	arrange(cs, g, func(a, b *Candidate) int {
		if latest {
			return since(b.Memory).Compare(since(a.Memory))
		}
		return since(a.Memory).Compare(since(b.Memory))
	})
}

// arrange sorts the members of g, as they now stand in cs, by cmp (stable)
// into the places they hold, each taking its place's score.
func arrange(cs []*Candidate, g []*Candidate, cmp func(a, b *Candidate) int) {
	var places []int
	for i, c := range cs {
		if slices.Contains(g, c) {
			places = append(places, i)
		}
	}
	members := make([]*Candidate, len(places))
	scores := make([]float64, len(places))
	for i, p := range places {
		members[i], scores[i] = cs[p], cs[p].Score
	}
	slices.SortStableFunc(members, cmp)
	for i, p := range places {
		c := members[i]
		if cs[p] != c {
			if c.Factors == nil {
				c.Factors = map[string]float64{}
			}
			if _, moved := c.Factors[FactorCurrent]; !moved {
				c.Factors[FactorCurrent] = c.Score
			}
			c.Score = scores[i]
			c.Factors[FactorFinal] = c.Score
		}
		cs[p] = c
	}
}

// factGroups returns, for every subject and attribute the question asks
// about (see asksFact) with facts among cs said at different times, the
// fact memories of it and the other memories formed from their turns,
// with the turns of that subject marked stale (as of at) for a word of
// the question: a turn whose fact a newer one superseded has no fact
// among the candidates to be found by.
func factGroups(q *Query, cs []*Candidate, at *time.Time) [][]*Candidate {
	type group struct {
		members []*Candidate
		asked   bool
	}
	groups := map[string]*group{}
	var keys []string
	bySource := map[string][]string{}
	words := queryWords(q)
	for _, c := range cs {
		k, ok := factKey(c.Memory)
		if !ok {
			continue
		}
		g := groups[k]
		if g == nil {
			g = &group{}
			groups[k] = g
			keys = append(keys, k)
		}
		g.members = append(g.members, c)
		g.asked = g.asked || asksFact(q.Lang, words, c.Memory)
		for _, s := range c.Memory.Sources {
			if !slices.Contains(bySource[s], k) {
				bySource[s] = append(bySource[s], k)
			}
		}
	}
	for _, c := range cs {
		if _, ok := factKey(c.Memory); ok {
			continue
		}
		var joined []string
		join := func(k string) {
			if !slices.Contains(joined, k) {
				joined = append(joined, k)
				groups[k].members = append(groups[k].members, c)
			}
		}
		for _, s := range c.Memory.Sources {
			for _, k := range bySource[s] {
				join(k)
			}
		}
		if asksStale(q, c.Memory, at) {
			for _, k := range keys {
				if groups[k].asked && strings.HasPrefix(k, strings.ToLower(partyOf(c.Memory))+"\x00") {
					join(k)
				}
			}
		}
	}
	var out [][]*Candidate
	for _, k := range keys {
		if g := groups[k]; g.asked && changed(g.members) {
			out = append(out, g.members)
		}
	}
	return out
}

// partyOf is whom a first-person turn's facts are about, as the former
// names them: its speaker, else its role, else "user".
func partyOf(m *engram.Memory) string {
	return cmp.Or(m.Speaker(), m.Role(), "user")
}

// factKey returns the subject and attribute of a fact memory, folded.
func factKey(m *engram.Memory) (string, bool) {
	attr, _ := m.Metadata[engram.MetaFactAttribute].(string)
	subj, _ := m.Metadata[engram.MetaFactSubject].(string)
	if attr == "" {
		return "", false
	}
	return strings.ToLower(subj) + "\x00" + strings.ToLower(attr), true
}

// changed reports whether the memories became true at different times.
func changed(g []*Candidate) bool {
	return slices.ContainsFunc(g, func(c *Candidate) bool { return !since(c.Memory).Equal(since(g[0].Memory)) })
}

// queryWords returns the query's content words without the names it
// holds: the words that say what it asks about a person.
func queryWords(q *Query) []string {
	names := map[string]bool{}
	for _, n := range q.Names {
		for _, w := range lang.Words(strings.ToLower(n)) {
			names[w] = true
		}
	}
	var out []string
	for _, t := range q.Terms {
		if !names[t] {
			out = append(out, t)
		}
	}
	return out
}

// asksFact reports whether the question's words meet a word of the fact m
// states other than its subject ("live" meets "Bob lives in Berlin"; see
// sameWord), or a question word of its attribute (engram.MetaFactTerms:
// "live" meets "Bob wohnt in München").
func asksFact(tag string, words []string, m *engram.Memory) bool {
	tag = cmp.Or(tag, m.Language) // a short question's language may be undecided
	subj, _ := m.Metadata[engram.MetaFactSubject].(string)
	skip := map[string]bool{}
	for _, w := range lang.Words(strings.ToLower(subj)) {
		skip[w] = true
	}
	for _, f := range slices.Concat(lang.Words(strings.ToLower(m.Value)), m.FactTerms()) {
		if skip[f] {
			continue
		}
		for _, w := range words {
			if sameWord(tag, w, f) {
				return true
			}
		}
	}
	return false
}

// sameWord reports whether a and b are one word: the same, the same stem
// in language tag, one the other with an ending of at most three letters
// ("dog", "dogs"; "live", "lives"), in German the same but for the ge-
// of a participle, or, for Chinese, b within a (see hanWithin).
func sameWord(tag, a, b string) bool {
	if a == b || hanWithin(a, b) {
		return true
	}
	na, nb := utf8.RuneCountInString(a), utf8.RuneCountInString(b)
	if min(na, nb) < 3 {
		return false
	}
	if (strings.HasPrefix(a, b) || strings.HasPrefix(b, a)) && max(na, nb)-min(na, nb) <= 3 {
		return true
	}
	if tag == lang.German {
		// A past participle is its verb with ge- before it: "gewohnt",
		// "wohnt".
		a, b = strings.TrimPrefix(a, "ge"), strings.TrimPrefix(b, "ge")
		if a == b {
			return true
		}
	}
	return lang.Stem(tag, a) == lang.Stem(tag, b)
}
