package formation

import (
	"time"

	"github.com/engramhq/engram/lang"
)

// The temporal expressions and the periods they name live in package lang,
// which knows them per language; these names keep formation's callers
// reading as before.

// Unit is the granularity of the period a temporal expression names.
type Unit = lang.Unit

// Units of Mention.
const (
	Day     = lang.Day
	Weekend = lang.Weekend
	Week    = lang.Week
	Month   = lang.Month
	Season  = lang.Season
	Year    = lang.Year
	Span    = lang.Span
)

// Mention is a temporal expression found in a text and the absolute period
// [From, To) it names (see lang.Mention).
type Mention = lang.Mention

// Resolve finds the temporal expressions of English text (see
// lang.Resolve).
func Resolve(text string, ref time.Time) []Mention { return lang.Resolve(text, ref) }

// Annotate returns text with the label of every relative mention written
// after it in brackets (see lang.Annotate).
func Annotate(text string, ms []Mention) string { return lang.Annotate(text, ms) }
