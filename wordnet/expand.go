package wordnet

import (
	"cmp"
	"log/slog"
	"slices"
	"strings"
	"sync"
)

// Limits bound an expansion.
type Limits struct {
	// Senses is how many senses of each part of speech of a word are
	// followed, most frequent first (0 means 2): the rarer senses of a
	// common word lead far from what a question meant.
	Senses int
	// Hyponyms is how many levels of more specific senses are followed
	// (0: none); Hypernyms the same for more general ones.
	Hyponyms, Hypernyms int
	// Broad is the most more specific senses a sense may have and still
	// be followed down: a broad sense ("activity") has hundreds, and its
	// hyponyms say nothing of any one question.
	Broad int
	// Max is the most related words returned for one word (0: no limit).
	Max int
	// Nouns follows only the senses of a word as a noun: a question's
	// general word is most often a noun ("activities", "pets"), and the
	// verb senses of the same spelling ("sport": to frolic) stray.
	Nouns bool
	// Compounds keeps related lemmas of several words ("water_sport");
	// without it only one-word lemmas are returned.
	Compounds bool
}

// DefaultLimits are the limits measured on LoCoMo's tuning conversations
// (see docs/retrieval-tuning.md).
var DefaultLimits = Limits{Senses: 1, Hyponyms: 1, Broad: 40, Max: 12, Nouns: true}

// Related is a word related to the one expanded and how: "syn" (a
// synonym, or a similar adjective), "hypo" (more specific) or "hyper"
// (more general), and Depth, the levels it lies away (0 for synonyms).
type Related struct {
	Word  string
	Rel   string
	Depth int
}

// Relations of Related.
const (
	RelSynonym  = "syn"
	RelHyponym  = "hypo"
	RelHypernym = "hyper"
)

// Lemmas returns the base forms of word that the database lists, the word
// itself first when it is one ("surfing", "dogs" → "dog", "went" is not
// found: the irregular forms' exception lists are not installed). It loads
// the database and fails as Load does.
func (db *DB) Lemmas(word string) ([]string, error) {
	if err := db.Load(); err != nil {
		return nil, err
	}
	word = strings.ToLower(strings.ReplaceAll(strings.TrimSpace(word), " ", "_"))
	var out []string
	for _, c := range append([]string{word}, baseForms(word)...) {
		if len(db.senses[c]) > 0 && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out, nil
}

// Expand returns the words related to word within lim, nearest first
// (synonyms, then the hyponyms and hypernyms of the first level, then the
// next), without word and its base forms. It loads the database and fails
// as Load does.
func (db *DB) Expand(word string, lim Limits) ([]Related, error) {
	lemmas, err := db.Lemmas(word)
	if err != nil || len(lemmas) == 0 {
		return nil, err
	}
	senses := lim.Senses
	if senses <= 0 {
		senses = 2
	}
	seen := map[string]bool{}
	for _, l := range lemmas {
		seen[l] = true
	}
	var out []Related
	add := func(id uint32, rel string, depth int) {
		for _, w := range db.syn[id].words {
			if seen[w] || (!lim.Compounds && strings.ContainsAny(w, "_-")) {
				continue
			}
			seen[w] = true
			out = append(out, Related{Word: strings.ReplaceAll(w, "_", " "), Rel: rel, Depth: depth})
		}
	}
	var start []uint32
	for _, l := range lemmas {
		for _, id := range firstSenses(db, db.senses[l], senses) {
			if !lim.Nouns || db.part(id) == 0 {
				start = append(start, id)
			}
		}
	}
	for _, id := range start {
		add(id, RelSynonym, 0)
		for _, s := range db.syn[id].sim {
			add(s, RelSynonym, 0)
		}
	}
	down, up := start, start
	for d := 1; d <= max(lim.Hyponyms, lim.Hypernyms); d++ {
		var nextDown, nextUp []uint32
		if d <= lim.Hyponyms {
			for _, id := range down {
				if lim.Broad > 0 && len(db.syn[id].hypo) > lim.Broad {
					continue
				}
				for _, h := range db.syn[id].hypo {
					add(h, RelHyponym, d)
					nextDown = append(nextDown, h)
				}
			}
		}
		if d <= lim.Hypernyms {
			for _, id := range up {
				for _, h := range db.syn[id].hyper {
					add(h, RelHypernym, d)
					nextUp = append(nextUp, h)
				}
			}
		}
		down, up = nextDown, nextUp
	}
	slices.SortStableFunc(out, func(a, b Related) int { return cmp.Compare(a.Depth, b.Depth) })
	if lim.Max > 0 && len(out) > lim.Max {
		out = out[:lim.Max]
	}
	return out, nil
}

// firstSenses returns the first n senses of each part of speech among ids,
// which list a lemma's senses part by part, most frequent first.
func firstSenses(db *DB, ids []uint32, n int) []uint32 {
	var out []uint32
	count := 0
	var part int
	for i, id := range ids {
		p := db.part(id)
		if i == 0 || p != part {
			part, count = p, 0
		}
		if count < n {
			out = append(out, id)
		}
		count++
	}
	return out
}

// part returns the index in parts of the part of speech of synset id.
func (db *DB) part(id uint32) int {
	for i, end := range db.ends {
		if id < end {
			return i
		}
	}
	return len(db.ends)
}

// baseForms returns the candidate base forms of an inflected English word
// by WordNet's detachment rules (nouns, verbs, adjectives), longest suffix
// first; which of them are words is for the index to say.
func baseForms(w string) []string {
	var out []string
	for _, r := range detach {
		if strings.HasSuffix(w, r[0]) && len(w) > len(r[0])+1 {
			out = append(out, w[:len(w)-len(r[0])]+r[1])
		}
	}
	return out
}

var detach = [][2]string{
	{"ies", "y"}, {"ses", "s"}, {"xes", "x"}, {"zes", "z"}, {"ches", "ch"}, {"shes", "sh"},
	{"men", "man"}, {"es", "e"}, {"es", ""}, {"s", ""},
	{"ed", "e"}, {"ed", ""}, {"ing", "e"}, {"ing", ""},
	{"er", ""}, {"est", ""}, {"er", "e"}, {"est", "e"},
}

// Thesaurus expands English words with a DB for retrieval (it implements
// retrieval.Thesaurus). A database that cannot be read turns expansion
// off: the error is logged once and every word has no related words.
type Thesaurus struct {
	DB     *DB
	Limits Limits
	Log    *slog.Logger

	once sync.Once
}

// Related returns the words related to word within the thesaurus's limits.
func (t *Thesaurus) Related(word string) []string {
	rs, err := t.DB.Expand(word, t.Limits)
	if err != nil {
		t.once.Do(func() {
			log := t.Log
			if log == nil {
				log = slog.Default()
			}
			log.Warn("wordnet: query expansion is off", "err", err)
		})
		return nil
	}
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Word
	}
	return out
}
