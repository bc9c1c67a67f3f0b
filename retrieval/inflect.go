package retrieval

import (
	"sort"
	"strings"
	"unicode"
)

// Inflections returns the English word forms a full-text index without
// stemming needs to be asked for besides w, so that "research" also finds
// "researching" and "painted" finds "paint": the stem found by stripping a
// regular suffix (-s, -es, -ies, -ed, -ied, -ing, a doubled consonant
// undone, a dropped e restored) and that stem's regular forms. w itself is
// not in the result. Words shorter than four letters, words with digits or
// non-Latin letters, and irregular forms get nothing: a wrong form costs
// an index lookup, never a wrong match of its own.
func Inflections(w string) []string {
	if len(w) < 4 {
		return nil
	}
	for _, r := range w {
		if r > unicode.MaxASCII || !unicode.IsLower(r) {
			return nil
		}
	}
	stems := map[string]bool{}
	addStem := func(s string) {
		if len(s) >= 3 {
			stems[s] = true
		}
	}
	addStem(w)
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		addStem(w[:len(w)-3] + "y")
	case strings.HasSuffix(w, "ses"), strings.HasSuffix(w, "xes"), strings.HasSuffix(w, "zes"),
		strings.HasSuffix(w, "ches"), strings.HasSuffix(w, "shes"):
		addStem(w[:len(w)-2])
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		addStem(w[:len(w)-1])
	}
	for _, suf := range []string{"ing", "ed"} {
		if !strings.HasSuffix(w, suf) || len(w) < len(suf)+3 {
			continue
		}
		b := w[:len(w)-len(suf)]
		if suf == "ed" && strings.HasSuffix(b, "i") {
			addStem(b[:len(b)-1] + "y") // studied -> study
			continue
		}
		addStem(b)
		addStem(b + "e") // baking -> bake
		if n := len(b); n >= 2 && b[n-1] == b[n-2] && !strings.ContainsRune("aeiouslz", rune(b[n-1])) {
			addStem(b[:n-1]) // planning -> plan
		}
	}
	out := map[string]bool{}
	for s := range stems {
		out[s] = true
		for _, f := range forms(s) {
			out[f] = true
		}
	}
	delete(out, w)
	res := make([]string, 0, len(out))
	for f := range out {
		res = append(res, f)
	}
	sort.Strings(res)
	return res
}

// forms returns the regular inflections of a stem.
func forms(s string) []string {
	n := len(s)
	last := s[n-1]
	vowel := func(c byte) bool { return strings.IndexByte("aeiou", c) >= 0 }
	var out []string
	switch {
	case last == 'y' && n > 1 && !vowel(s[n-2]):
		b := s[:n-1]
		out = append(out, b+"ies", b+"ied", s+"ing")
	case last == 'e':
		out = append(out, s+"s", s+"d", s[:n-1]+"ing")
	case strings.HasSuffix(s, "s") || strings.HasSuffix(s, "x") || strings.HasSuffix(s, "z") ||
		strings.HasSuffix(s, "ch") || strings.HasSuffix(s, "sh"):
		out = append(out, s+"es", s+"ed", s+"ing")
	default:
		out = append(out, s+"s", s+"ed", s+"ing")
		// A short word ending consonant-vowel-consonant doubles its last
		// letter: plan, planned, planning.
		if n <= 4 && n >= 3 && !vowel(last) && vowel(s[n-2]) && !vowel(s[n-3]) && !strings.ContainsRune("wxy", rune(last)) {
			d := s + string(last)
			out = append(out, d+"ed", d+"ing")
		}
	}
	return out
}
