package retrieval

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/textsearch"
)

// Channels: the retrieval channels that find candidates, and the signals
// the reranker reports per hit.
const (
	ChannelBM25     = "bm25"     // full text over value, abstraction and cues
	ChannelDense    = "dense"    // embeddings of abstraction and value
	ChannelTemporal = "temporal" // memories whose time falls in the period the query names
	ChannelNeighbor = "neighbor" // the turns next to a strong hit
)

// Factors reported per hit when a search explains itself.
const (
	FactorFused      = "fused"      // the fusion of the channels' scores
	FactorSpeaker    = "speaker"    // said by a person the query names
	FactorRole       = "role"       // said by the party the query asks about
	FactorTime       = "time"       // carries a date, for a question about time
	FactorPeriod     = "period"     // happened in the period the query names
	FactorAnswer     = "answer"     // holds the kind of answer asked for (a place, a number, a name)
	FactorStale      = "stale"      // states a fact a newer memory replaced, and the query asks about it
	FactorRelevance  = "relevance"  // the boosted fused score relative to the best candidate's
	FactorRecency    = "recency"    // MIRaS: how recent
	FactorImportance = "importance" // MIRaS: how important
	FactorConfidence = "confidence" // MIRaS: how sure
	FactorAccess     = "access"     // how often it was read lately
	FactorFinal      = "score"      // the score hits are ranked by
	FactorSpread     = "spread"     // the share of the score Spread weighed a hit by when it placed it
)

// Config weighs the pipeline's parts. DefaultConfig holds the values the
// evaluation harness settled on; a zero weight turns a part off.
type Config struct {
	// Weights weighs each channel in fusion; a channel without weight does
	// not run unless a search names it.
	Weights map[string]float64
	// RRFK damps reciprocal rank fusion, which plain searches use: rank r
	// of a channel adds Weights[channel]/(RRFK+r).
	RRFK float64
	// Pool is how many candidates each channel contributes at least.
	Pool int
	// Raw gives the channels the query as typed: no question words
	// stripped for the embedding, no terms changed for the full text.
	Raw bool
	// Inflect adds regular English inflections of the query's terms to the
	// full-text query; DropSpeakers leaves out of it the names of speakers
	// the dense channel's candidates have (see Query.Lexical).
	Inflect, DropSpeakers bool
	// ZFusion fuses standardised channel scores (z-scores) instead of
	// ranks, and scores relative to each channel's best where the pool is
	// too small for z-scores (see Fuse).
	ZFusion bool
	// Smooth adds this share of the linked neighbours' fused scores.
	Smooth float64
	// Scene adds this share of the best fused score among the other
	// candidates of the same conversation (engram.Memory.Conversation): a
	// line from an exchange that is about the question is likelier
	// relevant than the same line in passing.
	Scene float64
	// Collapse gives each source turn one place: a hit that repeats a
	// turn of a higher hit collapses into it (see Collapse).
	Collapse bool

	// Multiplicative boosts of the fused score (score *= 1+boost).
	Speaker float64 // the memory's speaker is named in the query
	Role    float64 // the memory's role is the party the query asks about
	Time    float64 // temporal question and the memory carries a date
	Period  float64 // the memory's time overlaps the query's period
	Answer  float64 // the memory holds the kind of answer the question wants
	// Stale, negative, lowers a memory that states a fact a newer memory
	// replaced, for a query with a word of that fact's attribute
	// (engram.Memory.StaleTerms): the current member of the pair ranks
	// first, while as-of and other questions still find the old one. A
	// search as of AsOf lowers only the memories replaced by then.
	Stale float64
	// AsOf is the event time a search reads as of (the filter's
	// ValidAt); nil reads what is current.
	AsOf *time.Time

	// MIRaS signals, added to the relevance (the boosted fused score over
	// the best candidate's, so at most 1): Recency·2^(-age/RecencyHalfLife)
	// with age counted from valid_from, else created_at;
	// Importance·(importance−0.5); Confidence·(confidence−1). Small
	// weights let them reorder near-ties only: nothing overturns what the
	// channels agree on by more than their sum.
	Recency         float64
	RecencyHalfLife time.Duration
	Importance      float64
	Confidence      float64
	// Access adds Access·(1−2^(−f)), where f is the memory's access count
	// decayed by half every AccessHalfLife since its last access, aged in
	// whole days: a memory read often and lately ranks above an equal one nobody reads. The
	// count is the memory's own, kept in its tenant's rows, so one
	// tenant's reads never move another's scores. Clock is the time
	// accesses are aged at (the clock, not the query's reference time);
	// zero means now.
	Access         float64
	AccessHalfLife time.Duration
	Clock          time.Time

	// Spread lowers a candidate's score by this share for every candidate
	// of its conversation already ranked above it when the first
	// SpreadDepth places are filled from the first SpreadPool, for
	// questions that gather their answer from several occasions, so one
	// conversation cannot fill the top hits. 0 is off.
	Spread      float64
	SpreadDepth int
	SpreadPool  int

	// Current is how many of the first candidates Current orders by when
	// their states of one changing thing became true; 0 is off.
	Current int
}

// DefaultConfig returns the defaults tuned with the evaluation harness (see
// docs/retrieval-tuning.md for what helped and what did not).
func DefaultConfig() Config {
	return Config{
		RRFK:            20,
		ZFusion:         true,
		Weights:         map[string]float64{ChannelBM25: 1.5, ChannelDense: 1, ChannelTemporal: 0.5, ChannelGraph: 1, ChannelIdentity: 1, ChannelThesaurus: 0.3},
		Pool:            100,
		Inflect:         true,
		DropSpeakers:    true,
		Speaker:         1,
		Role:            1,
		Time:            0.5,
		Period:          1,
		Smooth:          0.2,
		Scene:           0.3,
		Answer:          0.5,
		Stale:           -0.6,
		Collapse:        true,
		Recency:         0.1,
		RecencyHalfLife: 90 * 24 * time.Hour,
		Importance:      0.1,
		Confidence:      0.1,
		Access:          0.02,
		AccessHalfLife:  30 * 24 * time.Hour,
		Spread:          1,
		SpreadDepth:     5,
		SpreadPool:      50,
		Current:         50,
	}
}

// Plain returns c with query processing and reranking off: channels see
// the query as typed (Raw), ranks are fused by RRF alone. A search that
// names its channels uses it, so a channel's own ranking can be measured
// and inspected.
func (c Config) Plain() Config {
	return Config{RRFK: c.RRFK, Weights: c.Weights, Pool: c.Pool, Raw: true}
}

// Candidate is one memory a channel found, with what the pipeline learned
// about it.
type Candidate struct {
	Memory  *engram.Memory      // shared with the gathering's reads; never changed
	Ranks   []engram.ChannelHit // one per channel that found it
	Fused   float64
	Score   float64
	Factors map[string]float64

	trust map[string]float64 // the share of a channel's weight it keeps; absent is 1
	lift  float64            // the found credits a channel's best find gets above its z-score (see zFuse)
}

// weight is the weight of channel ch's verdict on c.
func (c *Candidate) weight(cfg Config, ch string) float64 {
	w := cfg.Weights[ch]
	if t, ok := c.trust[ch]; ok {
		w *= t
	}
	return w
}

// Fuse sets every candidate's Fused score from its channels' verdicts,
// each weighted (Config.Weights): with ZFusion, by weighted z-scores of
// the channel scores (see zFuse) when a channel found enough candidates
// for them, else by scores relative to each channel's best (see
// ratioFuse); without, by reciprocal rank fusion. Then it adds the
// neighbour and conversation shares (Smooth, Scene), except in a small
// pool, where a share of a neighbour's score would outweigh the channels'
// own verdict, and last the lift of z-score fusion's found credits, which
// neighbours do not share.
func Fuse(cs []*Candidate, cfg Config) {
	for _, c := range cs {
		c.lift = 0
	}
	switch {
	case !cfg.ZFusion:
		for _, c := range cs {
			c.Fused = 0
			for _, r := range c.Ranks {
				c.Fused += c.weight(cfg, r.Channel) / (cfg.RRFK + float64(r.Rank))
			}
		}
	case zPool(cs):
		zFuse(cs, cfg)
	default:
		ratioFuse(cs, cfg)
		return
	}
	if cfg.Smooth > 0 {
		smooth(cs, cfg.Smooth)
	}
	if cfg.Scene > 0 {
		scene(cs, cfg.Scene)
	}
	// A find's lift marks the memory that holds what the channel found
	// alone or best; its neighbours and conversation share in how the
	// channels scored it, not in that mark.
	for _, c := range cs {
		c.Fused += c.lift
	}
}

// ratioFuse sums each channel's scores relative to its best (negative
// scores count as zero), weighted. Unlike ranks, which put the second of
// three candidates almost level with the first, the ratios keep how far
// apart the channel scored them.
func ratioFuse(cs []*Candidate, cfg Config) {
	best := map[string]float64{}
	for _, c := range cs {
		for _, r := range c.Ranks {
			best[r.Channel] = math.Max(best[r.Channel], r.Score)
		}
	}
	for _, c := range cs {
		c.Fused = 1e-3
		for _, r := range c.Ranks {
			if b := best[r.Channel]; b > 0 && r.Score > 0 {
				c.Fused += c.weight(cfg, r.Channel) * r.Score / b
			}
		}
	}
}

// scene adds to each candidate share times the best fused score of the
// other candidates of its conversation.
func scene(cs []*Candidate, share float64) {
	type best2 struct{ a, b float64 } // the two best fused scores
	by := map[string]*best2{}
	keys := make([]string, len(cs))
	for i, c := range cs {
		k := c.Memory.Conversation()
		keys[i] = k
		if k == "" {
			continue
		}
		b := by[k]
		if b == nil {
			b = &best2{}
			by[k] = b
		}
		switch {
		case c.Fused > b.a:
			b.a, b.b = c.Fused, b.a
		case c.Fused > b.b:
			b.b = c.Fused
		}
	}
	for i, c := range cs {
		b := by[keys[i]]
		if b == nil {
			continue
		}
		other := b.a
		if c.Fused == b.a {
			other = b.b // its own score is the best: take the runner-up
		}
		c.Fused += share * other
	}
}

// MinZPool is the fewest candidates a channel must have found for
// z-score fusion: below it a standard deviation says little (two
// candidates are always one deviation from their mean, however close their
// scores), so fusion falls back to ranks.
const MinZPool = 10

// zPool reports whether some channel found at least MinZPool candidates.
func zPool(cs []*Candidate) bool {
	n := map[string]int{}
	for _, c := range cs {
		for _, r := range c.Ranks {
			if n[r.Channel]++; n[r.Channel] >= MinZPool {
				return true
			}
		}
	}
	return false
}

// smooth adds to each candidate share times the fused scores of its linked
// neighbours among the candidates: a line in the middle of a relevant
// exchange is likelier relevant than the same line alone.
func smooth(cs []*Candidate, share float64) {
	byID := make(map[string]float64, len(cs))
	for _, c := range cs {
		byID[c.Memory.ID] = c.Fused
	}
	for _, c := range cs {
		for _, id := range c.Memory.Neighbours() {
			c.Fused += share * byID[id]
		}
	}
}

// Rerank scores fused candidates and sorts them best first (ties by memory
// id, for stable rankings): the query's hints boost the fused score (see
// boost), the result is taken relative to the best candidate's, and the
// MIRaS signals are added with their small weights (see miras), recency
// left out for a question about time. now is the reference time for
// recency.
func Rerank(q *Query, cs []*Candidate, cfg Config, now time.Time) {
	names := nameKeys(q.Names)
	best := 0.0
	for _, c := range cs {
		c.Factors = make(map[string]float64, 8) // room for every factor: no growing
		c.Factors[FactorFused] = c.Fused
		c.Score = boost(q, names, c, cfg)
	}
	yieldStale(q, cs, cfg)
	for _, c := range cs {
		best = math.Max(best, c.Score)
	}
	// How recent a memory is says nothing of whether it answers a
	// question about when something happened or about a named period.
	mirasCfg := cfg
	if q.Temporal {
		mirasCfg.Recency = 0
	}
	for _, c := range cs {
		rel := 0.0
		if best > 0 {
			rel = c.Score / best
		}
		c.Factors[FactorRelevance] = rel
		c.Score = rel + miras(c.Memory, c.Factors, mirasCfg, now)
		c.Factors[FactorFinal] = c.Score
	}
	slices.SortStableFunc(cs, byScore)
}

// byScore orders candidates by score, best first. Equal scores are broken
// by content, never by chance: the memory true since later first, then
// its value and abstraction, and the id only between memories that agree
// on all of these, so a ranking does not depend on the ids a run drew.
func byScore(a, b *Candidate) int {
	return cmp.Or(
		cmp.Compare(b.Score, a.Score),
		since(b.Memory).Compare(since(a.Memory)),
		strings.Compare(a.Memory.Value, b.Memory.Value),
		strings.Compare(a.Memory.Abstraction, b.Memory.Abstraction),
		strings.Compare(a.Memory.ID, b.Memory.ID),
	)
}

// since is when m became true, else when it was stored.
func since(m *engram.Memory) time.Time {
	if m.ValidFrom != nil {
		return *m.ValidFrom
	}
	return m.CreatedAt
}

// boost returns c's fused score multiplied by 1+w for every hint of the
// query the memory meets, recording each in c.Factors.
func boost(q *Query, names []string, c *Candidate, cfg Config) float64 {
	m := c.Memory
	s := c.Fused
	apply := func(name string, w float64, on bool) {
		if on && w != 0 {
			s *= 1 + w
			c.Factors[name] = w
		}
	}
	speaker, role := m.Speaker(), m.Role()
	apply(FactorSpeaker, cfg.Speaker, speaker != "" && len(names) > 0 && matchesName(speaker, names))
	apply(FactorRole, cfg.Role, (q.AsksAssistant && role == "assistant") || (q.AsksUser && role == "user"))
	apply(FactorTime, cfg.Time, q.Temporal && m.Dated())
	apply(FactorPeriod, cfg.Period, InPeriod(q, m))
	apply(FactorAnswer, cfg.Answer, q.Answer != "" && holdsAnswer(q.Answer, m, speaker))
	// A question about an earlier state asks for what was replaced.
	apply(FactorStale, cfg.Stale, q.Tense != TensePast && asksStale(q, m, cfg.AsOf))
	return s
}

// miras returns the weighted sum of the MIRaS signals of m (see Config),
// recording each in f.
func miras(m *engram.Memory, f map[string]float64, cfg Config, now time.Time) float64 {
	sum := 0.0
	add := func(name string, v float64) {
		if v != 0 {
			f[name] = v
			sum += v
		}
	}
	// Age runs from when the memory became true, else from when it was
	// stored: a fact added without a date is as new as its write.
	from := since(m)
	if cfg.Recency != 0 && !from.IsZero() && cfg.RecencyHalfLife > 0 {
		age := max(now.Sub(from), 0)
		add(FactorRecency, cfg.Recency*math.Exp2(-float64(age)/float64(cfg.RecencyHalfLife)))
	}
	add(FactorImportance, cfg.Importance*(m.Importance-0.5))
	add(FactorConfidence, cfg.Confidence*(m.Confidence-1))
	add(FactorAccess, cfg.Access*accessed(m, cfg))
	return sum
}

// accessAgeStep is the unit accesses are aged in.
const accessAgeStep = 24 * time.Hour

// accessed returns 1−2^(−f) for the memory's access count f decayed by
// half every AccessHalfLife since its last access: 0 for a memory never
// read, 0.5 for one read once just now, near 1 for one read often lately.
func accessed(m *engram.Memory, cfg Config) float64 {
	if cfg.Access == 0 || cfg.AccessHalfLife <= 0 || m.AccessCount <= 0 || m.LastAccessed == nil {
		return 0
	}
	clock := cfg.Clock
	if clock.IsZero() {
		clock = time.Now()
	}
	// Age counts in whole days: reads of the same day weigh the same, so
	// two memories read as often rank the same way whenever, within the
	// day, the question comes (a ranking does not flicker with the
	// seconds between reads).
	age := max(clock.Sub(*m.LastAccessed), 0).Truncate(accessAgeStep)
	f := float64(m.AccessCount) * math.Exp2(-float64(age)/float64(cfg.AccessHalfLife))
	return 1 - math.Exp2(-f)
}

func nameKeys(names []string) []string {
	var out []string
	for _, n := range names {
		out = append(out, strings.ToLower(strings.TrimSuffix(strings.TrimSuffix(n, "'s"), "’s")))
	}
	return out
}

// matchesName reports whether a speaker is one of the names: the whole
// name or its first word ("Caroline" names "Caroline Smith").
func matchesName(speaker string, names []string) bool {
	sp := strings.ToLower(speaker)
	first := sp
	if i := strings.IndexByte(sp, ' '); i > 0 {
		first = sp[:i]
	}
	for _, n := range names {
		if n == sp || n == first {
			return true
		}
	}
	return false
}

// InPeriod reports whether the memory's time meets a period or month the
// query names: the event period the formation resolved from its text, or
// the day it became valid (for an episode, the day it was said).
func InPeriod(q *Query, m *engram.Memory) bool {
	if len(q.Periods) == 0 && len(q.Months) == 0 {
		return false
	}
	for _, span := range memorySpans(m) {
		from, to := span[0], span[1]
		for _, p := range q.Periods {
			if from.Before(p.To) && to.After(p.From) {
				return true
			}
		}
		for _, mo := range q.Months {
			for t := from; t.Before(to); t = t.AddDate(0, 1, 0) {
				if t.Month() == mo {
					return true
				}
			}
			if to.AddDate(0, 0, -1).Month() == mo {
				return true
			}
		}
	}
	return false
}

// memorySpans returns the periods a memory is about: the event period the
// formation resolved from its text, and the day it became valid.
func memorySpans(m *engram.Memory) [][2]time.Time {
	var out [][2]time.Time
	if f, t, ok := m.EventPeriod(); ok {
		out = append(out, [2]time.Time{f, t})
	}
	if m.ValidFrom != nil {
		d := m.ValidFrom.UTC().Truncate(24 * time.Hour)
		out = append(out, [2]time.Time{d, d.AddDate(0, 0, 1)})
	}
	return out
}

// holdsAnswer reports whether a memory holds the kind of answer asked for:
// a name other than its speaker's for a place, person or name; a number
// for a count.
func holdsAnswer(kind string, m *engram.Memory, speaker string) bool {
	if kind == AnswerCount {
		for _, w := range strings.FieldsFunc(strings.ToLower(m.Value), textsearch.IsSeparator) {
			if numberWord[w] || w[0] >= '0' && w[0] <= '9' {
				return true
			}
		}
		return false
	}
	for _, c := range m.Cues {
		if c == speaker || strings.ContainsAny(c, "0123456789\n") || len(c) > 60 {
			continue // the speaker, a date label, or context
		}
		return true
	}
	return false
}

var numberWord = map[string]bool{"one": true, "two": true, "three": true, "four": true, "five": true, "six": true,
	"seven": true, "eight": true, "nine": true, "ten": true, "eleven": true, "twelve": true, "twenty": true,
	"thirty": true, "hundred": true, "thousand": true, "dozen": true, "couple": true, "few": true, "several": true,
	"once": true, "twice": true}
