package llmformer

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/entity"
	"github.com/engramhq/engram/lang"
)

// Metadata keys the former sets on the memories it forms.
const (
	MetaAbout       = "about"        // whom a memory is about
	MetaForesight   = "foresight"    // true on a plan or intention
	MetaSummary     = "summary"      // true on an episode's narrative summary
	MetaProfilePart = "profile_part" // "trait" or "state": the candidate bears on the user's profile
)

const extractPrompt = `You extract long-term memories from a conversation for a memory system.
You get EARLIER turns (context only: extract nothing from them) and NEW turns, each numbered [n] with its time and speaker.
Reply with one JSON object {"episodes": [...], "memories": [...]} and nothing else.

episodes: group the NEW turns into episodes where the topic or situation changes; each {"turns": [n,...], "title": a few words, "summary": a short narrative of what happened}.

memories: every durable fact, event, preference, plan or instruction in the NEW turns, each:
- "kind": core (stable facts about the user: name, home, job, family, lasting traits), episodic (something that happened at a time), semantic (facts and knowledge about others or the world), procedural (how to do something, standing instructions), resource (documents, links, files), vault (secrets: passwords, account or ID numbers).
- "abstraction": what it is about, in a few words.
- "cues": short anchor phrases: names, places, objects.
- "value": the full memory, self-contained, in the language the speaker used. Never translate.
- "language": its BCP 47 tag, e.g. "en", "de", "es", "zh".
- "about": whom it is about (a name, or "user").
- "valid_from", "valid_to": when it holds, as YYYY-MM-DD or RFC 3339; resolve relative dates ("last month", "next week") against the turn's time; "" when unknown.
- "foresight": true for a plan or intention, with valid_from..valid_to the window it is expected in.
- "confidence", "importance": numbers from 0 to 1.
- "profile": "trait" for a stable trait of the user, "state" for a transient state of the user (mood, current project, temporary situation), "" otherwise.
- "sources": the numbers of the NEW turns it comes from.
- "entities": the people, places, works and things it names, each {"name": as written, "type": person, place, work or thing}; [] when none.
- "relations": facts it states between two of those entities, each {"source": a name from entities, "label": a short snake_case predicate such as lives_in, works_at, sister_of, "target": a name from entities, "valid_from", "valid_to": when the relation holds, as above, "" when unknown}; [] when none.
Changes: when a speaker stops, quits, gives up or no longer does or is something ("I stopped drinking coffee", "ich trinke keinen Kaffee mehr", "ya no", "dejé de", "je ne ... plus", "j'ai arrêté", "不再", "戒了"), add a memory that says what no longer holds ("Bob no longer drinks coffee") and, when said, a separate memory of what holds now ("Bob now drinks only green tea"), each with valid_from the time of the change.
A job stated as title and employer together ("a new job as a software engineer at Siemens", "Ich arbeite jetzt als X bei Y", "trabajo como X en Y", "je travaille comme X chez Y", "我在Y当X") gives one core memory naming both, with the relations works_as (the title) and works_at (the employer).
A new home stated with a district or a street of the city held before ("Ich wohne jetzt in Schwabing", "in Schwabing, a district of Munich") names the city too when the turns say which ("Bob lives in Schwabing, Munich"); never invent the city.
When the user asks to forget something, add a memory with kind semantic, abstraction "forget request" and value naming what is to be forgotten.`

var extractSchema = json.RawMessage(`{"type":"object","additionalProperties":false,"required":["episodes","memories"],"properties":{
"episodes":{"type":"array","items":{"type":"object","additionalProperties":false,"required":["turns","title","summary"],"properties":{
 "turns":{"type":"array","items":{"type":"integer"}},"title":{"type":"string"},"summary":{"type":"string"}}}},
"memories":{"type":"array","items":{"type":"object","additionalProperties":false,
 "required":["kind","abstraction","cues","value","language","about","valid_from","valid_to","foresight","confidence","importance","profile","sources","entities","relations"],
 "properties":{"kind":{"type":"string","enum":["core","episodic","semantic","procedural","resource","vault"]},
 "abstraction":{"type":"string"},"cues":{"type":"array","items":{"type":"string"}},"value":{"type":"string"},
 "language":{"type":"string"},"about":{"type":"string"},"valid_from":{"type":"string"},"valid_to":{"type":"string"},
 "foresight":{"type":"boolean"},"confidence":{"type":"number"},"importance":{"type":"number"},
 "profile":{"type":"string","enum":["trait","state",""]},"sources":{"type":"array","items":{"type":"integer"}},
 "entities":{"type":"array","items":{"type":"object","additionalProperties":false,"required":["name","type"],"properties":{
  "name":{"type":"string"},"type":{"type":"string","enum":["person","place","work","thing"]}}}},
 "relations":{"type":"array","items":{"type":"object","additionalProperties":false,"required":["source","label","target","valid_from","valid_to"],"properties":{
  "source":{"type":"string"},"label":{"type":"string"},"target":{"type":"string"},"valid_from":{"type":"string"},"valid_to":{"type":"string"}}}}}}}}}`)

type extractReply struct {
	Episodes []struct {
		Turns   []int  `json:"turns"`
		Title   string `json:"title"`
		Summary string `json:"summary"`
	} `json:"episodes"`
	Memories []candidateReply `json:"memories"`
}

type candidateReply struct {
	Kind        string   `json:"kind"`
	Abstraction string   `json:"abstraction"`
	Cues        []string `json:"cues"`
	Value       string   `json:"value"`
	Language    string   `json:"language"`
	About       string   `json:"about"`
	ValidFrom   string   `json:"valid_from"`
	ValidTo     string   `json:"valid_to"`
	Foresight   bool     `json:"foresight"`
	Confidence  *float64 `json:"confidence"`
	Importance  *float64 `json:"importance"`
	Profile     string   `json:"profile"`
	Sources     []int    `json:"sources"`
	// Entities and Relations are kept on the memory for the entity graph
	// (entity.FromFormer reads them); a reply without them forms the same.
	Entities  []map[string]any `json:"entities"`
	Relations []map[string]any `json:"relations"`
}

// extraction is a validated extraction reply: memory candidates still to
// be consolidated, and ADD operations of the episodes' summaries.
type extraction struct {
	candidates []cand
	summaries  []engram.MemoryOp
}

// extract asks the model for the candidates and episodes of eps, with
// prior shown as context, and validates the reply.
func (f *Former) extract(ctx context.Context, prior, eps []engram.Episode) (*extraction, error) {
	var rep extractReply
	if err := f.ask(ctx, "extraction", extractPrompt, renderTurns(prior, eps), extractSchema, &rep); err != nil {
		return nil, err
	}
	if rep.Memories == nil && rep.Episodes == nil {
		return nil, invalid("extraction", "neither episodes nor memories is given")
	}
	ex := &extraction{}
	for i, c := range rep.Memories {
		m, err := candidate(c, eps)
		if err != nil {
			return nil, invalid("extraction", "memories[%d]: %v", i, err)
		}
		ex.candidates = append(ex.candidates, cand{m, eps[c.Sources[0]-1].OccurredAt})
	}
	for i, e := range rep.Episodes {
		op, err := summary(e.Turns, e.Title, e.Summary, eps)
		if err != nil {
			return nil, invalid("extraction", "episodes[%d]: %v", i, err)
		}
		ex.summaries = append(ex.summaries, op)
	}
	return ex, nil
}

// cand is a memory candidate and the time of the turn it comes from.
type cand struct {
	engram.Memory
	at time.Time
}

// renderTurns lists prior and eps for the model, eps numbered from 1.
func renderTurns(prior, eps []engram.Episode) string {
	var b strings.Builder
	if len(prior) > 0 {
		b.WriteString("EARLIER turns:\n")
		for _, e := range prior {
			fmt.Fprintf(&b, "- (%s) %s: %s\n", e.OccurredAt.Format(time.RFC3339), who(e), e.Content)
		}
		b.WriteString("\n")
	}
	b.WriteString("NEW turns:\n")
	for i, e := range eps {
		fmt.Fprintf(&b, "[%d] (%s, %s) %s: %s\n", i+1, e.OccurredAt.Format(time.RFC3339), e.OccurredAt.Weekday(), who(e), e.Content)
	}
	return b.String()
}

func who(e engram.Episode) string {
	switch {
	case e.Speaker != "" && e.Role != "":
		return e.Speaker + " (" + e.Role + ")"
	case e.Speaker != "":
		return e.Speaker
	case e.Role != "":
		return e.Role
	}
	return "unknown"
}

// candidate validates one extracted memory and makes it a Memory of the
// batch's namespace citing its source turns.
func candidate(c candidateReply, eps []engram.Episode) (engram.Memory, error) {
	switch {
	case !engram.Kind(c.Kind).Valid():
		return engram.Memory{}, fmt.Errorf("kind %q is not one of core, episodic, semantic, procedural, resource, vault", c.Kind)
	case strings.TrimSpace(c.Value) == "":
		return engram.Memory{}, fmt.Errorf("value is missing")
	case c.Confidence == nil || *c.Confidence < 0 || *c.Confidence > 1:
		return engram.Memory{}, fmt.Errorf("confidence %s is missing or outside 0..1", num(c.Confidence))
	case c.Importance == nil || *c.Importance < 0 || *c.Importance > 1:
		return engram.Memory{}, fmt.Errorf("importance %s is missing or outside 0..1", num(c.Importance))
	case c.Profile != "" && c.Profile != "trait" && c.Profile != "state":
		return engram.Memory{}, fmt.Errorf("profile %q is not trait, state or empty", c.Profile)
	}
	srcs, err := turns(c.Sources, eps)
	if err != nil {
		return engram.Memory{}, err
	}
	src := eps[srcs[0]]
	m := engram.Memory{
		Namespace: src.Namespace, Kind: engram.Kind(c.Kind), Abstraction: strings.TrimSpace(c.Abstraction),
		Cues: c.Cues, Value: strings.TrimSpace(c.Value), Language: c.Language,
		Confidence: *c.Confidence, Importance: *c.Importance, Metadata: map[string]any{},
	}
	for _, i := range srcs {
		m.Sources = append(m.Sources, eps[i].ID)
	}
	if m.Language == "" {
		m.Language = lang.Detect(m.Value)
	}
	if err := validity(&m, c, src); err != nil {
		return engram.Memory{}, err
	}
	if c.About != "" {
		m.Metadata[MetaAbout] = c.About
	}
	if c.Foresight {
		m.Metadata[MetaForesight] = true
	}
	if c.Profile != "" {
		m.Metadata[MetaProfilePart] = c.Profile
	}
	if src.Speaker != "" {
		m.Metadata[engram.MetaSpeaker] = src.Speaker
	}
	graphMetadata(&m, c, src.OccurredAt)
	return m, m.Validate()
}

func num(p *float64) string {
	if p == nil {
		return "(none)"
	}
	return fmt.Sprint(*p)
}

// turns maps the model's 1-based turn numbers to indexes of eps; a number
// that names no new turn is an error, as is an empty list.
func turns(ns []int, eps []engram.Episode) ([]int, error) {
	if len(ns) == 0 {
		return nil, fmt.Errorf("sources are missing")
	}
	var out []int
	seen := map[int]bool{}
	for _, n := range ns {
		if n < 1 || n > len(eps) {
			return nil, fmt.Errorf("source %d is not one of the new turns 1..%d", n, len(eps))
		}
		if !seen[n] {
			seen[n] = true
			out = append(out, n-1)
		}
	}
	return out, nil
}

// validity sets m's event validity from the reply's dates. Without a
// start, a relative date the source turn mentions is resolved against the
// turn's time; an event or plan with neither starts at the turn. A plan
// without an end holds for 90 days.
func validity(m *engram.Memory, c candidateReply, src engram.Episode) error {
	from, err := parseDate("valid_from", c.ValidFrom, src.OccurredAt)
	if err != nil {
		return err
	}
	to, err := parseDate("valid_to", c.ValidTo, src.OccurredAt)
	if err != nil {
		return err
	}
	if from == nil {
		if ms := lang.ResolveLang(lang.Detect(src.Content), src.Content, src.OccurredAt); len(ms) > 0 {
			t := ms[0].From
			from = &t
		} else if m.Kind == engram.KindEpisodic || c.Foresight {
			t := src.OccurredAt
			from = &t
		}
	}
	if c.Foresight && to == nil && from != nil {
		t := from.AddDate(0, 0, 90)
		to = &t
	}
	if from != nil && to != nil && to.Before(*from) {
		return fmt.Errorf("valid_to %s is before valid_from %s", c.ValidTo, c.ValidFrom)
	}
	m.ValidFrom, m.ValidTo = from, to
	return nil
}

// parseDate reads a date or time; "" is none. A date far from the turn's
// time (before 1900, or more than 100 years after it) is an error.
func parseDate(field, s string, ref time.Time) (*time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	var t time.Time
	var err error
	if len(s) == len("2006-01-02") {
		t, err = time.ParseInLocation("2006-01-02", s, ref.Location())
	} else {
		t, err = time.Parse(time.RFC3339, s)
	}
	if err != nil {
		return nil, fmt.Errorf("%s %q is not a date (YYYY-MM-DD) or an RFC 3339 time", field, s)
	}
	if t.Year() < 1900 || t.After(ref.AddDate(100, 0, 0)) {
		return nil, fmt.Errorf("%s %q is implausibly far from the turn's time", field, s)
	}
	return &t, nil
}

// summary makes the ADD of one episode's narrative summary.
func summary(ns []int, title, text string, eps []engram.Episode) (engram.MemoryOp, error) {
	idx, err := turns(ns, eps)
	if err != nil {
		return engram.MemoryOp{}, fmt.Errorf("turns: %v", err)
	}
	if strings.TrimSpace(text) == "" {
		return engram.MemoryOp{}, fmt.Errorf("summary is missing")
	}
	first := eps[idx[0]]
	at := first.OccurredAt
	m := engram.Memory{
		Namespace: first.Namespace, Kind: engram.KindEpisodic, Abstraction: strings.TrimSpace(title),
		Value: strings.TrimSpace(text), Language: lang.Detect(text), ValidFrom: &at,
		Confidence: 1, Importance: 0.5, Metadata: map[string]any{MetaSummary: true},
	}
	for _, i := range idx {
		m.Sources = append(m.Sources, eps[i].ID)
		if eps[i].OccurredAt.Before(*m.ValidFrom) {
			t := eps[i].OccurredAt
			m.ValidFrom = &t
		}
	}
	if err := m.Validate(); err != nil {
		return engram.MemoryOp{}, err
	}
	return engram.MemoryOp{Op: engram.OpAdd, Memory: m, Reason: "episode summary"}, nil
}

// graphMetadata keeps the reply's entities and relations on m under
// entity.MetaEntities and entity.MetaRelations, as lists of string-valued
// objects, with relative dates resolved against ref like the memory's own
// and unreadable ones dropped. Entries of another shape are left out;
// entity.FromFormer judges the rest.
func graphMetadata(m *engram.Memory, c candidateReply, ref time.Time) {
	keep := func(x map[string]any, keys ...string) map[string]any {
		out := map[string]any{}
		for _, k := range keys {
			s, _ := x[k].(string)
			out[k] = s
		}
		return out
	}
	var ents, rels []any
	for _, x := range c.Entities {
		ents = append(ents, keep(x, "name", "type"))
	}
	for _, x := range c.Relations {
		r := keep(x, "source", "label", "target", "valid_from", "valid_to")
		for _, k := range []string{"valid_from", "valid_to"} {
			t, err := parseDate(k, r[k].(string), ref)
			if err != nil || t == nil {
				r[k] = ""
			} else {
				r[k] = t.UTC().Format(time.RFC3339)
			}
		}
		rels = append(rels, r)
	}
	if len(ents) > 0 {
		m.Metadata[entity.MetaEntities] = ents
	}
	if len(rels) > 0 {
		m.Metadata[entity.MetaRelations] = rels
	}
}
