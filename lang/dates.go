package lang

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Unit is the granularity of the period a temporal expression names.
type Unit string

// Units of Mention.
const (
	Day     Unit = "day"
	Weekend Unit = "weekend"
	Week    Unit = "week"
	Month   Unit = "month"
	Season  Unit = "season"
	Year    Unit = "year"
	// Span is a run of days that ends on the reference day ("the past two
	// weeks").
	Span Unit = "span"
)

// Mention is a temporal expression found in a text and the absolute period
// [From, To) it names, in the reference time's location.
type Mention struct {
	Text       string // as written, e.g. "last Saturday"
	Start, End int    // byte offsets of Text in the text
	From, To   time.Time
	Unit       Unit
	// Relative is true when the period was computed from the reference
	// time ("yesterday"), false when the text named it ("7 May 2023").
	Relative bool
	// Every is set on a recurring expression ("every Friday", "每周五"),
	// to what recurs in English: a weekday ("Friday") or a unit ("day",
	// "week", "month"). Such a mention names no one period: From and To
	// are zero.
	Every string
}

// Recurring reports whether m names a time that recurs.
func (m Mention) Recurring() bool { return m.Every != "" }

// Label renders the period for people and for the text index: "7 May
// 2023", "the week of 1 May 2023", "the weekend of 6 May 2023", "April
// 2023", "summer 2022", "2022".
func (m Mention) Label() string {
	if m.Every != "" {
		return "every " + m.Every
	}
	switch m.Unit {
	case Day:
		return m.From.Format("2 January 2006")
	case Weekend:
		return "the weekend of " + m.From.Format("2 January 2006")
	case Week:
		return "the week of " + m.From.Format("2 January 2006")
	case Month:
		return m.From.Format("January 2006")
	case Season:
		return seasonName(m.From) + " " + strconv.Itoa(seasonYear(m.From))
	case Year:
		return strconv.Itoa(m.From.Year())
	case Span:
		return m.From.Format("2 January 2006") + " to " + m.To.AddDate(0, 0, -1).Format("2 January 2006")
	}
	return ""
}

var numberWords = map[string]int{
	"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
	"seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
	"a couple of": 2, "couple of": 2, "a couple": 2, "a few": 3, "few": 3, "several": 3,
}

var weekdays = map[string]time.Weekday{
	"sunday": time.Sunday, "monday": time.Monday, "tuesday": time.Tuesday, "wednesday": time.Wednesday,
	"thursday": time.Thursday, "friday": time.Friday, "saturday": time.Saturday,
}

var months = map[string]time.Month{
	"january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7,
	"august": 8, "september": 9, "october": 10, "november": 11, "december": 12,
	"jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9,
	"oct": 10, "nov": 11, "dec": 12,
}

const (
	reNum     = `(\d{1,3}|a couple of|couple of|a couple|a few|few|several|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)`
	reUnit    = `(day|week|weekend|month|year)s?`
	reWeekday = `(monday|tuesday|wednesday|thursday|friday|saturday|sunday)`
	reMonth   = `(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?`
	reSeason  = `(spring|summer|fall|autumn|winter)`
	reOrd     = `(\d{1,2})(?:st|nd|rd|th)?`
)

// rule is one family of temporal expressions: a pattern and how a match
// becomes a period. tt is the tense of the sentence around the match (see
// tenseMarkers), for expressions that do not say which way they point
// ("on Friday").
type rule struct {
	re      *regexp.Regexp
	resolve func(g []string, ref time.Time, tt tense) (from time.Time, unit Unit, ok bool)
	// relative is false for expressions that name their period outright.
	relative bool
	// span, when set, resolves the match to a period of its own length
	// instead of resolve's single unit.
	span func(g []string, ref time.Time) (from, to time.Time, ok bool)
	// after, when set, rejects a match whose preceding text it matches.
	after *regexp.Regexp
	// bound makes a match count only between non-letters: the patterns of
	// languages whose words start or end with letters outside ASCII, which
	// regexp's \b does not see as word characters.
	bound bool
	// every, when set, makes the match a recurring mention (see
	// Mention.Every) of what it returns; "" drops the match.
	every func(g []string) string
}

func mustRule(pattern string, relative bool, f func(g []string, ref time.Time, tt tense) (time.Time, Unit, bool)) rule {
	return rule{re: regexp.MustCompile(`(?i)\b` + pattern + `\b`), resolve: f, relative: relative}
}

// notAfter makes r reject a match that follows text matching re.
func notAfter(re *regexp.Regexp, r rule) rule {
	r.after = re
	return r
}

// indefinite ends the text before a weekday that names no particular day:
// "on a Sunday", "every Monday", "any Friday".
var indefinite = regexp.MustCompile(`(?i)\b(a|an|any|every|each|one|some)\s+$`)

// indefiniteOrName is indefinite, or a capitalised word inside a sentence
// right before the weekday, whose name it then ends: "Easter Sunday",
// "Black Friday".
var indefiniteOrName = regexp.MustCompile(`(?i:\b(?:a|an|any|every|each|one|some)\s+$)|[\p{Ll}\d,;:]\s+\p{Lu}[\p{L}'’]*\s+$`)

// isoDate is "2023-05-07", which every language writes.
var isoDate = mustRule(`(\d{4})-(\d{2})-(\d{2})`, false, func(g []string, _ time.Time, _ tense) (time.Time, Unit, bool) {
	y, _ := strconv.Atoi(g[1])
	mo, _ := strconv.Atoi(g[2])
	d, _ := strconv.Atoi(g[3])
	if mo < 1 || mo > 12 || d < 1 || d > 31 || !plausibleYear(y) {
		return time.Time{}, "", false
	}
	t := time.Date(y, time.Month(mo), d, 0, 0, 0, 0, time.UTC)
	return t, Day, t.Day() == d
})

// The order matters only for readability: overlapping matches are settled
// by position and length (see Resolve).
var rules = []rule{
	mustRule(`the day before yesterday`, true, func(_ []string, ref time.Time, _ tense) (time.Time, Unit, bool) {
		return day(ref).AddDate(0, 0, -2), Day, true
	}),
	mustRule(`the day after tomorrow`, true, func(_ []string, ref time.Time, _ tense) (time.Time, Unit, bool) {
		return day(ref).AddDate(0, 0, 2), Day, true
	}),
	mustRule(`(yesterday|last night)`, true, func(_ []string, ref time.Time, _ tense) (time.Time, Unit, bool) {
		return day(ref).AddDate(0, 0, -1), Day, true
	}),
	mustRule(`(today|tonight|this (?:morning|afternoon|evening))`, true, func(_ []string, ref time.Time, _ tense) (time.Time, Unit, bool) {
		return day(ref), Day, true
	}),
	mustRule(`tomorrow`, true, func(_ []string, ref time.Time, _ tense) (time.Time, Unit, bool) {
		return day(ref).AddDate(0, 0, 1), Day, true
	}),
	// "in a week ago" is a slip for "a week ago", not "in a week".
	mustRule(`(?:in )?`+reNum+` `+reUnit+` (?:ago|back)`, true, func(g []string, ref time.Time, _ tense) (time.Time, Unit, bool) {
		return shift(ref, g[1], g[2], -1)
	}),
	mustRule(`(?:in|within) `+reNum+` `+reUnit, true, func(g []string, ref time.Time, _ tense) (time.Time, Unit, bool) {
		return shift(ref, g[1], g[2], 1)
	}),
	mustRule(reNum+` `+reUnit+` (?:from now|later)`, true, func(g []string, ref time.Time, _ tense) (time.Time, Unit, bool) {
		return shift(ref, g[1], g[2], 1)
	}),
	mustRule(`(?:(?:earlier|later) )?(last|past|previous|this|next|coming) (week|weekend|month|year)`, true, func(g []string, ref time.Time, _ tense) (time.Time, Unit, bool) {
		n := map[string]int{"last": -1, "past": -1, "previous": -1, "this": 0, "next": 1, "coming": 1}[strings.ToLower(g[1])]
		return period(ref, strings.ToLower(g[2]), n)
	}),
	mustRule(`(last|this|next|coming|past) `+reWeekday, true, func(g []string, ref time.Time, tt tense) (time.Time, Unit, bool) {
		wd := weekdays[strings.ToLower(g[2])]
		dir := map[string]int{"last": -1, "past": -1, "this": 0, "next": 1, "coming": 1}[strings.ToLower(g[1])]
		return weekdayDir(ref, wd, dir, tt)
	}),
	notAfter(indefinite, mustRule(`on `+reWeekday+`(?: (?:morning|afternoon|evening|night))?`, true, func(g []string, ref time.Time, tt tense) (time.Time, Unit, bool) {
		return bareWeekday(ref, weekdays[strings.ToLower(g[1])], tt)
	})),
	notAfter(indefiniteOrName, mustRule(reWeekday+`(?: (?:morning|afternoon|evening|night))?`, true, func(g []string, ref time.Time, tt tense) (time.Time, Unit, bool) {
		return bareWeekday(ref, weekdays[strings.ToLower(g[1])], tt)
	})),
	mustRule(`(last|this|next|coming|past) `+reSeason, true, func(g []string, ref time.Time, _ tense) (time.Time, Unit, bool) {
		n := map[string]int{"last": -1, "past": -1, "this": 0, "next": 1, "coming": 1}[strings.ToLower(g[1])]
		return season(ref, strings.ToLower(g[2]), n), Season, true
	}),
	mustRule(`(?:the )?`+reSeason+`,? (?:of )?((?:19|20)\d{2})`, false, func(g []string, ref time.Time, _ tense) (time.Time, Unit, bool) {
		y, _ := strconv.Atoi(g[2])
		name := strings.ToLower(g[1])
		return time.Date(y, seasonStart[name], 1, 0, 0, 0, 0, time.UTC), Season, true
	}),
	// "in the past two weeks": the days from that long ago to today.
	{re: regexp.MustCompile(`(?i)\b(?:(?:in|over|during|within|for) )?the (?:past|last|previous) ` + reNum + ` ` + reUnit + `\b`), relative: true,
		span: func(g []string, ref time.Time) (time.Time, time.Time, bool) {
			from, _, ok := shift(ref, g[1], g[2], -1)
			if !ok || strings.EqualFold(g[1], "a") || strings.EqualFold(g[1], "an") {
				return time.Time{}, time.Time{}, false // "the past a week" is not English
			}
			n, _ := count(g[1])
			switch strings.ToLower(g[2]) {
			case "day":
				from = day(ref).AddDate(0, 0, -n)
			case "week", "weekend":
				from = day(ref).AddDate(0, 0, -7*n)
			case "month":
				from = day(ref).AddDate(0, -n, 0)
			case "year":
				from = day(ref).AddDate(-n, 0, 0)
			}
			return from, day(ref).AddDate(0, 0, 1), true
		}},
	// "for two years (now)": the period began that long ago.
	mustRule(`(?:for|over) (?:the (?:past|last) )?`+reNum+` `+reUnit+`(?: now)?`, true, func(g []string, ref time.Time, _ tense) (time.Time, Unit, bool) {
		return shift(ref, g[1], g[2], -1)
	}),
	// Absolute dates: "7 May 2023", "7th of May, 2023", "May 7, 2023",
	// "May 7th", "May 2023", "2023-05-07", "in May", "in 2022".
	mustRule(reOrd+` (?:of )?`+reMonth+`,? (\d{4})`, false, func(g []string, _ time.Time, _ tense) (time.Time, Unit, bool) {
		return date(g[3], g[2], g[1])
	}),
	mustRule(reMonth+` `+reOrd+`(?:,? (\d{4}))?`, false, func(g []string, ref time.Time, tt tense) (time.Time, Unit, bool) {
		if g[3] == "" {
			t, u, ok := date(strconv.Itoa(ref.Year()), g[1], g[2])
			return nearestYear(t, ref, tt == tenseFuture, 0), u, ok
		}
		return date(g[3], g[1], g[2])
	}),
	mustRule(reOrd+` (?:of )?`+reMonth, false, func(g []string, ref time.Time, tt tense) (time.Time, Unit, bool) {
		t, u, ok := date(strconv.Itoa(ref.Year()), g[2], g[1])
		return nearestYear(t, ref, tt == tenseFuture, 0), u, ok
	}),
	mustRule(reMonth+`,? (?:of )?(\d{4})`, false, func(g []string, _ time.Time, _ tense) (time.Time, Unit, bool) {
		y, _ := strconv.Atoi(g[2])
		return time.Date(y, months[strings.ToLower(g[1])], 1, 0, 0, 0, 0, time.UTC), Month, plausibleYear(y)
	}),
	mustRule(`(?:in|since|during|until|by|from|early|late|mid|of) `+reMonth+`(?:,? (?:of )?(\d{4}))?`, false, func(g []string, ref time.Time, tt tense) (time.Time, Unit, bool) {
		mo := strings.ToLower(g[1])
		if g[2] != "" {
			y, _ := strconv.Atoi(g[2])
			return time.Date(y, months[mo], 1, 0, 0, 0, 0, time.UTC), Month, plausibleYear(y)
		}
		if mo == "may" || mo == "mar" {
			// "in may" is too often the verb; take only the capitalised
			// month.
			if i := strings.LastIndex(strings.ToLower(g[0]), mo); i < 0 || g[0][i] != strings.ToUpper(mo)[0] {
				return time.Time{}, "", false
			}
		}
		t := time.Date(ref.Year(), months[mo], 1, 0, 0, 0, 0, ref.Location())
		return nearestYear(t, ref, tt == tenseFuture, 1), Month, true
	}),
	isoDate,
	mustRule(`(?:in|since|during|until|by|from|early|late|mid|of|summer|winter|spring|fall|autumn) ((?:19|20)\d{2})`, false, func(g []string, _ time.Time, _ tense) (time.Time, Unit, bool) {
		y, _ := strconv.Atoi(g[1])
		return time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC), Year, true
	}),
}

// ruleset is the temporal expressions of one language.
type ruleset struct {
	rules []rule
	tense *tenseMarkers
	// recurring are the expressions of times that come back.
	recurring []rule
}

var englishRules = ruleset{rules: rules, tense: enTense, recurring: enRecurring}

// rulesets holds the languages with rules of their own; the others get
// English's.
var rulesets = map[string]*ruleset{}

// Resolve finds the temporal expressions of English text and the periods
// they name, resolving relative ones against ref (the time the text was
// said or written). Overlapping expressions keep the one that starts first,
// then the longest. Mentions are in text order. Text in other languages
// yields what English patterns it happens to contain, usually nothing (see
// ResolveLang). A weekday whose direction neither the text nor the tense
// of its sentence gives is left out, and so is a recurring expression
// ("every Friday"; see ScanLang).
func Resolve(text string, ref time.Time) []Mention {
	dated, _ := englishRules.scan(text, ref)
	return dated
}

// ResolveLang is Resolve for text in language tag: German, Spanish, French,
// Chinese and Japanese have rules of their own ("letzte Woche", "hace dos
// semanas", "il y a trois jours", "上周六", "先週"), every other tag, ""
// among them, gets English's.
func ResolveLang(tag, text string, ref time.Time) []Mention {
	dated, _ := rulesetOf(tag).scan(text, ref)
	return dated
}

// ScanLang is ResolveLang that also returns the recurring expressions of
// text ("every Friday", "jeden Samstag", "每周五"; see Mention.Every), in
// text order. A weekday inside one is never resolved to a date.
func ScanLang(tag, text string, ref time.Time) (dated, recurring []Mention) {
	return rulesetOf(tag).scan(text, ref)
}

// rulesetOf returns the rules of language tag; another tag without rules
// of its own ("" for text too short to tell among them) gets English's,
// with the recurring expressions of every language, which do not read as
// anything else in another ("jeden Freitag", "todos los viernes").
func rulesetOf(tag string) *ruleset {
	if rs := rulesets[tag]; rs != nil {
		return rs
	}
	if tag == English {
		return &englishRules
	}
	return &fallbackRules
}

var fallbackRules = ruleset{rules: rules, tense: enTense,
	recurring: slices.Concat(enRecurring, deRecurring, esRecurring, frRecurring, cjkRecurring)}

func (rs *ruleset) scan(text string, ref time.Time) (dated, recurring []Mention) {
	if text == "" {
		return nil, nil
	}
	var found []Mention
	for _, r := range rs.recurring {
		found = append(found, rs.matches(r, text, ref)...)
	}
	for _, r := range rs.rules {
		found = append(found, rs.matches(r, text, ref)...)
	}
	sort.SliceStable(found, func(i, j int) bool {
		if found[i].Start != found[j].Start {
			return found[i].Start < found[j].Start
		}
		return found[i].End > found[j].End
	})
	end := 0
	for _, m := range found {
		if m.Start < end {
			continue
		}
		end = m.End
		if m.Every != "" {
			recurring = append(recurring, m)
		} else {
			dated = append(dated, m)
		}
	}
	return dated, recurring
}

// matches returns the mentions of rule r in text.
func (rs *ruleset) matches(r rule, text string, ref time.Time) []Mention {
	var out []Mention
	for _, loc := range r.re.FindAllStringSubmatchIndex(text, -1) {
		if r.bound && !bounded(text, loc[0], loc[1]) {
			continue
		}
		g := make([]string, len(loc)/2)
		for i := range g {
			if loc[2*i] >= 0 {
				g[i] = text[loc[2*i]:loc[2*i+1]]
			}
		}
		if r.after != nil && r.after.MatchString(text[:loc[0]]) {
			continue
		}
		m := Mention{Text: g[0], Start: loc[0], End: loc[1], Relative: r.relative}
		ok := false
		switch {
		case r.every != nil:
			m.Every = r.every(g)
			ok = m.Every != ""
		case r.span != nil:
			m.From, m.To, ok = r.span(g, ref)
			m.Unit = Span
		default:
			m.From, m.Unit, ok = r.resolve(g, ref, rs.tense.tenseAt(text, loc[0], loc[1]))
			m.To = end(m.From, m.Unit)
		}
		if ok {
			out = append(out, m)
		}
	}
	return out
}

// bounded reports whether text[start:end] neither follows nor precedes a
// letter or digit.
func bounded(text string, start, end int) bool {
	if start > 0 {
		r, _ := utf8.DecodeLastRuneInString(text[:start])
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return false
		}
	}
	if end < len(text) {
		r, _ := utf8.DecodeRuneInString(text[end:])
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

// Annotate returns text with the label of every relative mention written
// after it in brackets ("yesterday [7 May 2023]"), so the absolute date is
// searchable next to the words that implied it.
func Annotate(text string, ms []Mention) string {
	var b strings.Builder
	last := 0
	for _, m := range ms {
		if !m.Relative || m.Every != "" {
			continue
		}
		b.WriteString(text[last:m.End])
		b.WriteString(" [" + m.Label() + "]")
		last = m.End
	}
	if last == 0 {
		return text
	}
	b.WriteString(text[last:])
	return b.String()
}

func day(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, t.Location())
}

// weekStart returns the Monday of t's week.
func weekStart(t time.Time) time.Time {
	d := day(t)
	return d.AddDate(0, 0, -((int(d.Weekday()) + 6) % 7))
}

// lastWeekday returns the latest day before t's day that falls on wd.
func lastWeekday(t time.Time, wd time.Weekday) time.Time {
	d := day(t)
	back := (int(d.Weekday()) - int(wd) + 7) % 7
	if back == 0 {
		back = 7
	}
	return d.AddDate(0, 0, -back)
}

// nextWeekday returns the earliest day after t's day that falls on wd.
func nextWeekday(t time.Time, wd time.Weekday) time.Time {
	d := day(t)
	ahead := (int(wd) - int(d.Weekday()) + 7) % 7
	if ahead == 0 {
		ahead = 7
	}
	return d.AddDate(0, 0, ahead)
}

func count(s string) (int, bool) {
	s = strings.ToLower(s)
	if n, ok := numberWords[s]; ok {
		return n, true
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n > 0 && n < 1000
}

// shift resolves "N units ago" (sign -1) and "in N units" (sign 1).
func shift(ref time.Time, num, unit string, sign int) (time.Time, Unit, bool) {
	n, ok := count(num)
	if !ok {
		return time.Time{}, "", false
	}
	return shiftN(ref, n*sign, strings.ToLower(unit))
}

// shiftN resolves n units (English names: "day", "week", "weekend",
// "month", "year") from ref, back when n is negative.
func shiftN(ref time.Time, n int, unit string) (time.Time, Unit, bool) {
	switch unit {
	case "day":
		return day(ref).AddDate(0, 0, n), Day, true
	case "week":
		return weekStart(day(ref).AddDate(0, 0, 7*n)), Week, true
	case "weekend":
		return weekendOf(day(ref).AddDate(0, 0, 7*n)), Weekend, true
	case "month":
		return monthStart(ref).AddDate(0, n, 0), Month, true
	case "year":
		return time.Date(ref.Year()+n, 1, 1, 0, 0, 0, 0, ref.Location()), Year, true
	}
	return time.Time{}, "", false
}

// period resolves "last/this/next week|weekend|month|year" (n = -1, 0, 1).
func period(ref time.Time, unit string, n int) (time.Time, Unit, bool) {
	switch unit {
	case "week":
		return weekStart(ref).AddDate(0, 0, 7*n), Week, true
	case "weekend":
		// "last weekend" said on a Wednesday is the one just gone; "this
		// weekend" the one of the current week.
		w := weekendOf(ref)
		if n < 0 && !w.Before(day(ref)) {
			w = w.AddDate(0, 0, -7)
		}
		if n > 0 {
			w = w.AddDate(0, 0, 7)
		}
		return w, Weekend, true
	case "month":
		return monthStart(ref).AddDate(0, n, 0), Month, true
	case "year":
		return time.Date(ref.Year()+n, 1, 1, 0, 0, 0, 0, ref.Location()), Year, true
	}
	return time.Time{}, "", false
}

// weekendOf returns the Saturday of t's week (Monday to Sunday).
func weekendOf(t time.Time) time.Time { return weekStart(t).AddDate(0, 0, 5) }

func monthStart(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, t.Location())
}

// Seasons are meteorological (northern hemisphere): spring starts in
// March, summer in June, autumn in September, winter in December.
var seasonStart = map[string]time.Month{"spring": 3, "summer": 6, "fall": 9, "autumn": 9, "winter": 12}

func season(ref time.Time, name string, n int) time.Time {
	m := seasonStart[name]
	at := func(y int) time.Time { return time.Date(y, m, 1, 0, 0, 0, 0, ref.Location()) }
	y := ref.Year()
	switch {
	case n < 0: // the latest one that is over
		for end(at(y), Season).After(ref) {
			y--
		}
	case n > 0: // the first one still to begin
		for y = ref.Year() - 1; !at(y).After(ref); y++ {
		}
	default:
		if name == "winter" && ref.Month() < 3 {
			y-- // January's winter began last December
		}
	}
	return at(y)
}

func seasonName(t time.Time) string {
	switch t.Month() {
	case 3, 4, 5:
		return "spring"
	case 6, 7, 8:
		return "summer"
	case 9, 10, 11:
		return "autumn"
	}
	return "winter"
}

func seasonYear(t time.Time) int { return t.Year() }

func end(from time.Time, u Unit) time.Time {
	switch u {
	case Day:
		return from.AddDate(0, 0, 1)
	case Weekend:
		return from.AddDate(0, 0, 2)
	case Week:
		return from.AddDate(0, 0, 7)
	case Month:
		return from.AddDate(0, 1, 0)
	case Season:
		return from.AddDate(0, 3, 0)
	case Year:
		return from.AddDate(1, 0, 0)
	}
	return from
}

func plausibleYear(y int) bool { return y >= 1900 && y <= 2200 }

func date(year, month, dayOfMonth string) (time.Time, Unit, bool) {
	y, err1 := strconv.Atoi(year)
	d, err2 := strconv.Atoi(dayOfMonth)
	mo, ok := months[strings.ToLower(strings.TrimSuffix(month, "."))]
	if err1 != nil || err2 != nil || !ok || d < 1 || d > 31 || !plausibleYear(y) {
		return time.Time{}, "", false
	}
	t := time.Date(y, mo, d, 0, 0, 0, 0, time.UTC)
	return t, Day, t.Day() == d
}

// nearestYear moves a date given without a year to the year that puts it
// on the side of ref the sentence speaks of: a past date not after ref, a
// future one not before. slackMonths lets a month still running count as
// past.
func nearestYear(t, ref time.Time, future bool, slackMonths int) time.Time {
	if t.IsZero() {
		return t
	}
	if future {
		if t.AddDate(0, slackMonths, 0).Before(day(ref)) {
			return t.AddDate(1, 0, 0)
		}
		return t
	}
	if t.After(ref) {
		return t.AddDate(-1, 0, 0)
	}
	return t
}

// String describes a mention for test failures.
func (m Mention) String() string {
	return fmt.Sprintf("%q=%s[%s..%s)", m.Text, m.Unit, m.From.Format("2006-01-02"), m.To.Format("2006-01-02"))
}
