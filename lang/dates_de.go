package lang

import (
	"regexp"
	"time"
)

var (
	deNumbers = map[string]int{"ein": 1, "eine": 1, "einem": 1, "einer": 1, "einen": 1, "zwei": 2, "drei": 3,
		"vier": 4, "fünf": 5, "sechs": 6, "sieben": 7, "acht": 8, "neun": 9, "zehn": 10, "elf": 11,
		"zwölf": 12, "ein paar": 2, "paar": 2, "einigen": 3, "einige": 3, "mehreren": 3, "mehrere": 3}
	deUnits = map[string]string{"tag": "day", "tage": "day", "tagen": "day", "woche": "week", "wochen": "week",
		"wochenende": "weekend", "wochenenden": "weekend", "monat": "month", "monate": "month", "monaten": "month",
		"jahr": "year", "jahre": "year", "jahren": "year"}
	// deDirs are the adjectives that place a period relative to now, in
	// the endings German gives them.
	deDirs     = map[string]int{}
	deWeekdays = map[string]time.Weekday{"montag": time.Monday, "dienstag": time.Tuesday, "mittwoch": time.Wednesday,
		"donnerstag": time.Thursday, "freitag": time.Friday, "samstag": time.Saturday, "sonnabend": time.Saturday,
		"sonntag": time.Sunday}
	deMonths = map[string]time.Month{"januar": 1, "jänner": 1, "februar": 2, "märz": 3, "maerz": 3, "april": 4,
		"mai": 5, "juni": 6, "juli": 7, "august": 8, "september": 9, "oktober": 10, "november": 11, "dezember": 12,
		"jan.": 1, "feb.": 2, "apr.": 4, "aug.": 8, "sept.": 9, "okt.": 10, "nov.": 11, "dez.": 12}
)

func init() {
	for stem, n := range map[string]int{"letzt": -1, "vergangen": -1, "vorig": -1, "dies": 0,
		"nächst": 1, "naechst": 1, "kommend": 1} {
		for _, e := range []string{"e", "en", "er", "em", "es"} {
			deDirs[stem+e] = n
		}
	}
	rulesets[German] = &ruleset{rules: deRules(), tense: deTense, recurring: deRecurring}
}

func deRules() []rule {
	num, unit := numAlt(deNumbers), alt(deUnits)
	wd, mo := alt(deWeekdays), alt(deMonths)
	return []rule{
		lrule(`vorgestern`, true, daysFrom(-2)),
		lrule(`übermorgen`, true, daysFrom(2)),
		lrule(`gestern(?: (?:früh|morgen|abend|nachmittag|nacht))?`, true, daysFrom(-1)),
		lrule(`heute(?: (?:früh|morgen|abend|nachmittag|nacht))?`, true, daysFrom(0)),
		// "morgen" is tomorrow; "Morgen", "am Morgen", "guten Morgen" the
		// morning.
		notAfter(regexp.MustCompile(`(?i)\b(guten|am|jeden|den|einen|heute|gestern)\s+$`),
			rule{re: regexp.MustCompile(`morgen`), resolve: daysFrom(1), relative: true, bound: true}),
		lrule(`(?:vor|seit) `+num+` `+unit, true, shifted(deNumbers, deUnits, 1, 2, -1)),
		lrule(`in `+num+` `+unit, true, shifted(deNumbers, deUnits, 1, 2, 1)),
		lrule(`(?:(?:im|am|in der|in diesem|in dieser) )?`+alt(deDirs)+` (woche|wochenende|monat|jahr)`, true, periodic(deDirs, deUnits, 1, 2)),
		notAfter(regexp.MustCompile(`(?i)(jeden|jede|an einem|einem|einen)\s+$`),
			lrule(`(?:am |`+alt(deDirs)+` )?`+wd+`(?: ?(?:früh|morgen|vormittag|mittag|nachmittag|abend|nacht))?`, true, weekdayOf(deDirs, deWeekdays, 1, 2))),
		// "am 3. Mai 2023", "3. Mai", "3.5.2023"
		lrule(`(?:(?:am|den|vom|bis zum) )?(\d{1,2})\. ?`+mo+`(?: (\d{4}))?`, false, dateOf(deMonths, 1, 2, 3)),
		lrule(`(\d{1,2})\.(\d{1,2})\.(\d{4})`, false, func(g []string, ref time.Time, tt tense) (time.Time, Unit, bool) {
			return dateOf(numericMonths, 1, 2, 3)(g, ref, tt)
		}),
		lrule(`(?:(?:im|seit|bis|ab|anfang|ende|mitte|von|vom) )?`+mo+` (\d{4})`, false, monthOf(deMonths, 1, 2)),
		lrule(`(?:im|seit|bis|ab|anfang|ende|mitte|von|vom) `+mo, false, monthOf(deMonths, 1, 0)),
		lrule(`(?:im jahr(?:e)?|seit|bis|ab|in|um|anfang|ende|mitte) ((?:19|20)\d{2})`, false, yearOf(1)),
		isoDate,
	}
}

// numericMonths reads a month written as a number.
var numericMonths = map[string]time.Month{"1": 1, "2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "7": 7, "8": 8,
	"9": 9, "10": 10, "11": 11, "12": 12, "01": 1, "02": 2, "03": 3, "04": 4, "05": 5, "06": 6, "07": 7,
	"08": 8, "09": 9}
