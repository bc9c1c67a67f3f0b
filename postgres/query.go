package postgres

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/storeutil"
	"github.com/engramhq/engram/textsearch"
)

// query accumulates AND-ed conditions and their numbered arguments.
type query struct {
	conds []string
	args  []any
}

// arg adds v to the arguments and returns its placeholder.
func (q *query) arg(v any) string {
	q.args = append(q.args, v)
	return "$" + strconv.Itoa(len(q.args))
}

func (q *query) where(cond string) { q.conds = append(q.conds, cond) }

func (q *query) String() string { return strings.Join(q.conds, " AND ") }

// scope adds the condition that admits exactly the rows engram.Scope.Contains
// admits. p prefixes the columns ("m." for a table aliased m), which must
// include tenant, user_id, agent and session. Every read and every scoped
// delete goes through it, so the tenant rule lives in one place; the tenant
// term comes first, so every such query stays on one shard.
func (q *query) scope(p string, s engram.Scope) {
	t := q.arg(s.Tenant())
	u := q.arg(s.User)
	own := p + "user_id = " + u
	if !s.AllAgents() {
		own += " AND " + p + "agent = " + q.arg(s.Agent)
	}
	if s.Session != "" {
		own += " AND " + p + "session = " + q.arg(s.Session)
	}
	if !s.IncludeShared {
		q.where(p + "tenant = " + t + " AND " + own)
		return
	}
	// The IN term only narrows which index ranges are read; the OR is the
	// rule itself.
	q.where(p + "tenant = " + t + " AND " + p + "user_id IN (" + u + ", '') AND ((" + own + ") OR (" +
		p + "user_id = '' AND " + p + "agent = '' AND " + p + "session = ''))")
}

// contains is a case-insensitive (for ASCII) substring test of col against
// the placeholder n; strpos, unlike LIKE, has no wildcards.
func contains(col, n string) string {
	return "strpos(lower(" + col + ` COLLATE "C"), ` + n + ") > 0"
}

// memoryFilter adds the conditions of f on the memories table aliased m.
func memoryFilter(q *query, f *engram.MemoryFilter) error {
	if len(f.Kinds) > 0 {
		ks := make([]string, len(f.Kinds))
		for i, k := range f.Kinds {
			ks[i] = string(k)
		}
		q.where("m.kind = ANY(" + q.arg(ks) + ")")
	}
	statusFilter(q, f)
	if len(f.IDs) > 0 {
		q.where("m.id = ANY(" + q.arg(f.IDs) + ")")
	}
	if len(f.Sources) > 0 {
		q.where("m.sources && " + q.arg(f.Sources) + "::text[]")
	}
	if t := f.CreatedAfter; t != nil {
		q.where("m.created_at >= " + q.arg(*t))
	}
	if t := f.CreatedBefore; t != nil {
		q.where("m.created_at < " + q.arg(*t))
	}
	if t := f.ValidAt; t != nil {
		v := q.arg(*t)
		q.where("(m.valid_from IS NULL OR m.valid_from <= " + v + ") AND (m.valid_to IS NULL OR m.valid_to > " + v + ")")
	}
	// Interval overlap of [valid_from, valid_to) with [ValidAfter, ValidBefore).
	if t := f.ValidAfter; t != nil {
		q.where("(m.valid_to IS NULL OR m.valid_to > " + q.arg(*t) + ")")
	}
	if t := f.ValidBefore; t != nil {
		q.where("(m.valid_from IS NULL OR m.valid_from < " + q.arg(*t) + ")")
	}
	for _, k := range slices.Sorted(maps.Keys(f.Metadata)) {
		cond, err := metadataEquals(q, "m.metadata", k, f.Metadata[k])
		if err != nil {
			return err
		}
		q.where(cond)
	}
	for _, k := range slices.Sorted(maps.Keys(f.MetadataIn)) {
		if cond, ok := indexedMetadataIn(q, "m.metadata", k, f.MetadataIn[k]); ok {
			q.where(cond)
			continue
		}
		var conds []string
		for _, v := range f.MetadataIn[k] {
			c, err := metadataEquals(q, "m.metadata", k, v)
			if err != nil {
				return err
			}
			conds = append(conds, "("+c+")")
		}
		q.where("(" + strings.Join(conds, " OR ") + ")")
	}
	if f.Contains != "" {
		if err := storable("filter: contains", f.Contains); err != nil {
			return err
		}
		n := q.arg(storeutil.LowerASCII(f.Contains))
		q.where("(" + contains("m.value", n) + " OR " + contains("m.abstraction", n) +
			" OR EXISTS (SELECT 1 FROM unnest(m.cues) AS c(cue) WHERE " + contains("c.cue", n) + "))")
	}
	return nil
}

// statusFilter adds the condition that keeps memories whose status, with
// TTLs judged at f.TTLAt(), is one of f.Statuses (default active): an
// active memory past its expires_at is expired, and for an as-of read a
// memory the sweeper expired after that time was still active. Equality
// on status, not ANY, lets a list read memories_by_status in id order.
func statusFilter(q *query, f *engram.MemoryFilter) {
	statuses := f.Statuses
	if len(statuses) == 0 {
		statuses = []engram.Status{engram.StatusActive}
	}
	at, asOf := f.TTLAt()
	t := ""
	if slices.Contains(statuses, engram.StatusActive) || slices.Contains(statuses, engram.StatusExpired) {
		t = q.arg(at) // only when used: PostgreSQL types every argument from its use
	}
	var ors []string
	var plain []string
	for _, st := range slices.Compact(slices.Sorted(slices.Values(statuses))) {
		switch {
		case st == engram.StatusActive:
			ors = append(ors, "(m.status = 'active' AND (m.expires_at IS NULL OR m.expires_at > "+t+"))")
			if asOf {
				ors = append(ors, "(m.status = 'expired' AND m.expires_at > "+t+")")
			}
		case st == engram.StatusExpired:
			ors = append(ors, "(m.status = 'active' AND m.expires_at <= "+t+")")
			if asOf {
				ors = append(ors, "(m.status = 'expired' AND (m.expires_at IS NULL OR m.expires_at <= "+t+"))")
			} else {
				plain = append(plain, string(st))
			}
		default:
			plain = append(plain, string(st))
		}
	}
	switch len(plain) {
	case 0:
	case 1:
		ors = append(ors, "m.status = "+q.arg(plain[0]))
	default:
		ors = append(ors, "m.status = ANY("+q.arg(plain)+")")
	}
	q.where("(" + strings.Join(ors, " OR ") + ")")
}

// episodeFilter adds the conditions of f on the episodes table aliased e.
func episodeFilter(q *query, f *engram.EpisodeFilter) error {
	if len(f.Roles) > 0 {
		q.where("e.role = ANY(" + q.arg(f.Roles) + ")")
	}
	if f.Speaker != "" {
		q.where("e.speaker = " + q.arg(f.Speaker))
	}
	if t := f.OccurredAfter; t != nil {
		q.where("e.occurred_at >= " + q.arg(*t))
	}
	if t := f.OccurredBefore; t != nil {
		q.where("e.occurred_at < " + q.arg(*t))
	}
	for _, k := range slices.Sorted(maps.Keys(f.Metadata)) {
		cond, err := metadataEquals(q, "e.metadata", k, f.Metadata[k])
		if err != nil {
			return err
		}
		q.where(cond)
	}
	if f.Contains != "" {
		if err := storable("filter: contains", f.Contains); err != nil {
			return err
		}
		q.where(contains("e.content", q.arg(storeutil.LowerASCII(f.Contains))))
	}
	for _, s := range append(slices.Clone(f.Roles), f.Speaker) {
		if err := storable("filter: role or speaker", s); err != nil {
			return err
		}
	}
	return nil
}

// auditFilter adds the conditions of f on the audit table aliased a.
func auditFilter(q *query, f *engram.AuditFilter) error {
	for _, o := range f.Ops {
		if err := storable("filter: op", o); err != nil {
			return err
		}
	}
	if len(f.Ops) > 0 {
		q.where("a.op = ANY(" + q.arg(f.Ops) + ")")
	}
	if t := f.After; t != nil {
		q.where("a.at >= " + q.arg(*t))
	}
	if t := f.Before; t != nil {
		q.where("a.at < " + q.arg(*t))
	}
	return nil
}

// maxMetadataKey bounds a metadata key used in a filter.
const maxMetadataKey = 256

// metadataEquals returns a condition true when the top-level key of the
// json column col holds a value equal to v: strings, booleans and null by
// type and value, numbers numerically (3 equals 3.0), arrays and objects as
// jsonb values.
func metadataEquals(q *query, col, key string, v any) (string, error) {
	if key == "" || len(key) > maxMetadataKey || !utf8.ValidString(key) {
		return "", engram.Errorf(engram.EINVALID, "filter: metadata key %q must be 1 to %d bytes of UTF-8", key, maxMetadataKey)
	}
	for _, r := range key {
		// Not needed for safety here (the key is a parameter), but the
		// embedded store refuses them, and a filter must mean the same on
		// both.
		if r == '"' || r == '\\' || r < 0x20 || r == 0x7f {
			return "", engram.Errorf(engram.EINVALID, "filter: metadata key %q may not contain quotes, backslashes or control characters", key)
		}
	}
	// Normalise through JSON so that ints, float32s and named types compare
	// as what the stored metadata holds.
	b, err := json.Marshal(v)
	if err != nil {
		return "", engram.Errorf(engram.EINVALID, "filter: metadata %q value is not representable as JSON", key)
	}
	if jsonHasNUL(b) {
		return "", engram.Errorf(engram.EINVALID, "filter: metadata %q value contains a NUL character", key)
	}
	var n any
	if err := json.Unmarshal(b, &n); err != nil {
		return "", engram.Errorf(engram.EINVALID, "filter: metadata %q value is not representable as JSON", key)
	}
	k := q.arg(key)
	typ := "json_typeof(" + col + " -> " + k + ")"
	switch n := n.(type) {
	case nil:
		return typ + " = 'null'", nil
	case bool:
		return typ + " = 'boolean' AND " + col + " ->> " + k + " = " + q.arg(strconv.FormatBool(n)), nil
	case float64:
		// CASE, because AND does not promise to test the type before the cast.
		return "CASE WHEN " + typ + " = 'number' THEN (" + col + " ->> " + k + ")::numeric = " +
			q.arg(string(b)) + "::text::numeric ELSE false END", nil
	case string:
		return typ + " = 'string' AND " + col + " ->> " + k + " = " + q.arg(n), nil
	default:
		return typ + " IN ('array', 'object') AND (" + col + " -> " + k + ")::jsonb = " + q.arg(string(b)) + "::text::jsonb", nil
	}
}

// indexedMetadataIn returns the condition that metadata key k of col is
// one of the strings vs, in the form the index of that key (migration 18)
// serves, when k is an indexed key (engram.MetaFingerprint) and every
// value a string; ok is false otherwise. The key is the index's own
// literal, which the condition must repeat for PostgreSQL to use it.
func indexedMetadataIn(q *query, col, k string, vs []any) (string, bool) {
	if k != engram.MetaFingerprint || len(vs) == 0 {
		return "", false
	}
	ss := make([]string, len(vs))
	for i, v := range vs {
		s, isString := v.(string)
		if !isString || strings.ContainsRune(s, 0) {
			return "", false
		}
		ss[i] = s
	}
	key := "'" + k + "'"
	return "(" + col + " ->> " + key + ") = ANY(" + q.arg(ss) + ") AND json_typeof(" + col + " -> " + key + ") = 'string'", true
}

// tsQuery returns the text for websearch_to_tsquery that finds any of the
// terms of free text q, or "" when q has none. Every term is double-quoted,
// so nothing a user types is read as query syntax (terms hold only letters,
// digits and marks anyway); a CJK term becomes the quoted phrase of its
// bigrams, and "or" between quoted terms is the OR operator.
func tsQuery(q string) string {
	terms := textsearch.Terms(q)
	if len(terms) == 0 {
		return ""
	}
	var b strings.Builder
	for i, t := range terms {
		if i > 0 {
			b.WriteString(" or ")
		}
		b.WriteByte('"')
		b.WriteString(strings.TrimSpace(textsearch.Segment(t)))
		b.WriteByte('"')
	}
	return b.String()
}
