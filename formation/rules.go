package formation

import (
	"context"
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/lang"
)

// Rules is the default former: Former's memory of every turn, consolidated
// by rules, without a language model, against what the engine's view
// holds (the user's memories in every session, see engram.FormRequest.View):
//
//   - a turn that repeats a memory of the same party in the same session
//     (similarity at least MergeAt) merges into it: the memory gains the
//     turn as a source;
//   - a first-person statement of an attribute (where one lives or works,
//     a diet, a favourite, a relationship status, how many of something
//     one has or has done, the time of an event one names ("our meeting
//     is on Thursday at 2pm"); see factRules, in English, German, Spanish
//     and French) also forms a short fact memory; a newer fact of the same subject and
//     attribute supersedes the older at the newer's event time, one that
//     is not newer is a conflict, the same value merges. The turn that
//     stated the replaced fact stays, marked so that retrieval ranks it
//     lower for a question about that attribute, from the time it was
//     replaced (engram.MetaStaleSince);
//   - stopping something ends the held facts that name it, a job of title
//     and employer forms both facts, a more exact value refines, and a new
//     home refines, supersedes or stands beside the held one (see
//     consolidation.change and consolidation.stops, in Chinese too);
//   - a first-person plan (a trip, a move, a new job) forms a plan fact
//     that a later change or cancellation of the same plan supersedes
//     (see plan);
//   - a request to forget ("forget that…", "vergiss, dass…", "olvida
//     que…") soft-deletes the memories that hold what it names and is not
//     itself remembered.
//
// Every operation is recorded under the actor "former:rules".
type Rules struct {
	Former
	// MergeAt is the similarity (see Similarity) from which a turn merges
	// into an earlier memory of the same party; zero never merges.
	MergeAt float64
}

// DefaultMergeAt is the merge threshold measured on LoCoMo conversations
// 0-4 (see README, "Consolidation without an LLM").
const DefaultMergeAt = 0.85

// DefaultRules returns Rules over Default with DefaultMergeAt.
func DefaultRules() Rules { return Rules{Former: Default(), MergeAt: DefaultMergeAt} }

// ActorRules is the actor the versions of Rules' operations name.
const ActorRules = "former:rules"

var _ engram.Former = Rules{}

// Needs implements engram.Former: the turn before a batch (as Former), a
// read view of the scope, and the actor ActorRules.
func (r Rules) Needs() engram.FormNeeds {
	return engram.FormNeeds{Actor: ActorRules, ContinueWithin: r.gap(), ReadsScope: true}
}

// Form implements engram.Former: Former.Form over the turns that are not
// requests to forget, then merges, facts and forgetting against req.View
// as the type's comment says. Without a View it consolidates within the
// batch only. It fails with the View's errors or when ctx is done.
func (r Rules) Form(ctx context.Context, req engram.FormRequest) ([]engram.MemoryOp, error) {
	var asks []request
	var said []engram.Episode
	for _, e := range req.Episodes {
		if text, topic, tag, ok := forgetTopic(lang.Detect(e.Content), e.Content); ok {
			asks = append(asks, request{ep: e, tag: tag, text: text, topic: topic})
		} else {
			said = append(said, e)
		}
	}
	ops, err := r.Former.Form(ctx, engram.FormRequest{Episodes: said, Prev: req.Prev, PrevMemory: req.PrevMemory})
	if err != nil {
		return nil, err
	}
	c := &consolidation{sr: req.View, ops: ops}
	for i := range c.ops {
		if c.ops[i].Op == engram.OpAdd && c.ops[i].Memory.ID == "" {
			c.ops[i].Memory.ID = engram.NewID()
		}
	}
	steps := []func(context.Context) error{
		func(ctx context.Context) error { return c.merge(ctx, r.MergeAt) },
		func(ctx context.Context) error { return c.facts(ctx, said) },
		func(ctx context.Context) error { return c.plans(ctx, said) },
		func(ctx context.Context) error { return c.forget(ctx, asks) },
	}
	for _, step := range steps {
		if err := step(ctx); err != nil {
			return nil, err
		}
	}
	return c.ops, nil
}

// request is an episode that asks to forget something.
type request struct {
	ep    engram.Episode
	tag   string
	text  string   // what it names
	topic []string // the stems of its content words
}

// consolidation is one batch's operations on their way to the engine.
type consolidation struct {
	sr    engram.ScopeReader // nil: the batch alone
	ops   []engram.MemoryOp
	texts map[*engram.Memory]text // the words of memories compared so far
}

// textOf returns the words of m's value, read once.
func (c *consolidation) textOf(m *engram.Memory) text {
	t, ok := c.texts[m]
	if !ok {
		if c.texts == nil {
			c.texts = map[*engram.Memory]text{}
		}
		t = textOf(m.Value)
		c.texts[m] = t
	}
	return t
}

// turnOf reports whether m is the memory of a single turn.
func turnOf(m *engram.Memory) bool {
	return len(m.Sources) == 1 && m.Metadata[engram.MetaGranularity] == nil && m.Metadata[engram.MetaFactAttribute] == nil
}

// partyOf names who said what m was formed from.
func partyOf(m *engram.Memory) string {
	if s := m.Speaker(); s != "" {
		return s
	}
	return m.Role()
}

// merge turns the ADD of a turn that repeats a memory of the same party,
// stored or earlier in the batch, into a MERGE of its source into that
// memory, and relinks the turn's neighbours past it. Every turn's memory
// carries the fingerprint of its words (MetaFingerprint): the stored
// candidates are those with a fingerprint of the batch, read in one
// query, so a batch costs one read however long the scope's history.
func (c *consolidation) merge(ctx context.Context, at float64) error {
	if at <= 0 {
		return nil
	}
	stored, err := c.sameWords(ctx)
	if err != nil {
		return err
	}
	var batch []*engram.Memory
	for i := range c.ops {
		op := &c.ops[i]
		if op.Op != engram.OpAdd || !turnOf(&op.Memory) {
			continue
		}
		m := &op.Memory
		target, sim := c.repeated(m, append(slices.Clone(batch), stored[fingerprint(m.Value)]...), at)
		if target == nil {
			batch = append(batch, m)
			continue
		}
		c.unlink(m)
		*op = engram.MemoryOp{Op: engram.OpMerge, TargetID: target.ID,
			Memory: engram.Memory{Sources: m.Sources},
			Reason: fmt.Sprintf("the same party said it again (similarity %.2f)", sim)}
	}
	return nil
}

// MetaFingerprint is the metadata key of a turn memory's fingerprint: a
// hash of the set of its words, lower case (engram.MetaFingerprint).
const MetaFingerprint = engram.MetaFingerprint

// fingerprint hashes the set of the words of s.
func fingerprint(s string) string {
	ws := slices.Sorted(maps.Keys(wordSet(s)))
	h := fnv.New64a()
	for _, w := range ws {
		h.Write([]byte(w))
		h.Write([]byte{0})
	}
	return strconv.FormatUint(h.Sum64(), 36)
}

// sameWords fingerprints the batch's turn memories and returns the stored
// active memories with one of those fingerprints, by fingerprint.
func (c *consolidation) sameWords(ctx context.Context) (map[string][]*engram.Memory, error) {
	var fps []any
	for i := range c.ops {
		if m := &c.ops[i].Memory; c.ops[i].Op == engram.OpAdd && turnOf(m) {
			fp := fingerprint(m.Value)
			setMeta(m, MetaFingerprint, fp)
			fps = append(fps, fp)
		}
	}
	out := map[string][]*engram.Memory{}
	if c.sr == nil || len(fps) == 0 {
		return out, nil
	}
	ms, _, err := c.sr.ListMemories(ctx, engram.MemoryFilter{Kinds: []engram.Kind{engram.KindEpisodic}, Limit: engram.MaxLimit,
		MetadataIn: map[string][]any{MetaFingerprint: fps}})
	if err != nil {
		return nil, err
	}
	for i := range ms {
		fp, _ := ms[i].Metadata[MetaFingerprint].(string)
		out[fp] = append(out[fp], &ms[i])
	}
	return out, nil
}

// repeated returns the memory of m's party among cands most similar to m,
// if that is at least at.
func (c *consolidation) repeated(m *engram.Memory, cands []*engram.Memory, at float64) (*engram.Memory, float64) {
	var best *engram.Memory
	bestSim := 0.0
	mt := c.textOf(m)
	for _, o := range cands {
		// A turn is an event of its session: it merges into a memory of
		// the same session only, which reads of that session find.
		if o.Namespace != m.Namespace || o.Metadata[engram.MetaGranularity] != nil || o.Metadata[engram.MetaFactAttribute] != nil || partyOf(o) != partyOf(m) {
			continue
		}
		if s := mt.similarity(c.textOf(o), at); s >= at && s > bestSim {
			best, bestSim = o, s
		}
	}
	return best, bestSim
}

// unlink makes the neighbours of m, whose ADD becomes a merge, link past
// it.
func (c *consolidation) unlink(m *engram.Memory) {
	prev, next := m.Metadata[engram.MetaPrev], m.Metadata[engram.MetaNext]
	for i := range c.ops {
		md := c.ops[i].Memory.Metadata
		for _, l := range []struct {
			key string
			to  any
		}{{engram.MetaNext, next}, {engram.MetaPrev, prev}} {
			if md[l.key] != m.ID {
				continue
			}
			if l.to == nil {
				delete(md, l.key)
			} else {
				md[l.key] = l.to
			}
		}
	}
}

// Similarity is how near two texts are, 0 to 1: the lesser of the Jaccard
// overlap of their word sets (lexical) and the cosine of their character
// trigram counts (which, like a dense embedding, forgives inflections and
// typos). A repeat scores 1.
func Similarity(a, b string) float64 { return textOf(a).similarity(textOf(b), 0) }

// text is a text's words, for Similarity.
type text struct {
	s     string
	words map[string]bool
}

func textOf(s string) text { return text{s, wordSet(s)} }

// similarity is Similarity, or just the lexical part when that is below
// enough.
func (a text) similarity(b text, enough float64) float64 {
	j := jaccard(a.words, b.words)
	if j == 0 || j < enough {
		return j
	}
	return min(j, cosine(trigrams(a.s), trigrams(b.s)))
}

func wordSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range lang.Words(strings.ToLower(s)) {
		m[w] = true
	}
	return m
}

func jaccard(a, b map[string]bool) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 1
	}
	n := 0
	for w := range a {
		if b[w] {
			n++
		}
	}
	return float64(n) / float64(len(a)+len(b)-n)
}

func trigrams(s string) map[string]float64 {
	r := []rune(" " + strings.Join(lang.Words(strings.ToLower(s)), " ") + " ")
	m := map[string]float64{}
	for i := 0; i+3 <= len(r); i++ {
		m[string(r[i:i+3])]++
	}
	return m
}

func cosine(a, b map[string]float64) float64 {
	var dot, na, nb float64
	for k, x := range a {
		dot += x * b[k]
		na += x * x
	}
	for _, y := range b {
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / (math.Sqrt(na) * math.Sqrt(nb))
}
