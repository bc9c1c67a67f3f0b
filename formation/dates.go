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

// withRecurring returns the dated mentions and then the recurring ones, in
// a new slice: the labels a turn's cues hold ("9 May 2024", "every
// Friday").
func withRecurring(dated, every []lang.Mention) []lang.Mention {
	out := make([]lang.Mention, 0, len(dated)+len(every))
	return append(append(out, dated...), every...)
}
