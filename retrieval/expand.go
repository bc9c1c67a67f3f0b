package retrieval

import (
	"fmt"
	"slices"

	"github.com/engramhq/engram"
)

// Place is one place of a ranking after Collapse: the candidate kept
// there and the ids of the candidates ranked below it that repeat one of
// its source turns, best first.
type Place struct {
	*Candidate
	Collapsed []string
}

// Turns returns the source turns a memory repeats: the episodes it cites
// (engram.Memory.Sources). A memory made from one part of an episode's
// media (a caption, a transcript, one segment of it) repeats that part
// only, so its key for that episode names the part: the memories of two
// segments of one recording are two turns. A turn memory repeats its
// episode; a scene or window memory over several turns repeats each of
// them; a fact formed from a turn repeats it. Core memories (a profile,
// a persona) stand for what they summarise rather than repeat it, and a
// memory without sources (added directly) repeats nothing: neither has
// turns.
func Turns(m *engram.Memory) []string {
	if m.Kind == engram.KindCore || len(m.Sources) == 0 {
		return nil
	}
	cite, _ := m.Metadata[engram.MetaMedia].(map[string]any)
	ep, _ := cite["episode"].(string)
	if ep == "" {
		return m.Sources
	}
	out := slices.Clone(m.Sources)
	for i, s := range out {
		if s == ep {
			out[i] = fmt.Sprintf("%s#%v/%v/%v", s, cite["index"], cite["part"], cite["segment"])
		}
	}
	return out
}

// Collapse gives each source turn one place in a ranking: in rank order,
// a candidate that repeats a turn of a candidate already kept (see Turns)
// collapses into the best ranked of those (listed in its Place's
// Collapsed); any other is kept when fit accepts it (nil accepts all), and
// then its turns are its own. A window memory over turns A and B kept
// first thus takes in the turn memories of A and of B and any window that
// shares A or B; kept after A's turn memory, it collapses into it, and B's
// own turn memory, which shares nothing with A's, keeps a place of its
// own. Kept candidates never share a turn, so a context of them never
// repeats one. A candidate fit refuses (too long for what is left of a
// budget) claims nothing: a shorter one with the same turn may take the
// place. Collapse stops keeping at k places; the rest of the ranking is
// still read for the candidates that collapse into those kept. A fact
// does not collapse into a fact of another subject or attribute formed
// from the same turn: it is another statement, not a repeat.
func Collapse(cs []*Candidate, k int, fit func(*Candidate) bool) []Place {
	var places []Place
	owner := map[string]int{} // turn -> index of the place that shows it
	for _, c := range cs {
		turns := Turns(c.Memory)
		into := -1
		for _, t := range turns {
			if i, ok := owner[t]; ok && (into < 0 || i < into) {
				into = i
			}
		}
		switch {
		case into >= 0 && otherFact(places[into].Memory, c.Memory):
			// Two facts of one turn about different things ("works as a
			// developer", "works at Siemens") repeat nothing of each other:
			// c takes a place, and the turn stays the first one's.
			if len(places) < k && (fit == nil || fit(c)) {
				places = append(places, Place{Candidate: c})
			}
		case into >= 0:
			places[into].Collapsed = append(places[into].Collapsed, c.Memory.ID)
		case len(places) < k && (fit == nil || fit(c)):
			for _, t := range turns {
				owner[t] = len(places)
			}
			places = append(places, Place{Candidate: c})
		}
	}
	return places
}

// otherFact reports whether a and b are both facts (engram.MetaFactAttribute
// set) of different subjects or attributes.
func otherFact(a, b *engram.Memory) bool {
	aa, _ := a.Metadata[engram.MetaFactAttribute].(string)
	ba, _ := b.Metadata[engram.MetaFactAttribute].(string)
	if aa == "" || ba == "" {
		return false
	}
	as, _ := a.Metadata[engram.MetaFactSubject].(string)
	bs, _ := b.Metadata[engram.MetaFactSubject].(string)
	return aa != ba || as != bs
}
