package engram

import (
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// Namespace names are identities: one name must never display as another.
// Besides the control and bidirectional characters validName refuses,
// checkLookalikes refuses
//   - invisible characters: format characters (zero-width space and
//     joiners, the byte order mark, the soft hyphen, word joiners, tags),
//     variation selectors, fillers that draw nothing, and every space but
//     U+0020;
//   - compatibility forms that NFKC folds into other characters (fullwidth
//     "ａｌｉｃｅ", ligatures, superscripts), naming the plain spelling;
//   - letters of more than one script, except the combinations one
//     language writes together (Han with Hiragana and Katakana, with
//     Hangul, or with Bopomofo, each also with Latin), after Unicode's
//     "highly restrictive" profile (UTS #39): "аlice" with a Cyrillic "а"
//     is refused;
//   - a name in Cyrillic or Greek made only of letters that look like Latin
//     ones ("аlісе" all in Cyrillic), which reads as a Latin name.

// scriptsOf lists the scripts a name's letters may come from; Common and
// Inherited characters (digits, punctuation, combining marks) belong to any.
var scriptsOf = []struct {
	name  string
	table *unicode.RangeTable
}{
	{"Latin", unicode.Latin}, {"Cyrillic", unicode.Cyrillic}, {"Greek", unicode.Greek},
	{"Han", unicode.Han}, {"Hiragana", unicode.Hiragana}, {"Katakana", unicode.Katakana},
	{"Hangul", unicode.Hangul}, {"Bopomofo", unicode.Bopomofo}, {"Arabic", unicode.Arabic},
	{"Hebrew", unicode.Hebrew}, {"Armenian", unicode.Armenian}, {"Georgian", unicode.Georgian},
	{"Thai", unicode.Thai}, {"Devanagari", unicode.Devanagari}, {"Bengali", unicode.Bengali},
	{"Tamil", unicode.Tamil}, {"Ethiopic", unicode.Ethiopic}, {"Cherokee", unicode.Cherokee},
}

// allowedMixes are the sets of scripts a name may combine (UTS #39's highly
// restrictive level); a name of one script is always allowed.
var allowedMixes = []map[string]bool{
	{"Latin": true, "Han": true, "Hiragana": true, "Katakana": true},
	{"Latin": true, "Han": true, "Hangul": true},
	{"Latin": true, "Han": true, "Bopomofo": true},
}

// latinLookalikes are Cyrillic and Greek letters drawn like a Latin letter
// in common fonts.
var latinLookalikes = map[rune]bool{}

func init() {
	for _, r := range "аАвВеЕһНіІјЈкКмМоОрРсСтТуУхХѕЅԁԛԜԝӏӀёЁїЇ" + // Cyrillic
		"ΑΒΕΖΗΙΚΜΝΟΡΤΥΧαικνορτυχ" { // Greek
		latinLookalikes[r] = true
	}
}

// checkLookalikes returns an EINVALID error naming field when v holds an
// invisible character, a compatibility form, a mix of scripts, or is a
// Cyrillic or Greek name that reads as a Latin one.
func checkLookalikes(field, v string) error {
	for _, r := range v {
		if invisible(r) {
			return Errorf(EINVALID, "%s may not contain the invisible character U+%04X", field, r)
		}
	}
	if k := norm.NFKC.String(v); k != v {
		return Errorf(EINVALID, "%s %q holds compatibility characters (fullwidth letters, ligatures and the like); write it %q", field, v, k)
	}
	scripts := map[string]bool{}
	for _, r := range v {
		if s := scriptOf(r); s != "" {
			scripts[s] = true
		}
	}
	if len(scripts) > 1 && !mixAllowed(scripts) {
		return Errorf(EINVALID, "%s %q mixes letters of the scripts %s, which lets one name display as another", field, v, listScripts(scripts))
	}
	if (scripts["Cyrillic"] || scripts["Greek"]) && len(scripts) == 1 && allLookalikes(v) {
		return Errorf(EINVALID, "%s %q is written in Cyrillic or Greek letters that look like Latin ones, so it displays as a Latin name", field, v)
	}
	return nil
}

// invisible reports whether r draws nothing or draws as a plain space.
func invisible(r rune) bool {
	switch {
	case unicode.Is(unicode.Cf, r): // format: ZWSP, ZWJ, BOM, soft hyphen, word joiner, tags, ...
		return true
	case unicode.Is(unicode.Variation_Selector, r), r == 0x034f: // variation selectors, the combining grapheme joiner
		return true
	case r == 0x115f || r == 0x1160 || r == 0x3164 || r == 0xffa0 || r == 0x2800: // Hangul fillers, the blank braille pattern
		return true
	case r != ' ' && (unicode.Is(unicode.Zs, r) || r == 0x2028 || r == 0x2029):
		return true
	}
	return false
}

// scriptOf returns the script of a letter or digit r among scriptsOf, "Other"
// for one of another script, and "" for Common and Inherited characters.
func scriptOf(r rune) string {
	if r < 0x80 {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return "Latin"
		}
		return ""
	}
	for _, s := range scriptsOf {
		if unicode.Is(s.table, r) {
			return s.name
		}
	}
	if unicode.Is(unicode.Common, r) || unicode.Is(unicode.Inherited, r) {
		return ""
	}
	return "Other"
}

func mixAllowed(scripts map[string]bool) bool {
	for _, mix := range allowedMixes {
		ok := true
		for s := range scripts {
			ok = ok && mix[s]
		}
		if ok {
			return true
		}
	}
	return false
}

func listScripts(scripts map[string]bool) string {
	out := ""
	for _, s := range scriptsOf {
		if scripts[s.name] {
			if out != "" {
				out += " and "
			}
			out += s.name
		}
	}
	if scripts["Other"] {
		out += " and another"
	}
	return out
}

// allLookalikes reports whether every letter of v looks like a Latin one.
func allLookalikes(v string) bool {
	for _, r := range v {
		if unicode.IsLetter(r) && !latinLookalikes[r] {
			return false
		}
	}
	return true
}
