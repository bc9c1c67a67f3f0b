package lang

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// This file holds the helpers the rule sets of languages other than English
// share; each language's rules are in a file of its own.

type resolver = func(g []string, ref time.Time, tt tense) (time.Time, Unit, bool)

// lrule builds a case-insensitive rule whose match must stand between
// non-letters (see rule.bound).
func lrule(pattern string, relative bool, f resolver) rule {
	return rule{re: regexp.MustCompile(`(?i)` + pattern), resolve: f, relative: relative, bound: true}
}

// crule builds a rule for a script written without spaces: no boundaries.
func crule(pattern string, relative bool, f resolver) rule {
	return rule{re: regexp.MustCompile(pattern), resolve: f, relative: relative}
}

// alt returns the keys of m as a regexp alternation, longest first so that
// "wochenende" is tried before "woche".
func alt[V any](m map[string]V) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, regexp.QuoteMeta(k))
	}
	// Longest first, then alphabetical, so the pattern is stable.
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && (len(keys[j]) > len(keys[j-1]) || len(keys[j]) == len(keys[j-1]) && keys[j] < keys[j-1]); j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return "(" + strings.Join(keys, "|") + ")"
}

// numAlt is the alternation of digits and a language's number words.
func numAlt(words map[string]int) string { return `(\d{1,3}|` + alt(words)[1:] }

// daysFrom resolves to the day n days from the reference day.
func daysFrom(n int) resolver {
	return func(_ []string, ref time.Time, _ tense) (time.Time, Unit, bool) {
		return day(ref).AddDate(0, 0, n), Day, true
	}
}

// number reads a count: digits, or a word of words.
func number(words map[string]int, s string) (int, bool) {
	s = strings.ToLower(s)
	if n, ok := words[s]; ok {
		return n, true
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n > 0 && n < 1000
}

// shifted resolves "N units ago" (sign -1) and "in N units" (sign 1) from
// the count in g[ni] and the unit word in g[ui].
func shifted(nums map[string]int, units map[string]string, ni, ui, sign int) resolver {
	return func(g []string, ref time.Time, _ tense) (time.Time, Unit, bool) {
		n, ok := number(nums, g[ni])
		if !ok {
			return time.Time{}, "", false
		}
		return shiftN(ref, sign*n, units[strings.ToLower(g[ui])])
	}
}

// periodic resolves "last/this/next week|month|year" from the direction
// word in g[di] and the unit word in g[ui].
func periodic(dirs map[string]int, units map[string]string, di, ui int) resolver {
	return func(g []string, ref time.Time, _ tense) (time.Time, Unit, bool) {
		return period(ref, units[strings.ToLower(g[ui])], dirs[strings.ToLower(g[di])])
	}
}

// weekdayOf resolves a weekday (g[wi]) with an optional direction word
// (g[di]; di 0 for none; see weekdayDir); without one, by the tense of the
// sentence (see bareWeekday).
func weekdayOf(dirs map[string]int, wds map[string]time.Weekday, di, wi int) resolver {
	return func(g []string, ref time.Time, tt tense) (time.Time, Unit, bool) {
		wd, ok := wds[strings.ToLower(g[wi])]
		if !ok {
			return time.Time{}, "", false
		}
		if di > 0 && g[di] != "" {
			if dir, ok := dirs[strings.ToLower(g[di])]; ok {
				return weekdayDir(ref, wd, dir, tt)
			}
		}
		return bareWeekday(ref, wd, tt)
	}
}

// monthOf resolves a month (g[mi]) with an optional year (g[yi]; yi 0 for
// none). Without a year it is the nearest one on the side of the reference
// time the sentence speaks of.
func monthOf(ms map[string]time.Month, mi, yi int) resolver {
	return func(g []string, ref time.Time, tt tense) (time.Time, Unit, bool) {
		mo, ok := ms[strings.ToLower(strings.TrimSuffix(g[mi], "."))]
		if !ok {
			return time.Time{}, "", false
		}
		if yi > 0 && g[yi] != "" {
			y, _ := strconv.Atoi(g[yi])
			return time.Date(y, mo, 1, 0, 0, 0, 0, time.UTC), Month, plausibleYear(y)
		}
		t := time.Date(ref.Year(), mo, 1, 0, 0, 0, 0, ref.Location())
		return nearestYear(t, ref, tt == tenseFuture, 1), Month, true
	}
}

// dateOf resolves a day of the month (g[di]) in a month (g[mi]) and an
// optional year (g[yi]).
func dateOf(ms map[string]time.Month, di, mi, yi int) resolver {
	return func(g []string, ref time.Time, tt tense) (time.Time, Unit, bool) {
		mo, ok := ms[strings.ToLower(strings.TrimSuffix(g[mi], "."))]
		d, err := strconv.Atoi(strings.TrimSuffix(strings.ToLower(g[di]), "er"))
		if !ok || err != nil || d < 1 || d > 31 {
			return time.Time{}, "", false
		}
		y, noYear := ref.Year(), yi == 0 || g[yi] == ""
		if !noYear {
			y, _ = strconv.Atoi(g[yi])
			if !plausibleYear(y) {
				return time.Time{}, "", false
			}
		}
		t := time.Date(y, mo, d, 0, 0, 0, 0, time.UTC)
		if t.Day() != d {
			return time.Time{}, "", false
		}
		if noYear {
			t = nearestYear(t, ref, tt == tenseFuture, 0)
		}
		return t, Day, true
	}
}

// yearOf resolves the year in g[i].
func yearOf(i int) resolver {
	return func(g []string, _ time.Time, _ tense) (time.Time, Unit, bool) {
		y, _ := strconv.Atoi(g[i])
		return time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC), Year, plausibleYear(y)
	}
}

// yearsFrom resolves to the year n years from the reference year.
func yearsFrom(n int) resolver {
	return func(_ []string, ref time.Time, _ tense) (time.Time, Unit, bool) {
		return time.Date(ref.Year()+n, 1, 1, 0, 0, 0, 0, ref.Location()), Year, true
	}
}
