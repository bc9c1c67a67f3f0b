package lang

import (
	"regexp"
	"strings"
	"time"
)

// tense is which way a sentence points from the time it was said, as far
// as the words around a temporal expression tell: an expression that does
// not say it itself ("on Friday", "el viernes", "周五") takes its
// direction from them.
type tense int

const (
	// tenseNone: no verb or marker says; a bare weekday is then left as
	// said rather than guessed.
	tenseNone tense = iota
	// tensePast: a report of what happened ("I saw him on Monday").
	tensePast
	// tensePresent: a present-tense statement ("I have an appointment on
	// Thursday", "tengo una entrevista el viernes"), which about a single
	// day speaks of the next one.
	tensePresent
	// tenseFuture: a plan, an intention or a change of schedule ("will",
	// "going to", "moved to Thursday", "verschoben auf", "改到").
	tenseFuture
)

// ahead reports whether the sentence speaks of what is still to come.
func (t tense) ahead() bool { return t == tensePresent || t == tenseFuture }

// tenseMarkers are the words of one language that say which way a sentence
// points. future and past are strong: when a sentence has both, the one
// nearer the expression decides. present counts only when neither is
// there. A change of schedule (a verb of change in the sentence, with the
// expression right after a preposition of its target: "moved the
// appointment to Thursday", "auf Donnerstag verschoben", "cambiada al
// jueves", "reporté à jeudi", "改到周四") points ahead whatever the tense
// of the verb.
type tenseMarkers struct {
	future, past, present *regexp.Regexp
	// notPast removes matches of past that are no verbs here: an
	// adjective in "-ed" after a form of "be" ("I'm excited").
	notPast    *regexp.Regexp
	changeVerb *regexp.Regexp
	changeTo   *regexp.Regexp // matches the end of the text before the expression
}

// tenseAt reads the tense of the sentence that holds text[start:end].
func (tm *tenseMarkers) tenseAt(text string, start, end int) tense {
	if tm == nil {
		return tenseNone
	}
	s0 := strings.LastIndexAny(text[:start], ".!?\n。！？") + 1
	s1 := strings.IndexAny(text[end:], ".!?\n。！？")
	if s1 < 0 {
		s1 = len(text)
	} else {
		s1 += end
	}
	sentence := text[s0:s1]
	at, to := start-s0, end-s0
	if tm.changeVerb != nil && tm.changeTo.MatchString(sentence[:at]) && tm.changeVerb.MatchString(sentence) {
		return tenseFuture
	}
	fut := nearest(tm.future, nil, sentence, at, to)
	past := nearest(tm.past, tm.notPast, sentence, at, to)
	switch {
	case fut >= 0 && (past < 0 || fut <= past):
		return tenseFuture
	case past >= 0:
		return tensePast
	case tm.present != nil && tm.present.MatchString(sentence):
		return tensePresent
	}
	return tenseNone
}

// nearest returns the distance in bytes from [at, to) to the closest match
// of re in s outside it that not does not cover, or -1 for none. A match
// whose pattern captures a group counts where the group is: the word that
// marks the tense within a longer pattern.
func nearest(re, not *regexp.Regexp, s string, at, to int) int {
	if re == nil {
		return -1
	}
	var excluded [][]int
	if not != nil {
		excluded = not.FindAllStringSubmatchIndex(s, -1)
	}
	best := -1
	for _, loc := range re.FindAllStringSubmatchIndex(s, -1) {
		for g := 2; g+1 < len(loc); g += 2 {
			if loc[g] >= 0 {
				loc = loc[g : g+2]
				break
			}
		}
		if loc[0] < to && loc[1] > at || covered(excluded, loc) {
			continue // inside the expression, or no verb here
		}
		d := at - loc[1]
		if loc[0] >= to {
			d = loc[0] - to
		}
		if best < 0 || d < best {
			best = d
		}
	}
	return best
}

// covered reports whether a group of one of the matches ms overlaps loc.
func covered(ms [][]int, loc []int) bool {
	for _, m := range ms {
		for g := 2; g+1 < len(m); g += 2 {
			if m[g] >= 0 && m[g] < loc[1] && loc[0] < m[g+1] {
				return true
			}
		}
	}
	return false
}

// bareWeekday resolves a weekday the text gives no direction ("on
// Friday") by the tense of its sentence: the next one after the reference
// day for a plan or a present-tense statement (said on a Thursday,
// "Thursday" is the one a week later), the last one before it for a
// report; with no tense to go by it is left unresolved.
func bareWeekday(ref time.Time, wd time.Weekday, tt tense) (time.Time, Unit, bool) {
	switch {
	case tt.ahead():
		return nextWeekday(ref, wd), Day, true
	case tt == tensePast:
		return lastWeekday(ref, wd), Day, true
	}
	return time.Time{}, "", false
}

// weekdayDir resolves a weekday with a direction word: dir -1 the last one
// before the reference day, 1 the next one after it, 0 ("this Friday")
// the one of the current week (Monday to Sunday), or, when the tense
// says, the nearest one on its side of the reference day, that day
// included: "this Tuesday" said on a Sunday about a plan is two days
// later.
func weekdayDir(ref time.Time, wd time.Weekday, dir int, tt tense) (time.Time, Unit, bool) {
	d := day(ref)
	switch {
	case dir < 0:
		return lastWeekday(ref, wd), Day, true
	case dir > 0:
		return nextWeekday(ref, wd), Day, true
	case tt.ahead():
		return d.AddDate(0, 0, (int(wd)-int(d.Weekday())+7)%7), Day, true
	case tt == tensePast:
		return d.AddDate(0, 0, -((int(d.Weekday()) - int(wd) + 7) % 7)), Day, true
	}
	return weekStart(ref).AddDate(0, 0, (int(wd)+6)%7), Day, true
}
