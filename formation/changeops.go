package formation

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/engramhq/engram"
)

// What a changed fact does to the facts held before it, beyond "a newer
// value supersedes the older" (see consolidation.fact):
//
//   - a value that holds the held one ("Friday at 3pm" after "Friday",
//     "Schwabing, Munich" after "Munich") refines it: it supersedes it
//     and the broader value stays answerable in the newer;
//   - a value the held one holds ("Munich" after "Schwabing, Munich")
//     says it again, less exactly: it merges;
//   - a new home (see place) refines the held one when it lies within it,
//     supersedes it otherwise (a move, said or not);
//   - stopping something (see stopsOf) ends the held facts that name it.

// change decides, before the plain rule, what fact f (memory m), stated
// by e, does to olds, the active facts of its subject and attribute,
// latest first: it reports whether it decided.
func (c *consolidation) change(ctx context.Context, e *engram.Episode, f fact, m engram.Memory, olds []engram.Memory) (bool, error) {
	// A fact that says another no longer holds is replaced the plain way.
	olds = slices.DeleteFunc(slices.Clone(olds), func(o engram.Memory) bool { return ended(&o) })
	if len(olds) == 0 || slices.Contains(olds[0].Sources, e.ID) {
		return false, nil
	}
	old := olds[0]
	ov, nv := factValue(&old), f.value
	if strings.EqualFold(ov, nv) || (old.ValidFrom != nil && !e.OccurredAt.After(*old.ValidFrom)) {
		return false, nil
	}
	switch {
	case retold(&old, e, ov, nv):
		// The held fact stands as it was: citing the retelling would make
		// its turn, the later, read as the fact's latest state.
		return true, nil
	case holds(nv, ov):
		c.supersede(old, m, fmt.Sprintf("%s: %q refines %q", f.attr, nv, ov))
		return true, nil
	case holds(ov, nv):
		c.ops = append(c.ops, engram.MemoryOp{Op: engram.OpMerge, TargetID: old.ID, Memory: engram.Memory{Sources: m.Sources},
			Reason: fmt.Sprintf("%s: %q says %q again, less exactly", f.attr, nv, ov)})
		return true, nil
	case f.attr == "residence":
		return true, c.place(ctx, e, f, olds)
	}
	return false, nil
}

// retoldWithin is how soon after a fact a value in another script reads
// as the same fact told again rather than a change.
const retoldWithin = time.Hour

// retold reports whether value nv, stated by e, tells the held fact old
// (value ov) again in another language: the two are in different scripts
// (one in Han characters), which the rules cannot compare without a
// dictionary, and e was said within retoldWithin of old. A speaker who
// says "now I only drink green tea" and a minute later "我现在每天早上喝绿茶"
// has changed nothing, and the retelling forms no fact; a change said
// months later still supersedes.
func retold(old *engram.Memory, e *engram.Episode, ov, nv string) bool {
	return hasHan(ov) != hasHan(nv) && old.ValidFrom != nil && e.OccurredAt.Sub(*old.ValidFrom) < retoldWithin
}

// place decides what a new home does to the held ones, olds (latest
// first). Without a gazetteer a bare place name may be a district of the
// held city or another city, so:
//
//   - a refinement: the new place is a street (see street), or the turn
//     marks it a part of a town (see district), or the turn or an earlier
//     memory of the scope names it in one sentence with the held place,
//     not as where one came from ("Schwabing in Munich", "Munich's
//     Schwabing", "moved within Munich"): the new fact's value is the
//     new place within the held one ("Schwabing, Munich"), which
//     supersedes the held;
//   - otherwise a change: the new place supersedes the latest held one
//     and ends the others, whether the turn says one moved (moved,
//     relocated, gezogen, me mudé, déménagé, 搬) or just where one lives
//     now. A bare "Ich wohne jetzt in Schwabing" therefore replaces
//     Munich: without a gazetteer, "I live in Madrid now" after Berlin is
//     far likelier a move than a district, and a stale home left active
//     is the error users meet most; saying the two together ("Schwabing,
//     in Munich"), in this turn or before, keeps both.
func (c *consolidation) place(ctx context.Context, e *engram.Episode, f fact, olds []engram.Memory) error {
	old := olds[0]
	ov := factValue(&old)
	said := sentenceOf(e.Content, f.value)
	rel, err := c.related(ctx, said, f.value, ov)
	if err != nil {
		return err
	}
	switch {
	case rel:
		f.value = f.value + ", " + ov
		c.supersede(old, factMemory(e, f.tag, f), fmt.Sprintf("residence: %q refines %q, which it lies in", f.value, ov))
		return nil
	}
	m := factMemory(e, f.tag, f)
	c.supersede(old, m, fmt.Sprintf("residence: %q replaces %q", f.value, ov))
	if err := c.stale(ctx, &old, termsOf(f), e.OccurredAt); err != nil {
		return err
	}
	for _, o := range olds[1:] {
		if err := c.end(ctx, e, f.tag, o); err != nil {
			return err
		}
	}
	return nil
}

// supersede appends the operation by which m replaces old.
func (c *consolidation) supersede(old, m engram.Memory, reason string) {
	c.ops = append(c.ops, engram.MemoryOp{Op: engram.OpSupersede, TargetID: old.ID, Memory: m, Reason: reason})
}

// related reports whether the new place lies within the held one, by the
// sentence that states it (said) or, failing that, by what the scope
// holds: an earlier memory with a sentence that names both.
func (c *consolidation) related(ctx context.Context, said, place, held string) (bool, error) {
	if street.MatchString(place) || district.MatchString(said) || within(said, place, held) {
		return true, nil
	}
	if c.sr == nil {
		return false, nil
	}
	hits, err := c.sr.SearchText(ctx, place+" "+held, engram.MemoryFilter{}, 20)
	if err != nil {
		return false, err
	}
	for _, h := range hits {
		if isFact(&h.Memory) {
			continue // a fact's value is a place, not a relation
		}
		for _, s := range sentences(h.Memory.Value) {
			if within(s, place, held) {
				return true, nil
			}
		}
	}
	return false, nil
}

// within reports whether sentence s names place and held, held not as
// where one came from ("from Munich to Berlin").
func within(s, place, held string) bool {
	i, j := strings.Index(s, place), strings.Index(s, held)
	if i < 0 || j < 0 {
		return false
	}
	return !cameFrom.MatchString(s[:j])
}

// cameFrom finds, at the end of the text before a place, a word that
// makes it where one left: "from", "von", "aus", "desde", "de", "depuis",
// "left", "verlassen", "从", "离开".
var cameFrom = regexp.MustCompile(`(?i)(?:\b(?:from|left|leaving|von|aus|verlassen|desde|dejé|de|depuis|quitté)\s+|从|离开)$`)

// street finds a street in a place name: "Baker Street", "Leopoldstraße",
// "calle de Alcalá", "rue de Rivoli", "南京路".
var street = regexp.MustCompile(`(?i)\b(?:street|st|road|rd|avenue|ave|lane|boulevard|drive|calle|avenida|plaza|paseo|rue|boulevard|place)\b|(?:straße|strasse|str\.|weg|gasse|allee|platz)$|\p{Han}(?:路|街|大道|巷)$`)

// district finds a word that marks a place as part of a town: "a district
// of", "neighbourhood", "Stadtteil", "barrio", "quartier", "区".
var district = regexp.MustCompile(`(?i)\b(?:district|neighbou?rhood|borough|suburb|part of town|across town|within|same city|stadtteil|viertel|bezirk|innerhalb|barrio|distrito|colonia|misma ciudad|quartier|arrondissement|même ville)\b|\p{Han}区`)

// holds reports whether value a holds all the words of b, and more: "Schwabing,
// Munich" holds "Munich".
func holds(a, b string) bool {
	wa, wb := wordSet(a), wordSet(b)
	if len(wb) == 0 || len(wa) <= len(wb) {
		if hasHan(a) && hasHan(b) && a != b {
			return strings.Contains(a, b)
		}
		return false
	}
	for w := range wb {
		if !wa[w] {
			return false
		}
	}
	return true
}

// sentenceOf returns the sentence of text that holds value, else text.
func sentenceOf(text, value string) string {
	for _, s := range sentences(text) {
		if strings.Contains(s, value) {
			return s
		}
	}
	return text
}

// stops ends, for each thing e says its speaker stopped, the held facts
// of the speaker that name it (see mentions): a fact the turn states in
// the same sentence, of a kindred attribute, that replaces nothing of its
// own supersedes the first of them ("I stopped drinking coffee; now I
// only drink green tea"); a thing switched to takes the first's
// attribute ("I switched from coffee to tea"); the others are superseded
// by a fact that says they no longer hold ("Bob no longer: favourite drink: black coffee").
func (c *consolidation) stops(ctx context.Context, e *engram.Episode, stops []stop) error {
	if len(stops) == 0 {
		return nil
	}
	held, err := c.held(ctx, subjectOf(e))
	if err != nil {
		return err
	}
	done := map[string]bool{}
	for _, st := range stops {
		for _, h := range held {
			if done[h.ID] || slices.Contains(h.Sources, e.ID) || ended(&h) || planned(&h) || !mentions(st.thing, factValue(&h)) {
				continue
			}
			done[h.ID] = true
			if err := c.stopOne(ctx, e, st, h); err != nil {
				return err
			}
		}
	}
	return nil
}

// stopOne ends the held fact h that e stops (st).
func (c *consolidation) stopOne(ctx context.Context, e *engram.Episode, st stop, h engram.Memory) error {
	attr, _ := h.Metadata[engram.MetaFactAttribute].(string)
	if i := c.replacement(e, st, attr); i >= 0 {
		op := &c.ops[i]
		op.Op, op.TargetID = engram.OpSupersede, h.ID
		op.Reason = fmt.Sprintf("%s: %q stopped, %q now", attr, factValue(&h), factValue(&op.Memory))
		return c.stale(ctx, &h, termsOf(fact{attr: attr}), e.OccurredAt)
	}
	if st.now != "" {
		label := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(h.Value, subjectOf(e)+" "), factValue(&h)))
		m := factMemory(e, st.tag, fact{attr: attr, label: label, value: st.now})
		c.supersede(h, m, fmt.Sprintf("%s: switched from %q to %q", attr, factValue(&h), st.now))
		return c.stale(ctx, &h, termsOf(fact{attr: attr}), e.OccurredAt)
	}
	return c.end(ctx, e, st.tag, h)
}

// replacement returns the index of the ADD of a fact e states in st's
// sentence, of an attribute kindred to attr, else -1.
func (c *consolidation) replacement(e *engram.Episode, st stop, attr string) int {
	for i, op := range c.ops {
		m := &op.Memory
		if op.Op != engram.OpAdd || !isFact(m) || !slices.Contains(m.Sources, e.ID) || !strings.Contains(st.sentence, factValue(m)) {
			continue
		}
		if a, _ := m.Metadata[engram.MetaFactAttribute].(string); kindred(a, attr) {
			return i
		}
	}
	return -1
}

// kindred reports whether a fact of attribute a can replace one of b: the
// two share a word ("drink", "favourite drink"), or neither is where one
// lives or works, a status, a count or a time (what one drinks now
// replaces a favourite food one stopped eating).
func kindred(a, b string) bool {
	for w := range wordSet(a) {
		if wordSet(b)[w] {
			return true
		}
	}
	return !fixedAttr(a) && !fixedAttr(b)
}

func fixedAttr(a string) bool {
	switch a {
	case "residence", "workplace", "relationship":
		return true
	}
	return strings.HasPrefix(a, "count of ") || strings.HasPrefix(a, "time of ") || strings.HasPrefix(a, "plan")
}

// noLonger is how each language the rules read says a fact no longer
// holds.
var noLonger = map[string]string{"en": "no longer", "de": "nicht mehr", "es": "ya no", "fr": "ne plus", "zh": "不再"}

// end supersedes the held fact h by one that says, in language tag, that
// it no longer holds, from e's event time; the turns that stated h are
// marked stale for its attribute.
func (c *consolidation) end(ctx context.Context, e *engram.Episode, tag string, h engram.Memory) error {
	attr, _ := h.Metadata[engram.MetaFactAttribute].(string)
	neg, ok := noLonger[tag]
	if !ok {
		neg = noLonger["en"]
	}
	subj := subjectOf(e)
	m := factMemory(e, tag, fact{attr: attr, value: neg + " " + factValue(&h)})
	m.Value = subj + " " + neg + ": " + strings.TrimPrefix(h.Value, subj+" ")
	m.Abstraction = clip(m.Value, engram.MaxShortBytes)
	c.supersede(h, m, fmt.Sprintf("%s: %q no longer holds", attr, factValue(&h)))
	return c.stale(ctx, &h, termsOf(fact{attr: attr}), e.OccurredAt)
}

// ended reports whether m is a fact that says another no longer holds.
func ended(m *engram.Memory) bool {
	v := factValue(m)
	for _, neg := range noLonger {
		if strings.HasPrefix(v, neg+" ") {
			return true
		}
	}
	return false
}

// planned reports whether m is a plan fact, which its own cancellations
// end (see plan).
func planned(m *engram.Memory) bool {
	attr, _ := m.Metadata[engram.MetaFactAttribute].(string)
	return strings.HasPrefix(attr, "plan")
}

// held returns the active facts of subject, the batch's own and the
// stored ones, less those the batch replaced.
func (c *consolidation) held(ctx context.Context, subject string) ([]engram.Memory, error) {
	var out []engram.Memory
	replaced := map[string]bool{}
	for _, op := range c.ops {
		switch op.Op {
		case engram.OpAdd, engram.OpSupersede, engram.OpConflict:
			if op.Memory.Metadata[engram.MetaFactSubject] == subject {
				out = append(out, op.Memory)
			}
		}
		if op.Op == engram.OpSupersede {
			replaced[op.TargetID] = true
		}
	}
	if c.sr != nil {
		stored, _, err := c.sr.ListMemories(ctx, engram.MemoryFilter{Limit: engram.MaxLimit,
			Metadata: map[string]any{engram.MetaFactSubject: subject}})
		if err != nil {
			return nil, err
		}
		out = append(out, stored...)
	}
	return slices.DeleteFunc(out, func(m engram.Memory) bool { return replaced[m.ID] }), nil
}
