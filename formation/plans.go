package formation

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/lang"
)

// A plan is a fact about the speaker's future: a trip, a move or a new
// job ("I'm going to Lisbon in May", "wir ziehen nächstes Jahr nach
// Kanada", "voy a empezar un trabajo nuevo"). Its attribute is the kind
// ("plan trip", "plan move", "plan job"), so that a trip never replaces a
// move. Two plans of one kind are both kept unless the later one says it
// changes the plan ("instead", "stattdessen", "al final"), is about the
// same period, or cancels it.
//
// A cancellation ("the trip is cancelled", "wir fahren doch nicht nach
// Lissabon", "ya no voy a Lisboa") supersedes the plan with a fact that
// says it is cancelled: the old plan's validity closes when the
// cancellation was said, and an as-of read before then still sees it. A
// cancellation that names a place cancels only a plan to that place; one
// that names none, the latest plan of its kind; with no such plan it
// forms nothing.
type plan struct {
	fact
	sentence string // the sentence that states it, for its dates
	change   bool   // the turn says the plan changed
	cancel   bool   // the sentence calls the plan off
}

// Plan kinds, the attributes of plan facts.
const (
	planTrip = "plan trip"
	planMove = "plan move"
	planJob  = "plan job"
)

// Subjects and auxiliaries of the English plan phrasings.
const (
	weAre  = `\b(?:I|we)(?:'m|’m|'re|’re| am| are) (?:now |still |actually |also |definitely |finally )?`
	weWill = `\b(?:I|we)(?:'ll|’ll| will|'m going to|’m going to| am going to|'re going to|’re going to| are going to| plan to| intend to|'m planning to|’m planning to|'re planning to|’re planning to| am planning to| are planning to) (?:now |still |actually |also |definitely |finally )?`
	weNot  = `\b(?:I|we)(?:'m|’m|'re|’re| am| are) (?:not|no longer) (?:going to )?`
	words3 = `(?:\S+ ){0,3}?`
)

// planRules are the phrasings of everyday speech that state a plan, per
// language, anchored on the speaker ("I", "we", "ich", "wir", …).
var planRules = map[string][]factRule{
	lang.English: join(
		rules(planTrip, "is going to", "going flying travel heading driving visit trip flight holiday vacation go fly",
			`(?i:`+weAre+`(?:going|flying|travelling|traveling|heading|driving)(?: back)? to )`+name,
			`(?i:`+weWill+`(?:go|travel|fly|drive|head)(?: back)? to )`+name,
			`(?i:`+weAre+`visiting )`+name,
			`(?i:\b(?:I|we)(?:'ve|’ve| have)? (?:just )?(?:booked|planned) (?:a|our|my) (?:trip|flight|holiday|vacation) to )`+name),
		rules(planMove, "is moving to", "move moving relocat",
			`(?i:`+weWill+`(?:move|relocate)(?: back)? to )`+name,
			`(?i:`+weAre+`(?:moving|relocating)(?: back)? to )`+name),
		rules(planJob, "starts a new job:", "start begin",
			`(?i:`+weWill+`(?:start|begin) a new (?:job|position|role) (?:at|with) )`+name,
			`(?i:`+weAre+`(?:starting|beginning) a new (?:job|position|role) (?:at|with) )`+name,
			`(?i:(?:`+weWill+`(?:start|begin)|`+weAre+`(?:starting|beginning)) )(?P<v>(?i:a new (?:job|position|role)))`),
	),
	lang.German: join(
		rules(planTrip, "fährt nach", "fahre fahren fliege fliegen reise reisen werde werden plane planen vor",
			`(?i:\b(?:ich (?:fahre|fliege|reise)|wir (?:fahren|fliegen|reisen)) `+words3+`nach )`+name,
			`(?i:\b(?:ich werde|wir werden) `+words3+`nach )`+name+`(?i: (?:fahren|fliegen|reisen|gehen))`,
			`(?i:\b(?:ich plane|wir planen) `+words3+`(?:eine )?reise nach )`+name,
			`(?i:\b(?:ich plane|wir planen|ich habe vor|wir haben vor),? `+words3+`nach )`+name+`(?i: zu (?:fahren|fliegen|reisen))`),
		rules(planMove, "zieht nach", "ziehe ziehen",
			`(?i:\b(?:ich ziehe|wir ziehen) `+words3+`nach )`+name,
			`(?i:\b(?:ich werde|wir werden) `+words3+`nach )`+name+`(?i: (?:ziehen|umziehen))`,
			`(?i:\b(?:ich plane|wir planen|ich habe vor|wir haben vor),? `+words3+`nach )`+name+`(?i: (?:zu ziehen|umzuziehen))`),
		rules(planJob, "fängt eine neue Stelle an:", "neue",
			`(?i:\bich (?:werde|fange|beginne) `+words3+`(?:einen neuen job|eine neue stelle) bei )`+name,
			`(?i:\bich (?:werde|fange|beginne) `+words3+`)(?P<v>(?i:einen neuen job|eine neue stelle))`),
	),
	lang.Spanish: join(
		rules(planTrip, "va a", "voy vamos viaj iré iremos vol planeo planeamos pienso pensamos",
			`(?i:\b(?:me voy|nos vamos|voy|vamos) (?:a (?:ir|viajar|volar) )?a )`+name,
			`(?i:\b(?:planeo|planeamos|pienso|pensamos) (?:ir|viajar|volar) a )`+name,
			`(?i:\b(?:viajaré|viajaremos|iré|iremos|volaré|volaremos) a )`+name),
		rules(planMove, "se muda a", "mud",
			`(?i:\b(?:voy a mudarme|vamos a mudarnos|me voy a mudar|nos vamos a mudar|planeo mudarme|planeamos mudarnos|me mudaré|nos mudaremos|me mudo) (?:\S+ ){0,2}?a )`+name),
		rules(planJob, "empieza un trabajo nuevo:", "empez comenz empiezo comienzo",
			`(?i:\b(?:voy a empezar|voy a comenzar|empezaré|comenzaré|empiezo|comienzo) `+words3+`un (?:nuevo trabajo|trabajo nuevo) (?:en|con) )`+name,
			`(?i:\b(?:voy a empezar|voy a comenzar|empezaré|comenzaré|empiezo|comienzo) `+words3+`)(?P<v>(?i:un (?:nuevo trabajo|trabajo nuevo)))`),
	),
	lang.French: join(
		rules(planTrip, "va à", "vais allons va",
			`(?i:\b(?:je vais|nous allons|on va) (?:aller |partir |voyager )?(?:à|a|en|au) )`+name),
		rules(planMove, "déménage à", "déménag",
			`(?i:\b(?:je vais|nous allons|on va) déménager (?:à|a|en|au) )`+name),
	),
}

// cancelRules are the phrasings that call a plan off; the place, when
// named, is in group "v" (the value "" matches any plan of the kind).
var cancelRules = map[string][]factRule{
	lang.English: join(
		rules(planTrip, "", "not longer cancel off",
			`(?i:`+weNot+`(?:going|flying|travelling|traveling|heading|visiting)(?: to)? )`+name,
			`(?i:\b(?:the|my|our) (?:trip|vacation|holiday|journey|flight))(?:(?i: to )`+name+`)?(?i: (?:(?:is|was|got|has been) (?:now )?(?:cancelled|canceled|called off)|(?:is|was|has been) (?:now )?off(?:[.,;!]|$)))`,
			`(?i:\b(?:I|we)(?:'ve|’ve| have)? (?:cancelled|canceled|called off) (?:the|my|our) (?:trip|vacation|holiday|flight))(?:(?i: to )`+name+`)?`),
		rules(planMove, "", "not longer cancel off",
			`(?i:`+weNot+`(?:moving|relocating)(?: back)? to )`+name,
			`(?i:\b(?:the|my|our) move)(?:(?i: to )`+name+`)?(?i: (?:(?:is|was|got|has been) (?:now )?(?:cancelled|canceled|called off)|(?:is|was|has been) (?:now )?off(?:[.,;!]|$)))`),
		rules(planJob, "", "not turned declined",
			`(?i:\b(?:I|we)(?:'ve|’ve| have)? (?:turned down|declined) the (?:new )?(?:job|offer|position))`,
			`(?i:\bI(?:'m|’m| am) not (?:starting|taking) the (?:new )?(?:job|position))`),
	),
	lang.German: join(
		rules(planTrip, "", "nicht abgesagt storniert aus",
			`(?i:\b(?:ich (?:fahre|fliege|reise)|wir (?:fahren|fliegen|reisen)) (?:\S+ ){0,2}?nicht (?:mehr )?(?:\S+ ){0,2}?nach )`+name,
			`(?i:\b(?:die|unsere|meine|der|unser|mein) (?:reise|fahrt|urlaub|flug))(?:(?i: nach )`+name+`)?(?i: (?:ist|wurde|wird) (?:\S+ )?(?:abgesagt|storniert|gestrichen)| fällt (?:\S+ )?aus)`,
			`(?i:\b(?:ich habe|wir haben) (?:\S+ ){0,3}?(?:reise|fahrt|urlaub|flug)\S* (?:\S+ ){0,3}?(?:abgesagt|storniert))`),
		rules(planMove, "", "nicht abgesagt",
			`(?i:\b(?:ich ziehe|wir ziehen) (?:\S+ ){0,2}?nicht (?:mehr )?(?:\S+ ){0,2}?nach )`+name,
			`(?i:\bder umzug)(?:(?i: nach )`+name+`)?(?i: (?:ist|wurde) (?:\S+ )?abgesagt| fällt (?:\S+ )?aus)`),
	),
	lang.Spanish: join(
		rules(planTrip, "", "no cancel",
			`(?i:\bno (?:voy|vamos|iré|iremos|viajo|viajamos|viajaré|viajaremos) (?:a (?:ir|viajar|volar) )?a )`+name,
			`(?i:\b(?:el|mi|nuestro) (?:viaje|vuelo))(?:(?i: a )`+name+`)?(?i: (?:se (?:ha )?cancel(?:ó|ado)|está cancelado|fue cancelado))`,
			`(?i:\b(?:cancelé|cancelamos|he cancelado|hemos cancelado) (?:el|mi|nuestro) (?:viaje|vuelo))(?:(?i: a )`+name+`)?`),
		rules(planMove, "", "no cancel",
			`(?i:\bno (?:me voy a mudar|nos vamos a mudar|voy a mudarme|vamos a mudarnos|me mudo) a )`+name,
			`(?i:\b(?:la|mi|nuestra) mudanza)(?:(?i: a )`+name+`)?(?i: (?:se (?:ha )?cancel(?:ó|ado)|está cancelada|fue cancelada))`),
	),
	lang.French: join(
		rules(planTrip, "", "plus annul",
			`(?i:\b(?:je ne vais plus|nous n'allons plus|nous n’allons plus|on ne va plus) (?:à|a|en|au) )`+name,
			`(?i:\b(?:le|mon|notre) voyage)(?:(?i: (?:à|a|en|au) )`+name+`)?(?i: (?:est|a été) annulé)`),
	),
}

// cancelLabels say "no longer plans" in each language.
var cancelLabels = map[string]string{
	lang.English: "no longer plans:", lang.German: "plant nicht mehr:", lang.Spanish: "ya no planea:", lang.French: "ne prévoit plus :",
}

// changeMarkers are the words of a turn that changes a plan.
var changeMarkers = []string{
	"instead", "changed my plans", "changed our plans", "change of plans", "change of plan", "after all",
	"stattdessen", "doch", "lieber", "umentschieden", "umgeplant", "anders entschieden",
	"en cambio", "al final", "en lugar de", "cambio de planes", "cambiamos de planes", "cambié de planes", "finalmente",
	"plutôt", "finalement", "changé d avis", "changé de plans",
}

// notPlan are words that make a sentence no plan of the speaker's: a
// condition, a reminder.
var notPlan = strings.Fields("if unless whether forget wenn falls ob vergiss vergesst si olvides olvidéis oublie oubliez")

// notPlace are capitalised words after "to"/"nach" that name no place.
var notPlace = setOf("hause haus home")

// plansOf returns the plans and cancellations the sentences of text state
// about their speaker, read by tag's rules, else by the first other
// language's rules that match.
func plansOf(tag, text string) []plan {
	change := hasAny(text, changeMarkers)
	var out []plan
	seen := map[string]bool{}
	for _, s := range sentences(text) {
		if strings.HasSuffix(s, "?") || strings.HasPrefix(s, "¿") || hasAny(s, notPlan) {
			continue
		}
		if p, ok := planIn(tag, s); ok && !seen[p.attr] {
			seen[p.attr] = true
			p.change = change
			out = append(out, p)
		}
	}
	return out
}

// planIn returns the first plan or cancellation sentence s states;
// cancellations are tried first, since they read like plans with a "not".
func planIn(tag, s string) (plan, bool) {
	lower := strings.ToLower(s)
	for _, l := range tryOrder(tag) {
		for _, set := range []struct {
			rules  []factRule
			cancel bool
		}{{cancelRules[l], true}, {planRules[l], false}} {
			for _, r := range set.rules {
				f, ok := r.matchPlan(s, lower, set.cancel)
				if ok {
					f.tag = l
					return plan{fact: f, sentence: s, cancel: set.cancel}, true
				}
			}
		}
	}
	return plan{}, false
}

// matchPlan is match for plan rules: a cancellation need not name a
// place, a plan must.
func (r factRule) matchPlan(s, lower string, cancel bool) (fact, bool) {
	if !slices.ContainsFunc(r.need, func(w string) bool { return strings.Contains(lower, w) }) {
		return fact{}, false
	}
	m := r.re.FindStringSubmatch(s)
	if m == nil {
		return fact{}, false
	}
	f := fact{attr: r.attr, label: r.label}
	if i := r.re.SubexpIndex("v"); i >= 0 {
		f.value = strings.TrimSpace(m[i])
	}
	if notPlace[strings.ToLower(f.value)] || (f.value == "" && !cancel) {
		return fact{}, false
	}
	return f, true
}

// hasAny reports whether the words of s contain one of the phrases.
func hasAny(s string, phrases []string) bool {
	padded := " " + strings.Join(lang.Words(strings.ToLower(s)), " ") + " "
	return slices.ContainsFunc(phrases, func(p string) bool { return strings.Contains(padded, " "+p+" ") })
}

// plans adds, for every plan the turns state, its fact memory and what it
// does to the plans of the same kind held before it (see plan).
func (c *consolidation) plans(ctx context.Context, said []engram.Episode) error {
	order := slices.Clone(said)
	slices.SortStableFunc(order, func(a, b engram.Episode) int { return a.OccurredAt.Compare(b.OccurredAt) })
	for i := range order {
		e := &order[i]
		for _, p := range plansOf(lang.Detect(e.Content), e.Content) {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := c.plan(ctx, e, p); err != nil {
				return err
			}
		}
	}
	return nil
}

// plan decides what plan p, stated by e, does: cancel, merge into the
// same plan, replace the plan it changes or add.
func (c *consolidation) plan(ctx context.Context, e *engram.Episode, p plan) error {
	olds, err := c.current(ctx, subjectOf(e), p.attr)
	if err != nil {
		return err
	}
	m := planMemory(e, p)
	if slices.ContainsFunc(olds, func(m engram.Memory) bool { return slices.Contains(m.Sources, e.ID) }) {
		return nil // formed from this turn already
	}
	if p.cancel {
		return c.cancelPlan(ctx, e, p, olds)
	}
	if i := slices.IndexFunc(olds, func(o engram.Memory) bool { return strings.EqualFold(factValue(&o), p.value) }); i >= 0 {
		c.ops = append(c.ops, engram.MemoryOp{Op: engram.OpMerge, TargetID: olds[i].ID, Memory: engram.Memory{Sources: m.Sources},
			Reason: "the same plan stated again"})
		return nil
	}
	var target *engram.Memory
	if p.change && len(olds) > 0 {
		target = &olds[0]
	} else if i := slices.IndexFunc(olds, func(o engram.Memory) bool { return samePeriod(&o, &m) }); i >= 0 {
		target = &olds[i]
	}
	if target == nil || !e.OccurredAt.After(validFrom(*target)) {
		// Nothing to replace, or a plan said no later than this one: an
		// older turn never replaces a newer plan.
		c.ops = append(c.ops, engram.MemoryOp{Op: engram.OpAdd, Memory: m, Reason: "a plan the turn states"})
		return nil
	}
	inheritWindow(&m, target)
	c.ops = append(c.ops, engram.MemoryOp{Op: engram.OpSupersede, TargetID: target.ID, Memory: m,
		Reason: fmt.Sprintf("%s changed: %q replaces %q", p.attr, p.value, factValue(target))})
	return c.stale(ctx, target, termsOf(p.fact), e.OccurredAt)
}

// cancelPlan supersedes the plan p calls off with a fact saying so.
func (c *consolidation) cancelPlan(ctx context.Context, e *engram.Episode, p plan, olds []engram.Memory) error {
	i := slices.IndexFunc(olds, func(o engram.Memory) bool {
		return o.Metadata[metaCancelled] == nil && (p.value == "" || strings.EqualFold(factValue(&o), p.value))
	})
	if i < 0 || !e.OccurredAt.After(validFrom(olds[i])) {
		return nil
	}
	old := &olds[i]
	p.value, p.label = factValue(old), cancelLabels[p.tag]
	m := planMemory(e, p)
	m.Value = subjectOf(e) + " " + p.label + " " + strings.TrimPrefix(old.Value, subjectOf(e)+" ")
	m.Abstraction = clip(m.Value, engram.MaxShortBytes)
	m.Metadata[metaCancelled] = true
	c.ops = append(c.ops, engram.MemoryOp{Op: engram.OpSupersede, TargetID: old.ID, Memory: m,
		Reason: fmt.Sprintf("%s cancelled: %q", p.attr, factValue(old))})
	return c.stale(ctx, old, termsOf(p.fact), e.OccurredAt)
}

// metaCancelled marks the fact that a plan was called off.
const metaCancelled = "plan_cancelled"

// planMemory is the fact memory of plan p that e states: valid from when
// it was said, with the period it is planned for, when the sentence names
// one, as its event window.
func planMemory(e *engram.Episode, p plan) engram.Memory {
	m := factMemory(e, p.tag, p.fact)
	if p.cancel {
		return m
	}
	if ms := lang.ResolveLang(p.tag, p.sentence, e.OccurredAt); len(ms) > 0 {
		m.Metadata[engram.MetaEventFrom] = ms[0].From.Format(time.DateOnly)
		m.Metadata[engram.MetaEventTo] = ms[0].To.Format(time.DateOnly)
		m.Value += " (" + ms[0].Label() + ")"
		m.Abstraction = clip(m.Value, engram.MaxShortBytes)
	}
	return m
}

// inheritWindow gives m, a change of plan old that names no period of
// its own ("we're going to Porto instead"), old's period.
func inheritWindow(m, old *engram.Memory) {
	if f, _ := window(m); f != "" {
		return
	}
	f, to := window(old)
	if f == "" {
		return
	}
	m.Metadata[engram.MetaEventFrom], m.Metadata[engram.MetaEventTo] = f, to
	if i := strings.LastIndex(old.Value, " ("); i >= 0 && strings.HasSuffix(old.Value, ")") {
		m.Value += old.Value[i:]
		m.Abstraction = clip(m.Value, engram.MaxShortBytes)
	}
}

// samePeriod reports whether two plans' event windows overlap.
func samePeriod(a, b *engram.Memory) bool {
	af, at := window(a)
	bf, bt := window(b)
	return af != "" && bf != "" && af < bt && bf < at
}

func window(m *engram.Memory) (from, to string) {
	from, _ = m.Metadata[engram.MetaEventFrom].(string)
	to, _ = m.Metadata[engram.MetaEventTo].(string)
	return from, to
}
