package formation

import (
	"strings"

	"github.com/engramhq/engram/lang"
)

// MetaRecurring is the metadata key of the recurring times a turn names
// ("every Friday; every week"), in English whatever the turn's language.
// A recurring time is never written into a memory as one date: it sets no
// event window and no date in the abstraction.
const MetaRecurring = "recurring"

// recurrence renders the recurring mentions of a text for MetaRecurring,
// each once; "" when there are none.
func recurrence(every []lang.Mention) string {
	var out []string
	for _, m := range every {
		if l := m.Label(); !containsFold(out, l) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "; ")
}

func containsFold(ss []string, s string) bool {
	for _, x := range ss {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// withRecurring returns the dated mentions and then the recurring ones
// that name a weekday, in a new slice: the labels a turn's cues hold ("9
// May 2024", "every Friday"). A day of the week is what a schedule is
// asked by ("what happens on Fridays?"); a recurring part of the day or
// unit ("every morning", "every weekend") is how a habit is told, already
// in the turn's own words, and as an English cue on a turn in another
// language it only drew questions away from the turn's content.
func withRecurring(dated, every []lang.Mention) []lang.Mention {
	out := make([]lang.Mention, 0, len(dated)+len(every))
	out = append(out, dated...)
	for _, m := range every {
		if weekdays[strings.ToLower(m.Every)] {
			out = append(out, m)
		}
	}
	return out
}

var weekdays = map[string]bool{"monday": true, "tuesday": true, "wednesday": true, "thursday": true, "friday": true, "saturday": true, "sunday": true}
