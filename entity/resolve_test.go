package entity_test

import (
	"bufio"
	"os"
	"strings"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/entity"
)

type pair struct {
	lang string
	a, b entity.Name
	raw  [2]string
	same bool
	line int
}

func loadPairs(t *testing.T) []pair {
	t.Helper()
	f, err := os.Open("testdata/pairs.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []pair
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		c := strings.Split(line, "\t")
		if len(c) != 6 || c[5] != "same" && c[5] != "diff" {
			t.Fatalf("pairs.tsv:%d: want 6 tab-separated columns ending in same or diff: %q", n, line)
		}
		typ := func(s string) string {
			if s == "-" {
				return ""
			}
			return s
		}
		out = append(out, pair{
			lang: c[0], line: n, raw: [2]string{c[1], c[3]}, same: c[5] == "same",
			a: entity.Name{Norm: engram.NormalizeName(c[1]), Type: typ(c[2])},
			b: entity.Name{Norm: engram.NormalizeName(c[3]), Type: typ(c[4])},
		})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestResolutionQuality measures resolution on the labelled pairs of
// testdata/pairs.tsv: precision (of the pairs it joins, how many are one
// entity) must be at least 0.95 at recall (of the pairs that are one
// entity, how many it joins) of at least 0.85, per language too loosely
// (0.9 and 0.75) so a language cannot hide behind the others.
func TestResolutionQuality(t *testing.T) {
	pairs := loadPairs(t)
	if len(pairs) < 100 {
		t.Fatalf("only %d pairs", len(pairs))
	}
	type counts struct{ tp, fp, fn, tn int }
	by := map[string]*counts{"all": {}}
	stages := map[entity.Stage]int{}
	for _, p := range pairs {
		got, st := entity.Same(p.a, p.b)
		if rev, _ := entity.Same(p.b, p.a); rev != got {
			t.Errorf("pairs.tsv:%d: Same(%q, %q) = %v but reversed %v", p.line, p.raw[0], p.raw[1], got, rev)
		}
		if by[p.lang] == nil {
			by[p.lang] = &counts{}
		}
		for _, c := range []*counts{by["all"], by[p.lang]} {
			switch {
			case got && p.same:
				c.tp++
			case got && !p.same:
				c.fp++
			case !got && p.same:
				c.fn++
			default:
				c.tn++
			}
		}
		if got {
			stages[st]++
		}
		if got != p.same {
			t.Logf("pairs.tsv:%d (%s): %q ~ %q: joined=%v (stage %q), labelled same=%v", p.line, p.lang, p.raw[0], p.raw[1], got, st, p.same)
		}
	}
	for lang, c := range by {
		precision := float64(c.tp) / float64(max(1, c.tp+c.fp))
		recall := float64(c.tp) / float64(max(1, c.tp+c.fn))
		t.Logf("%s: %d pairs, precision %.3f, recall %.3f (tp %d fp %d fn %d tn %d)", lang, c.tp+c.fp+c.fn+c.tn, precision, recall, c.tp, c.fp, c.fn, c.tn)
		minP, minR := 0.95, 0.85
		if lang != "all" {
			minP, minR = 0.9, 0.75
		}
		if precision < minP || recall < minR {
			t.Errorf("%s: precision %.3f (want >= %.2f), recall %.3f (want >= %.2f)", lang, precision, minP, recall, minR)
		}
	}
	t.Logf("joined by stage: %v", stages)
}

// TestResolvePrefersExact: an exact name beats a fuzzy match, and among
// fuzzy matches the entity named most often wins.
func TestResolvePrefersExact(t *testing.T) {
	ent := func(name, typ string, mentions int) engram.Entity {
		return engram.Entity{ID: engram.NewID(), Name: name, Norm: engram.NormalizeName(name), Type: typ, Mentions: mentions}
	}
	annaS, annaM, anna := ent("Anna Schmidt", engram.EntityPerson, 3), ent("Anna Müller", engram.EntityPerson, 9), ent("Anna", engram.EntityPerson, 1)
	got, st := entity.Resolve(entity.Candidate{Name: "ANNA", Type: engram.EntityPerson}, []engram.Entity{annaS, annaM, anna})
	if got == nil || got.ID != anna.ID || st != entity.StageExact {
		t.Errorf("Resolve(ANNA) = %v %q, want the exact Anna", got, st)
	}
	got, st = entity.Resolve(entity.Candidate{Name: "Anna"}, []engram.Entity{annaS, annaM})
	if got == nil || got.ID != annaM.ID || st != entity.StagePartial {
		t.Errorf("Resolve(Anna) = %v %q, want Anna Müller, named most", got, st)
	}
	if got, _ := entity.Resolve(entity.Candidate{Name: "Paris", Type: engram.EntityPlace}, []engram.Entity{ent("Paris Hilton", engram.EntityPerson, 5)}); got != nil {
		t.Errorf("the place Paris resolved to the person %s", got.Name)
	}
}
