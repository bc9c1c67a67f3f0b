package retrieval

import (
	"fmt"
	"slices"
	"testing"

	"github.com/engramhq/engram"
)

// staleLang is one language's replaced turn, its stale terms, the newer
// fact and the question about the present.
type staleLang struct {
	tag, turn, fact, q string
	terms              []string
}

var staleLangs = []staleLang{
	{"en", "I live in Berlin", "Bob lives in Munich", "Where does Bob live now?", []string{"live", "lives"}},
	{"de", "Ich wohne in Berlin", "Bob wohnt in München", "Wo wohnt Bob jetzt?", []string{"wohnt", "wohnen"}},
	{"es", "Vivo en Berlín", "Bob vive en Múnich", "¿Dónde vive Bob ahora?", []string{"vive", "vivir"}},
	{"fr", "J'habite à Berlin", "Bob habite à Munich", "Où habite Bob maintenant ?", []string{"habite", "vit"}},
}

// staleRanking reranks, for l's question, l's replaced turn (stale for
// l's terms), ten other memories of Bob below it, and, withFact, the
// fact said factDays after the turn with fused score factFused; it returns
// the places of the turn and the fact (-1 for none) and the turn's
// candidate.
func staleRanking(l staleLang, factDays int, factFused float64, withFact bool) (turn, fact int, c *Candidate) {
	now := day0.AddDate(0, 3, 0)
	old := mem("old", l.turn, 0, "e0", "", "")
	old.Memory.Language = l.tag
	old.Memory.Metadata[engram.MetaStaleTerms] = l.terms
	old.Fused = 0.9
	cs := []*Candidate{old}
	for i := range 10 {
		o := mem(fmt.Sprintf("x%d", i), fmt.Sprintf("Bob football %d", i), 0, fmt.Sprintf("e%d", i+1), "", "")
		o.Fused = 0.85 - float64(i)*0.04
		cs = append(cs, o)
	}
	if withFact {
		f := mem("fact", l.fact, factDays, "e20", "Bob", "residence")
		f.Memory.Language = l.tag
		f.Fused = factFused
		cs = append(cs, f)
	}
	Rerank(Analyze(l.q, now), cs, DefaultConfig(), now)
	at := func(id string) int { return slices.IndexFunc(cs, func(c *Candidate) bool { return c.Memory.ID == id }) }
	return at("old"), at("fact"), old
}

// TestStaleYields checks, in four languages, that a turn whose fact a
// newer one replaced ranks just below that newer fact when the channels
// found it, instead of buried by the factor under memories the question
// is not about, and that the fact takes the turn's place when the
// channels ranked the turn higher. Without the newer fact, or with a
// fact older than the turn, the factor applies as before.
func TestStaleYields(t *testing.T) {
	cfg := DefaultConfig()
	for _, l := range staleLangs {
		turn, fact, c := staleRanking(l, 30, 0.95, true)
		if fact != 0 || turn != 1 {
			t.Errorf("%s, fact found first: the replaced turn at %d, the fact at %d; want 1 and 0", l.tag, turn, fact)
		}
		if got := c.Factors[FactorStale]; got <= cfg.Stale {
			t.Errorf("%s: the replaced turn lost %v of its score, want less than the factor %v", l.tag, got, cfg.Stale)
		}
		turn, fact, c = staleRanking(l, 30, 0.3, true)
		if fact != 0 || turn != 1 || c.Factors[FactorStale] <= cfg.Stale {
			t.Errorf("%s, fact found far below: the replaced turn at %d (lost %v), the fact at %d; want the fact first, the turn just below",
				l.tag, turn, c.Factors[FactorStale], fact)
		}
		turn, _, c = staleRanking(l, 0, 0.95, false)
		if got := c.Factors[FactorStale]; got != cfg.Stale || turn < 5 {
			t.Errorf("%s, no newer fact: the replaced turn at %d, lost %v; want the factor %v", l.tag, turn, got, cfg.Stale)
		}
		_, _, c = staleRanking(l, -10, 0.95, true)
		if got := c.Factors[FactorStale]; got != cfg.Stale {
			t.Errorf("%s: an older fact is no replacement, the turn lost %v; want the factor %v", l.tag, got, cfg.Stale)
		}
	}
}
