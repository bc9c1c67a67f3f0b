package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/sensitive"
)

// Secrets and personal data at the write entry: every text a write brings
// (an episode's content; a memory's value, abstraction and cues) is
// scanned (package sensitive) before anything else sees it, and each
// finding is treated as its tenant's policy says: kept, or replaced by a
// placeholder (see engram.Treatment), its span sealed into the vault as a
// vault memory when the policy seals and the engine has a vault. Formation,
// the LLM former, the full-text index, embeddings, exports and the
// dashboard therefore only ever see the placeholder.

// AuditSensitive is the op of the audit entry a write that sealed or
// redacted findings writes: the records' ids and the counts by kind,
// never a value.
const AuditSensitive = "sensitive"

// MetaSealedFrom and MetaSealedField are the metadata of a sealed span's
// vault memory (sealed with it): the id of the episode or memory it was
// taken from, and the field. MetaPlaceholder is the placeholder that
// stands for it there.
const (
	MetaSealedFrom  = "sealed_from"
	MetaSealedField = "sealed_field"
	MetaPlaceholder = "placeholder"
)

// redactor holds what the write entry needs to treat findings: the
// server's default policy, the store that keeps tenants' settings, and
// whether sealing can be done (the engine has a vault).
type redactor struct {
	def      engram.SensitivePolicy // complete: every group set
	store    engram.Store
	canSeal  bool
	log      *slog.Logger
	detector func(string) []sensitive.Finding
}

// newRedactor returns the write entry's redactor; with detectOff its
// detector finds nothing (Options.DetectOff).
func newRedactor(def engram.SensitivePolicy, store engram.Store, canSeal, detectOff bool, log *slog.Logger) *redactor {
	r := &redactor{def: def.Over(engram.DefaultSensitivePolicy()), store: store, canSeal: canSeal, log: log, detector: detect}
	if detectOff {
		r.detector = detectNothing
	}
	return r
}

// placeholderRE matches a placeholder a write left (see engram.Treatment).
var placeholderRE = regexp.MustCompile(`\[(?:secret|payment|id|contact):[a-z_]+#[0-9]+\]`)

// detect returns the findings of text outside the placeholders it holds,
// so that a text treated once is found clean (a password's placeholder
// after "the password is" is no password).
func detect(text string) []sensitive.Finding {
	fs := sensitive.Detect(text)
	if len(fs) == 0 || !strings.Contains(text, "#") {
		return fs
	}
	phs := placeholderRE.FindAllStringIndex(text, -1)
	return slices.DeleteFunc(fs, func(f sensitive.Finding) bool {
		return slices.ContainsFunc(phs, func(p []int) bool { return f.Start < p[1] && p[0] < f.End })
	})
}

// SensitiveOff is the word engram serve's and engram eval's --sensitive
// (and ENGRAM_SENSITIVE) take for Options.DetectOff.
const SensitiveOff = "off"

// SensitiveTune returns what a --sensitive value sets in Options:
// SensitiveOff turns detection off; anything else is read as a policy
// (engram.ParseSensitivePolicy) and set as the default one, with
// detection on. It fails with the policy's EINVALID error.
func SensitiveTune(value string) (func(*Options), error) {
	if strings.TrimSpace(value) == SensitiveOff {
		return func(o *Options) { o.DetectOff = true }, nil
	}
	p, err := engram.ParseSensitivePolicy(value)
	if err != nil {
		return nil, err
	}
	return func(o *Options) { o.Sensitive, o.DetectOff = p, false }, nil
}

// detectNothing is the detector of an engine with Options.DetectOff.
func detectNothing(string) []sensitive.Finding { return nil }

// groupOf returns the policy group of kind k.
func groupOf(k sensitive.Kind) string {
	switch sensitive.ClassOf(k) {
	case sensitive.Secret:
		return engram.GroupSecret
	case sensitive.Payment:
		return engram.GroupPayment
	}
	if k == sensitive.NationalID {
		return engram.GroupID
	}
	return engram.GroupContact
}

// setting returns what tenant n's administrator set (the zero policy when
// nothing). It fails with the store's error, or EINTERNAL for a stored
// setting it cannot read.
func (s *redactor) setting(ctx context.Context, n engram.Namespace) (engram.SensitivePolicy, error) {
	var v string
	err := s.store.View(ctx, func(r engram.Reader) error {
		var err error
		v, err = r.Meta(ctx, engram.MetaSensitivePolicy(n))
		return err
	})
	if err != nil {
		return engram.SensitivePolicy{}, fmt.Errorf("read the sensitive policy of tenant %s: %w", n.Tenant(), err)
	}
	p, err := engram.ParseSensitivePolicy(v)
	if err != nil {
		return p, engram.Errorf(engram.EINTERNAL, "tenant %s's stored sensitive policy %q: %v", n.Tenant(), v, err)
	}
	return p, nil
}

// treated is what treating the findings of one write's records made: the
// vault memories of the sealed spans, the counts by kind and treatment,
// and the ids of the records that held a treated finding.
type treated struct {
	seals  []engram.Memory
	counts []engram.SensitiveCount
	ids    []string
}

func (sc *treated) count(kind sensitive.Kind, done, asked engram.Treatment) {
	for i := range sc.counts {
		c := &sc.counts[i]
		if c.Kind == string(kind) && c.Treatment == done {
			c.Count++
			return
		}
	}
	c := engram.SensitiveCount{Kind: string(kind), Treatment: done, Count: 1}
	if asked != done {
		c.Requested = asked
	}
	sc.counts = append(sc.counts, c)
}

// report returns the counts for an answer, nil when nothing was treated.
func (sc *treated) report() []engram.SensitiveCount {
	if sc == nil || len(sc.counts) == 0 {
		return nil
	}
	return sc.counts
}

// treatWrite treats the findings of one write in namespace ns; the
// tenant's policy is read at the first finding only, so a write without
// any costs no read.
type treatWrite struct {
	s   *redactor
	ctx context.Context
	ns  engram.Namespace
	p   *engram.SensitivePolicy
	out treated
}

func (s *redactor) write(ctx context.Context, ns engram.Namespace) *treatWrite {
	return &treatWrite{s: s, ctx: ctx, ns: ns}
}

func (w *treatWrite) policy() (engram.SensitivePolicy, error) {
	if w.p == nil {
		set, err := w.s.setting(w.ctx, w.ns)
		if err != nil {
			return set, err
		}
		p := set.Over(w.s.def)
		w.p = &p
	}
	return *w.p, nil
}

// record treats the findings of one record, id: each text is replaced
// through its pointer, and the placeholders are numbered across them in
// the order given. sources are the episode ids a sealed span's vault
// memory lists (the episode itself, so deleting it deletes them).
type record struct {
	id      string
	ns      engram.Namespace // of the vault memories; zero: the write's
	sources []string
	fields  []recordField
	past    bool                // a past version's copy: redacted, neither sealed nor counted
	seed    map[string]seedSpan // spans placed before, replaced wherever they appear
	after   func()              // run once the fields are treated: writes metadata's back
	meta    *map[string]any     // the metadata withMeta treats, re-checked for size after
	what    string              // how an error names the record ("episodes[0]")
}

// withMeta adds the string values of the metadata *md to rec's fields
// (see metaFields; *md becomes a copy) and returns rec.
func (rec record) withMeta(md *map[string]any) record {
	fs, put := metaFields(md)
	rec.fields = append(rec.fields, fs...)
	rec.after, rec.meta = put, md
	return rec
}

type recordField struct {
	name string
	text *string
}

// treat treats the findings of rec: first each field is scanned, then
// every span found (in any field, or given by rec.seed) is replaced
// wherever it appears in the record, since a value a detector needs
// context for (a key after "the key is") may be repeated bare elsewhere
// (a cue). One span is one placeholder, sealed and counted once. It
// returns the spans placed; it fails only when the tenant's policy cannot
// be read, or with EINVALID naming rec.what when its metadata grew past
// engram.MaxMetadataBytes.
func (w *treatWrite) treat(rec record) (map[string]seedSpan, error) {
	found := make([][]sensitive.Finding, len(rec.fields))
	hit := false
	for i, f := range rec.fields {
		found[i] = w.s.detector(*f.text)
		hit = hit || len(found[i]) > 0
	}
	if !hit && len(rec.seed) == 0 {
		return nil, nil
	}
	p, err := w.policy()
	if err != nil {
		return nil, err
	}
	spans := newSpanSet(rec.seed)
	for i, f := range rec.fields {
		for _, x := range found[i] {
			if t := p.Of(groupOf(x.Kind)); t != engram.TreatKeep && t != "" {
				spans.add((*f.text)[x.Start:x.End], x.Kind)
			}
		}
	}
	for i, f := range rec.fields {
		*f.text = w.replace(p, rec, f.name, *f.text, spans.within(*f.text, found[i]), spans)
	}
	if rec.after != nil {
		rec.after()
	}
	if err := checkTreatedMeta(rec, spans.placed); err != nil {
		return nil, err
	}
	if spans.placed > len(rec.seed) && !rec.past && !slices.Contains(w.out.ids, rec.id) {
		w.out.ids = append(w.out.ids, rec.id)
	}
	return spans.placedSpans(), nil
}

// checkTreatedMeta returns EINVALID naming rec.what and its metadata when
// placeholders made rec's metadata longer than engram.MaxMetadataBytes:
// a placeholder may be longer than its span (an email's), and the size was
// checked on the text as sent.
func checkTreatedMeta(rec record, placed int) error {
	if rec.meta == nil || len(*rec.meta) == 0 || placed == 0 {
		return nil
	}
	b, err := json.Marshal(*rec.meta)
	if err != nil || len(b) <= engram.MaxMetadataBytes {
		return err
	}
	what := rec.what
	if what == "" {
		what = "record " + rec.id
	}
	return engram.Errorf(engram.EINVALID, "%s: metadata is %d bytes of JSON once its findings are replaced by placeholders, longer than the limit of %d",
		what, len(b), engram.MaxMetadataBytes)
}

// placedSpans returns the spans placed, to seed the copies of the record.
func (s *spanSet) placedSpans() map[string]seedSpan {
	out := map[string]seedSpan{}
	for span, ph := range s.ph {
		out[span] = seedSpan{kind: s.kind[span], ph: ph}
	}
	return out
}

// spanSet is the spans of one record to treat, with their kinds and, once
// placed, their placeholders.
type spanSet struct {
	order  []string
	kind   map[string]sensitive.Kind
	ph     map[string]string
	placed int
}

// newSpanSet starts a set with seed's spans already placed.
func newSpanSet(seed map[string]seedSpan) *spanSet {
	s := &spanSet{kind: map[string]sensitive.Kind{}, ph: map[string]string{}}
	for span, sp := range seed {
		s.kind[span], s.ph[span] = sp.kind, sp.ph
		s.order = append(s.order, span)
		s.placed++
	}
	return s
}

func (s *spanSet) add(span string, k sensitive.Kind) {
	if _, ok := s.kind[span]; !ok {
		s.kind[span] = k
		s.order = append(s.order, span)
	}
}

// within returns the findings fs of text and every other place a span of
// s appears in it, ordered by start and none overlapping.
func (s *spanSet) within(text string, fs []sensitive.Finding) []sensitive.Finding {
	out := slices.Clone(fs)
	for _, span := range s.order {
		for from := 0; ; {
			i := strings.Index(text[from:], span)
			if i < 0 {
				break
			}
			f := sensitive.Finding{Kind: s.kind[span], Start: from + i, End: from + i + len(span)}
			if !slices.ContainsFunc(out, func(g sensitive.Finding) bool { return f.Start < g.End && g.Start < f.End }) {
				out = append(out, f)
			}
			from = f.End
		}
	}
	slices.SortFunc(out, func(a, b sensitive.Finding) int { return a.Start - b.Start })
	return out
}

// seedSpan is a span of a record treated before (a memory's, for the
// copies its versions hold) and its placeholder.
type seedSpan struct {
	kind sensitive.Kind
	ph   string
}

// replace returns text with the findings fs that p does not keep replaced
// by their spans' placeholders; a span placed for the first time gets the
// next number, and is sealed (unless rec is a past copy) and counted.
func (w *treatWrite) replace(p engram.SensitivePolicy, rec record, field, text string, fs []sensitive.Finding, spans *spanSet) string {
	var b strings.Builder
	last := 0
	for _, f := range fs {
		g := groupOf(f.Kind)
		asked := p.Of(g)
		span := text[f.Start:f.End]
		if _, ok := spans.kind[span]; !ok || asked == engram.TreatKeep || asked == "" {
			continue
		}
		b.WriteString(text[last:f.Start])
		last = f.End
		if ph, ok := spans.ph[span]; ok {
			b.WriteString(ph)
			continue
		}
		spans.placed++
		ph := fmt.Sprintf("[%s:%s#%d]", g, f.Kind, spans.placed)
		spans.ph[span] = ph
		b.WriteString(ph)
		if rec.past {
			continue
		}
		done := asked
		if done == engram.TreatSeal && !w.s.canSeal {
			done = engram.TreatRedact
		}
		if done == engram.TreatSeal {
			w.out.seals = append(w.out.seals, engram.Memory{
				Namespace: rec.ns, Kind: engram.KindVault, Value: span, Sources: rec.sources,
				Metadata: map[string]any{MetaSealedFrom: rec.id, MetaSealedField: field, MetaPlaceholder: ph},
			})
		}
		w.out.count(f.Kind, done, asked)
	}
	b.WriteString(text[last:])
	return b.String()
}

// done returns what the write treated; a seal done as redact (no vault)
// is logged, by kinds and counts.
func (w *treatWrite) done() *treated {
	for _, c := range w.out.counts {
		if c.Requested != "" {
			w.s.log.Warn("sensitive: the policy seals findings but this server has no vault key; they were redacted",
				"tenant", w.ns.Tenant(), "kind", c.Kind, "count", c.Count)
		}
	}
	return &w.out
}

// treatEpisodes treats the findings in the texts of eps (changed in
// place: contents, speakers, media's captions and transcripts, metadata)
// and prepares the vault for the spans to seal. It fails with EINVALID
// when a content or its metadata grows past its limit, or with the
// store's or the vault's error.
func (e *writer) treatEpisodes(ctx context.Context, ns engram.Namespace, eps []engram.Episode) (*treated, error) {
	w := e.redact.write(ctx, ns)
	for i := range eps {
		ep := &eps[i]
		rec := episodeRecord(ep)
		rec.what = fmt.Sprintf("episodes[%d]", i)
		if _, err := w.treat(rec); err != nil {
			return nil, err
		}
		if err := engram.CheckText(fmt.Sprintf("episodes[%d].content", i), ep.Content, engram.MaxContentBytes); err != nil {
			return nil, err
		}
		if err := engram.CheckText(fmt.Sprintf("episodes[%d].speaker", i), ep.Speaker, engram.MaxShortBytes); err != nil {
			return nil, err
		}
	}
	sc := w.done()
	return sc, e.prepareVault(ctx, ns, sc.seals)
}

// treatMemories treats the findings in the value, abstraction and cues of
// the memories ops add (changed in place; each gets its id now), vault
// memories left as they are, and prepares the vault for the spans to
// seal. It fails with the store's or the vault's error.
func (e *writer) treatMemories(ctx context.Context, ns engram.Namespace, ops []engram.MemoryOp) (*treated, error) {
	w := e.redact.write(ctx, ns)
	for i := range ops {
		m := &ops[i].Memory
		if m.Kind == engram.KindVault {
			continue
		}
		if m.ID == "" {
			m.ID = engram.NewID()
		}
		rec := memoryRecord(m, false)
		rec.what = fmt.Sprintf("memories[%d]", i)
		if _, err := w.treat(rec); err != nil {
			return nil, err
		}
	}
	sc := w.done()
	return sc, e.prepareVault(ctx, ns, sc.seals)
}

// memoryRecord is the record of memory m's texts: its value, abstraction,
// cues and metadata's string values (the cues and metadata are copied, so
// a caller's stay as given).
func memoryRecord(m *engram.Memory, past bool) record {
	rec := record{id: m.ID, ns: m.Namespace, past: past, fields: []recordField{{"value", &m.Value}, {"abstraction", &m.Abstraction}}}
	m.Cues = slices.Clone(m.Cues)
	for j := range m.Cues {
		rec.fields = append(rec.fields, recordField{"cues", &m.Cues[j]})
	}
	return rec.withMeta(&m.Metadata)
}

// treatPatch returns p with the findings in the texts it sets for memory
// id treated (p's own texts are left as they are), and prepares the vault
// for the spans to seal. It fails with the store's or the vault's error.
func (e *writer) treatPatch(ctx context.Context, ns engram.Namespace, id string, p engram.MemoryPatch) (engram.MemoryPatch, *treated, error) {
	w := e.redact.write(ctx, ns)
	rec := record{id: id, what: "memory " + id}
	if p.Value != nil {
		v := *p.Value
		p.Value = &v
		rec.fields = append(rec.fields, recordField{"value", p.Value})
	}
	if p.Abstraction != nil {
		a := *p.Abstraction
		p.Abstraction = &a
		rec.fields = append(rec.fields, recordField{"abstraction", p.Abstraction})
	}
	if p.Cues != nil {
		cs := slices.Clone(*p.Cues)
		p.Cues = &cs
		for j := range cs {
			rec.fields = append(rec.fields, recordField{"cues", &cs[j]})
		}
	}
	if p.Metadata != nil {
		rec = rec.withMeta(&p.Metadata)
	}
	if _, err := w.treat(rec); err != nil {
		return p, nil, err
	}
	sc := w.done()
	return p, sc, e.prepareVault(ctx, ns, sc.seals)
}

// storeSeals stores, in tx and namespace ns, the vault memories of the
// spans sc sealed and the audit entry of what sc treated; nothing when it
// treated nothing.
func (e *writer) storeSeals(ctx context.Context, tx engram.Tx, vb *vecBatch, ns engram.Namespace, sc *treated, actor string, now time.Time) error {
	if sc == nil || len(sc.counts) == 0 {
		return nil
	}
	for i := range sc.seals {
		m := sc.seals[i]
		if m.Namespace == (engram.Namespace{}) {
			m.Namespace = ns
		}
		if err := prepareNew(&m, now); err != nil {
			return fmt.Errorf("seal a finding: %w", err)
		}
		if err := e.insertNew(ctx, tx, vb, &m, actor, "sealed at write", now); err != nil {
			return fmt.Errorf("seal a finding: %w", err)
		}
	}
	return tx.InsertAudit(ctx, e.audit(ns, actor, AuditSensitive, sc.ids, engram.SummarizeSensitive(sc.counts), now))
}

// SensitivePolicy implements engram.SensitivePolicies.
func (e *admin) SensitivePolicy(ctx context.Context, n engram.Namespace) (*engram.TenantPolicy, error) {
	n = engram.Namespace{Org: n.Org, Project: n.Project}
	if err := n.Validate(); err != nil {
		return nil, err
	}
	set, err := e.redact.setting(ctx, n)
	if err != nil {
		return nil, err
	}
	return &engram.TenantPolicy{Org: n.Org, Project: n.Project, Set: set, Applied: set.Over(e.redact.def)}, nil
}

// SetSensitivePolicy implements engram.SensitivePolicies; the change is
// audited as "sensitive.policy" in the tenant's namespace.
func (e *admin) SetSensitivePolicy(ctx context.Context, n engram.Namespace, p engram.SensitivePolicy) (*engram.TenantPolicy, error) {
	n = engram.Namespace{Org: n.Org, Project: n.Project}
	if err := n.Validate(); err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	err := e.store.Update(ctx, func(tx engram.Tx) error {
		if err := tx.SetMeta(ctx, engram.MetaSensitivePolicy(n), p.String()); err != nil {
			return err
		}
		detail := p.String()
		if detail == "" {
			detail = "server default"
		}
		return tx.InsertAudit(ctx, e.audit(n, engram.ActorFrom(ctx), "sensitive.policy", nil, detail, e.clock()))
	})
	if err != nil {
		return nil, err
	}
	return &engram.TenantPolicy{Org: n.Org, Project: n.Project, Set: p, Applied: p.Over(e.redact.def)}, nil
}

// treatImport treats the findings in the texts of recs, changed in place
// (each record it changes is a copy, so the caller's stay as given): the
// contents of episodes, and the texts of memories and of the copies
// versions hold, those numbered as the memory's own but neither sealed nor
// counted again. It prepares the vault for the spans to seal; which of
// them are stored depends on which records the import stores
// (importer.stored). It fails with the store's or the vault's error.
func (e *writer) treatImport(ctx context.Context, n engram.Namespace, recs []engram.Record) (*treated, error) {
	w := e.redact.write(ctx, n)
	for i := range recs {
		r := &recs[i]
		var rec []record
		switch {
		case r.Type == engram.RecordEpisode && r.Episode != nil:
			ep := *r.Episode
			r.Episode = &ep
			rec = append(rec, episodeRecord(r.Episode))
		case r.Type == engram.RecordMemory && r.Memory != nil:
			m := *r.Memory
			r.Memory = &m
			rec = append(rec, memoryRecord(r.Memory, false))
		case r.Type == engram.RecordVersion && r.Version != nil:
			v := *r.Version
			r.Version = &v
			for _, mp := range []**engram.Memory{&v.Old, &v.New} {
				if *mp != nil {
					c := **mp
					*mp = &c
					rec = append(rec, memoryRecord(&c, true))
				}
			}
		}
		for _, one := range rec {
			one.what = fmt.Sprintf("record %d", i+1)
			if _, err := w.treat(one); err != nil {
				return nil, err
			}
		}
	}
	sc := w.done()
	return sc, e.prepareVault(ctx, n, sc.seals)
}

// keep notes that the import stored the episode or memory id (as given).
func (im *importer) keep(id string) {
	if im.kept == nil {
		im.kept = map[string]bool{}
	}
	im.kept[id] = true
}

// stored returns sc with only the seals of records the import stored,
// their references renamed as the records were; a record it skipped (the
// scope holds it already) has its seals already.
func (im *importer) stored(sc *treated) *treated {
	out := &treated{counts: sc.counts, ids: sc.ids}
	for _, m := range sc.seals {
		from, _ := m.Metadata[MetaSealedFrom].(string)
		if !im.kept[from] {
			continue
		}
		m.Metadata = maps.Clone(m.Metadata)
		if id, ok := im.eps[from]; ok {
			m.Metadata[MetaSealedFrom], m.Sources = id, []string{id}
		} else if id, ok := im.mems[from]; ok {
			m.Metadata[MetaSealedFrom] = id
		}
		out.seals = append(out.seals, m)
	}
	return out
}
