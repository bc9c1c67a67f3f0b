package formation

import (
	"context"
	"maps"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/lang"
)

// MaxAbstraction is the longest abstraction the Former writes, in bytes.
const MaxAbstraction = 320

// Former is the rule-based former: each episode becomes one episodic
// memory that cites it, valid from the episode's event time, whose value is
// the episode's content verbatim and whose abstraction, cues and metadata
// carry its speaker, the absolute dates of its relative time expressions
// and its names (see the package comment). It never fails, never looks at
// existing memories, and forms the same memories from the same episodes.
type Former struct {
	// Context is how many bytes of the turn before an episode (its
	// speaker and first sentences) are indexed in the episode's
	// abstraction, so that an answer ("Adoption agencies!") is found by
	// the words of the question it answers. Only a turn of another party
	// (speaker, else role) counts. Zero indexes none.
	Context int
	// After is how many bytes of the turn after an episode are indexed in
	// its abstraction, so that a question ("What's your favourite game?")
	// is found by the words of its answer. Zero indexes none.
	After int
	// ContextInCues indexes that context as cues instead of in the
	// abstraction, so it reaches the full-text index but not the
	// abstraction's embedding.
	ContextInCues bool
	// Link gives the memories of one batch their ids up front and records
	// in each memory's metadata the ids of the memories formed from the
	// episodes just before and after it in event time (engram.MetaPrev,
	// engram.MetaNext), so retrieval can expand a hit to its neighbours.
	Link bool
	// Scene, when above one, also forms scene memories: runs of up to
	// Scene consecutive turns of one conversation (and at most SceneBytes
	// of text), each citing all its episodes, whose value is the turns as
	// "speaker: text" lines. Scenes do not overlap.
	Scene      int
	SceneBytes int
	// NoTurns leaves out the memory of each single turn (with Scene set,
	// only scenes are formed).
	NoTurns bool
	// Gap is the longest pause between two episodes of one conversation;
	// a longer one starts a new conversation, whose first turn gets no
	// context and no link back. Zero means DefaultGap.
	Gap time.Duration
}

// Default returns the Former with the settings the evaluation harness
// settled on: 300 bytes of the turn before and 200 of the turn after as
// context, neighbours linked.
func Default() Former { return Former{Context: 300, After: 200, Link: true} }

// DefaultGap is the pause that ends a conversation when Former.Gap is zero.
const DefaultGap = 2 * time.Hour

var _ engram.Former = Former{}

// Needs implements engram.Former: the turn before a batch, within the
// conversation gap; no read view and no actor of its own.
func (f Former) Needs() engram.FormNeeds { return engram.FormNeeds{ContinueWithin: f.gap()} }

// Form implements engram.Former. When req.Prev lies at most the gap before
// the first episode, that first episode continues Prev's conversation: it
// gets Prev's turn as context (if another party said it) and, with Link,
// req.PrevMemory's conversation and a link back to it; and the ops begin
// with an UPDATE of PrevMemory that gives it the first episode as context
// after it and, with Link, a link to it, as one batch of both would have
// (none when PrevMemory already links onward, or with NoTurns). It fails
// only when ctx is done.
func (f Former) Form(ctx context.Context, req engram.FormRequest) ([]engram.MemoryOp, error) {
	eps := req.Episodes
	tags, known := readLanguages(eps)
	order := eventOrder(eps)
	gap := f.gap()
	mems, err := f.turns(ctx, eps, tags, known)
	if err != nil {
		return nil, err
	}
	var tail []engram.MemoryOp // the update of PrevMemory, if any
	if len(order) > 0 {
		tail = f.continueFrom(req.Prev, req.PrevMemory, &eps[order[0]], &mems[order[0]], gap)
	}
	f.linkNeighbours(eps, order, mems, gap)
	return f.ops(tail, eps, order, mems, gap), nil
}

// gap is the pause that ends a conversation.
func (f Former) gap() time.Duration {
	if f.Gap <= 0 {
		return DefaultGap
	}
	return f.Gap
}

// readLanguages detects each episode's language (a batch may mix them) and
// collects the name keys known from the contents and the speakers.
func readLanguages(eps []engram.Episode) ([]string, map[string]bool) {
	tags := make([]string, len(eps))
	known := map[string]bool{}
	for i := range eps {
		tags[i] = lang.Detect(eps[i].Content)
		maps.Copy(known, lang.NameKeys(tags[i], eps[i].Content))
	}
	for i := range eps {
		if s := eps[i].Speaker; s != "" {
			for _, w := range lang.Words(s) {
				known[lang.NameKey(w)] = true
			}
		}
	}
	return tags, known
}

// eventOrder returns the indexes of eps in event time; ties keep the batch
// order.
func eventOrder(eps []engram.Episode) []int {
	order := make([]int, len(eps))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return eps[order[a]].OccurredAt.Before(eps[order[b]].OccurredAt) })
	return order
}

// turns forms each episode's own memory, with an id up front under Link;
// it stops with ctx's error once ctx is done.
func (f Former) turns(ctx context.Context, eps []engram.Episode, tags []string, known map[string]bool) ([]engram.Memory, error) {
	mems := make([]engram.Memory, len(eps))
	for i := range eps {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		mems[i] = f.turn(&eps[i], tags[i], known)
		if f.Link {
			mems[i].ID = engram.NewID()
		}
	}
	return mems, nil
}

// continueFrom joins first, the earliest episode of the batch, and its
// memory m to prev's conversation when it lies at most gap after prev, and
// returns the update of prevMem that this calls for, if any. Under Link it
// also records m's conversation.
func (f Former) continueFrom(prev *engram.Episode, prevMem *engram.Memory, first *engram.Episode, m *engram.Memory, gap time.Duration) []engram.MemoryOp {
	var tail []engram.MemoryOp
	conv := m.ID
	if prev != nil && !first.OccurredAt.Before(prev.OccurredAt) && first.OccurredAt.Sub(prev.OccurredAt) <= gap {
		if exchange(prev, first) && f.Context > 0 {
			f.addContext(m, Abstract(prev.Speaker, prev.Content, f.Context))
		}
		if prevMem != nil && f.Link {
			setMeta(m, engram.MetaPrev, prevMem.ID)
			conv = prevMem.ID
			if c, _ := prevMem.Metadata[engram.MetaConversation].(string); c != "" {
				conv = c
			}
		}
		if op, ok := f.continued(prev, prevMem, first, m); ok {
			tail = append(tail, op)
		}
	}
	if f.Link {
		setMeta(m, engram.MetaConversation, conv)
	}
	return tail
}

// linkNeighbours walks the memories in event time: a pause over gap starts
// a new conversation; within one, each exchange gives both turns context
// from the other and, under Link, neighbours link to each other.
func (f Former) linkNeighbours(eps []engram.Episode, order []int, mems []engram.Memory, gap time.Duration) {
	for j := 1; j < len(order); j++ {
		a, b := order[j-1], order[j]
		if eps[b].OccurredAt.Sub(eps[a].OccurredAt) > gap {
			if f.Link {
				setMeta(&mems[b], engram.MetaConversation, mems[b].ID)
			}
			continue
		}
		if f.Link {
			setMeta(&mems[b], engram.MetaConversation, mems[a].Metadata[engram.MetaConversation])
		}
		// Context comes from the other party of an exchange: a question
		// and its answer explain each other, while a run of one person's
		// messages needs no help from itself.
		if exchange(&eps[a], &eps[b]) {
			if f.Context > 0 {
				f.addContext(&mems[b], Abstract(eps[a].Speaker, eps[a].Content, f.Context))
			}
			if f.After > 0 {
				f.addContext(&mems[a], Abstract(eps[b].Speaker, eps[b].Content, f.After))
			}
		}
		if f.Link {
			setMeta(&mems[a], engram.MetaNext, mems[b].ID)
			setMeta(&mems[b], engram.MetaPrev, mems[a].ID)
		}
	}
}

// ops returns tail, then an ADD of each turn's memory (unless NoTurns),
// then an ADD of each scene worth storing (with Scene over one).
func (f Former) ops(tail []engram.MemoryOp, eps []engram.Episode, order []int, mems []engram.Memory, gap time.Duration) []engram.MemoryOp {
	ops := tail
	if !f.NoTurns {
		for i := range mems {
			ops = append(ops, engram.MemoryOp{Op: engram.OpAdd, Memory: mems[i], Reason: "formed from episode"})
		}
	}
	if f.Scene > 1 {
		for _, sc := range f.scenes(eps, order, gap) {
			if len(sc) < 2 && !f.NoTurns {
				continue // the turn's own memory says it all
			}
			m := f.scene(eps, sc, mems)
			if len(m.Value) > engram.MaxContentBytes {
				continue // too long to store; its turns are stored one by one
			}
			ops = append(ops, engram.MemoryOp{Op: engram.OpAdd, Memory: m, Reason: "formed from a scene of episodes"})
		}
	}
	return ops
}

// scenes cuts the episodes, in event-time order, into runs of at most
// f.Scene turns and f.SceneBytes bytes that do not cross a pause longer
// than gap.
func (f Former) scenes(eps []engram.Episode, order []int, gap time.Duration) [][]int {
	maxBytes := f.SceneBytes
	if maxBytes <= 0 {
		maxBytes = engram.MaxContentBytes / 2
	}
	var out [][]int
	var cur []int
	size := 0
	for j, i := range order {
		n := len(eps[i].Content) + len(eps[i].Speaker) + 3
		if len(cur) > 0 && (len(cur) >= f.Scene || size+n > maxBytes || eps[i].OccurredAt.Sub(eps[order[j-1]].OccurredAt) > gap) {
			out = append(out, cur)
			cur, size = nil, 0
		}
		cur = append(cur, i)
		size += n
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// scene forms the memory of a run of turns from their turn memories.
func (Former) scene(eps []engram.Episode, run []int, mems []engram.Memory) engram.Memory {
	first := &eps[run[0]]
	at := first.OccurredAt
	var value, abs strings.Builder
	var cues []string
	m := engram.Memory{Namespace: first.Namespace, Kind: engram.KindEpisodic, ValidFrom: &at,
		Metadata: map[string]any{engram.MetaGranularity: engram.GranularityScene}}
	for k, i := range run {
		e := &eps[i]
		if k > 0 {
			value.WriteByte('\n')
			abs.WriteByte('\n')
		}
		if e.Speaker != "" {
			value.WriteString(e.Speaker + ": ")
		} else if e.Role != "" {
			value.WriteString(e.Role + ": ")
		}
		value.WriteString(e.Content)
		abs.WriteString(Abstract(e.Speaker, lang.Annotate(e.Content, lang.ResolveLang(mems[i].Language, e.Content, e.OccurredAt)), MaxAbstraction/2))
		cues = append(cues, mems[i].Cues...)
		m.Sources = append(m.Sources, e.ID)
		if _, ok := m.Metadata[engram.MetaEventFrom]; !ok {
			if v, ok := mems[i].Metadata[engram.MetaEventFrom]; ok {
				m.Metadata[engram.MetaEventFrom] = v
				m.Metadata[engram.MetaEventTo] = mems[i].Metadata[engram.MetaEventTo]
			}
		}
	}
	m.Value = value.String()
	m.Abstraction = clip(abs.String(), engram.MaxShortBytes)
	m.Language = lang.Detect(m.Value)
	seen := map[string]bool{}
	for _, c := range cues {
		if k := strings.ToLower(c); !seen[k] && len(m.Cues) < engram.MaxCues {
			seen[k] = true
			m.Cues = append(m.Cues, c)
		}
	}
	return m
}

// exchange reports whether two known parties, not one, said a and b.
func exchange(a, b *engram.Episode) bool {
	pa, pb := party(a), party(b)
	return pa != pb && pa != "" && pb != ""
}

// party names who said an episode: its speaker, else its role.
func party(e *engram.Episode) string {
	if e.Speaker != "" {
		return e.Speaker
	}
	return e.Role
}

// addContext indexes a neighbouring turn's text with m.
func (f Former) addContext(m *engram.Memory, text string) {
	if f.ContextInCues {
		if len(m.Cues) < engram.MaxCues && len(text) <= engram.MaxShortBytes {
			m.Cues = append(m.Cues, text)
		}
		return
	}
	if abs := m.Abstraction + "\n" + text; len(abs) <= engram.MaxShortBytes {
		m.Abstraction = abs
	}
}

func setMeta(m *engram.Memory, k string, v any) {
	if m.Metadata == nil {
		m.Metadata = map[string]any{}
	}
	m.Metadata[k] = v
}

// turn forms the memory of one episode, whose text is in language tag.
func (Former) turn(e *engram.Episode, tag string, known map[string]bool) engram.Memory {
	at := e.OccurredAt
	ms, every := lang.ScanLang(tag, e.Content, at)
	m := engram.Memory{
		Namespace:   e.Namespace,
		Kind:        engram.KindEpisodic,
		Abstraction: Abstract(e.Speaker, lang.Annotate(e.Content, ms), MaxAbstraction),
		Value:       e.Content,
		Language:    tag,
		ValidFrom:   &at,
		Sources:     []string{e.ID},
		Cues:        Cues(tag, e.Speaker, e.Content, withRecurring(ms, every), known),
	}
	meta := map[string]any{}
	if e.Role != "" {
		meta[engram.MetaRole] = e.Role
	}
	if e.Speaker != "" {
		meta[engram.MetaSpeaker] = e.Speaker
	}
	if len(ms) > 0 {
		meta[engram.MetaEventFrom] = ms[0].From.Format(time.DateOnly)
		meta[engram.MetaEventTo] = ms[0].To.Format(time.DateOnly)
	}
	if r := recurrence(every); r != "" {
		meta[MetaRecurring] = r
	}
	if len(meta) > 0 {
		m.Metadata = meta
	}
	return m
}

// Cues returns the anchors of one text in language tag: its speaker, the
// names (see lang.Names) and quoted titles in it, and the labels of its
// dates, each once, at most engram.MaxCues of them.
func Cues(tag, speaker, text string, ms []lang.Mention, known map[string]bool) []string {
	var out []string
	seen := map[string]bool{}
	add := func(c string) {
		c = strings.TrimSpace(c)
		if c == "" || len(c) > engram.MaxShortBytes || len(out) >= engram.MaxCues {
			return
		}
		if k := strings.ToLower(c); !seen[k] {
			seen[k] = true
			out = append(out, c)
		}
	}
	add(speaker)
	for _, n := range lang.Names(tag, text, known) {
		add(n)
	}
	for _, t := range Titles(text) {
		add(t)
	}
	for _, m := range ms {
		add(m.Label())
	}
	return out
}

// Abstract returns the short primary abstraction of a text: its speaker
// and its first sentences, whitespace collapsed, cut at a sentence or word
// boundary to at most max bytes (an ellipsis marks a cut inside a
// sentence).
func Abstract(speaker, text string, max int) string {
	text = strings.Join(strings.Fields(text), " ")
	prefix := ""
	if speaker != "" {
		prefix = speaker + ": "
	}
	room := max - len(prefix)
	if room < 16 {
		return clip(prefix+text, max)
	}
	if len(text) <= room {
		return prefix + text
	}
	// The longest run of whole sentences that fits.
	cut := 0
	for i, r := range text {
		if i >= room {
			break
		}
		switch r {
		case '.', '!', '?', '。', '！', '？':
			if n := i + utf8.RuneLen(r); n <= room {
				cut = n
			}
		}
	}
	if cut >= room/3 {
		return prefix + text[:cut]
	}
	return prefix + clip(text, room)
}

// clip cuts s to at most max bytes at a word boundary when there is one in
// the second half, else at a character boundary, and marks the cut with an
// ellipsis (counted in max).
func clip(s string, max int) string {
	if len(s) <= max {
		return s
	}
	const ell = "…"
	cut := max - len(ell)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if sp := strings.LastIndexByte(s[:cut], ' '); sp > cut/2 {
		cut = sp
	}
	return strings.TrimSpace(s[:cut]) + ell
}

// continued returns the update that makes prevMem, the memory of the turn
// before a batch, look like the batch had held it: the next turn (next,
// formed as m) as context after it, if another party said it, and with
// Link a link to m. It returns false when there is nothing to change, or
// when prevMem already links to a turn after it.
func (f Former) continued(prev *engram.Episode, prevMem *engram.Memory, next *engram.Episode, m *engram.Memory) (engram.MemoryOp, bool) {
	if prevMem == nil || prevMem.Metadata[engram.MetaNext] != nil || f.NoTurns {
		return engram.MemoryOp{}, false
	}
	u := *prevMem
	u.Metadata = maps.Clone(prevMem.Metadata)
	changed := false
	if exchange(prev, next) && f.After > 0 {
		f.addContext(&u, Abstract(next.Speaker, next.Content, f.After))
		changed = u.Abstraction != prevMem.Abstraction
	}
	if f.Link {
		setMeta(&u, engram.MetaNext, m.ID)
		changed = true
	}
	return engram.MemoryOp{Op: engram.OpUpdate, TargetID: prevMem.ID, Memory: u, Reason: "the conversation went on"}, changed
}
