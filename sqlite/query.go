package sqlite

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/storeutil"
)

// scopeWhere returns the SQL condition, and its arguments, that admits
// exactly the rows engram.Scope.Contains admits. p prefixes every column
// ("m." for a table aliased m); the table must have the columns org,
// project, user_id, agent and session. Every read and every scoped delete
// uses it, so the tenant rule lives in one place.
func scopeWhere(p string, s engram.Scope) (string, []any) {
	var b strings.Builder
	args := make([]any, 0, 6)
	b.WriteString(p + "org = ? AND " + p + "project = ?")
	args = append(args, s.Org, s.Project)
	own := p + "user_id = ?"
	ownArgs := []any{s.User}
	if !s.AllAgents() {
		own += " AND " + p + "agent = ?"
		ownArgs = append(ownArgs, s.Agent)
	}
	if s.Session != "" {
		own += " AND " + p + "session = ?"
		ownArgs = append(ownArgs, s.Session)
	}
	if !s.IncludeShared {
		b.WriteString(" AND " + own)
		return b.String(), append(args, ownArgs...)
	}
	// The IN term only narrows which index ranges are read; the OR below is
	// the rule itself.
	b.WriteString(" AND " + p + "user_id IN (?, '') AND ((" + own + ") OR (" +
		p + "user_id = '' AND " + p + "agent = '' AND " + p + "session = ''))")
	args = append(args, s.User)
	return b.String(), append(args, ownArgs...)
}

// where accumulates AND-ed conditions with their arguments.
type where struct {
	conds []string
	args  []any
	// index, when set, is the index of memories the conditions are made
	// for (see indexedMetadataIn): without statistics SQLite would read a
	// wider one.
	index string
}

// from is the FROM clause of memories aliased m for the conditions.
func (w *where) from() string {
	if w.index != "" {
		return "memories m INDEXED BY " + w.index
	}
	return "memories m"
}

func (w *where) add(cond string, args ...any) {
	w.conds = append(w.conds, cond)
	w.args = append(w.args, args...)
}

// addScope adds scopeWhere(p, s).
func (w *where) addScope(p string, s engram.Scope) {
	cond, args := scopeWhere(p, s)
	w.add(cond, args...)
}

func (w *where) String() string { return strings.Join(w.conds, " AND ") }

// placeholders returns "?, ?, ?" for n arguments.
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// memoryFilter adds the conditions of f on the memories table aliased m.
func memoryFilter(w *where, f *engram.MemoryFilter) error {
	if len(f.Kinds) > 0 {
		args := make([]any, len(f.Kinds))
		for i, k := range f.Kinds {
			args[i] = string(k)
		}
		w.add("m.kind IN ("+placeholders(len(args))+")", args...)
	}
	statusFilter(w, f)
	// Id lists are bound as one JSON array rather than a placeholder per
	// id: SQLite parses a search's candidate list of hundreds of ids anew
	// with every query otherwise, which cost a fifth of a loaded server's
	// CPU.
	if len(f.IDs) > 0 {
		w.add("m.id IN (SELECT j.value FROM json_each(?) AS j)", jsonList(f.IDs))
	}
	if len(f.Sources) > 0 {
		w.add("m.id IN (SELECT ms.memory_id FROM memory_sources ms WHERE ms.org = m.org AND ms.project = m.project AND ms.user_id = m.user_id AND ms.episode_id IN (SELECT j.value FROM json_each(?) AS j))", jsonList(f.Sources))
	}
	if t := f.CreatedAfter; t != nil {
		w.add("m.created_at >= ?", micros(*t))
	}
	if t := f.CreatedBefore; t != nil {
		w.add("m.created_at < ?", micros(*t))
	}
	if t := f.ValidAt; t != nil {
		v := micros(*t)
		w.add("(m.valid_from IS NULL OR m.valid_from <= ?) AND (m.valid_to IS NULL OR m.valid_to > ?)", v, v)
	}
	// Interval overlap of [valid_from, valid_to) with [ValidAfter, ValidBefore).
	if t := f.ValidAfter; t != nil {
		w.add("(m.valid_to IS NULL OR m.valid_to > ?)", micros(*t))
	}
	if t := f.ValidBefore; t != nil {
		w.add("(m.valid_from IS NULL OR m.valid_from < ?)", micros(*t))
	}
	for _, k := range sortedKeys(f.Metadata) {
		cond, args, err := metadataEquals("m.metadata", k, f.Metadata[k])
		if err != nil {
			return err
		}
		w.add(cond, args...)
	}
	for _, k := range sortedKeys(f.MetadataIn) {
		if cond, args, ok := indexedMetadataIn("m.metadata", k, f.MetadataIn[k]); ok {
			w.add(cond, args...)
			w.index = "memories_by_fingerprint"
			continue
		}
		var conds []string
		var args []any
		for _, v := range f.MetadataIn[k] {
			c, a, err := metadataEquals("m.metadata", k, v)
			if err != nil {
				return err
			}
			conds = append(conds, "("+c+")")
			args = append(args, a...)
		}
		w.add("("+strings.Join(conds, " OR ")+")", args...)
	}
	if f.Contains != "" {
		n := storeutil.LowerASCII(f.Contains)
		w.add("(instr(lower(m.value), ?) > 0 OR instr(lower(m.abstraction), ?) > 0 OR "+
			"EXISTS (SELECT 1 FROM json_each(m.cues) AS c WHERE instr(lower(c.value), ?) > 0))", n, n, n)
	}
	return nil
}

// statusFilter adds the condition that keeps memories whose status, with
// TTLs judged at f.TTLAt(), is one of f.Statuses (default active): an
// active memory past its expires_at is expired, and for an as-of read a
// memory the sweeper expired after that time was still active.
func statusFilter(w *where, f *engram.MemoryFilter) {
	statuses := f.Statuses
	if len(statuses) == 0 {
		statuses = []engram.Status{engram.StatusActive}
	}
	at, asOf := f.TTLAt()
	t := micros(at)
	var ors []string
	var args, plain []any
	for _, st := range slices.Compact(slices.Sorted(slices.Values(statuses))) {
		switch {
		case st == engram.StatusActive:
			ors = append(ors, "(m.status = 'active' AND (m.expires_at IS NULL OR m.expires_at > ?))")
			args = append(args, t)
			if asOf {
				ors = append(ors, "(m.status = 'expired' AND m.expires_at > ?)")
				args = append(args, t)
			}
		case st == engram.StatusExpired:
			ors = append(ors, "(m.status = 'active' AND m.expires_at <= ?)")
			args = append(args, t)
			if asOf {
				ors = append(ors, "(m.status = 'expired' AND (m.expires_at IS NULL OR m.expires_at <= ?))")
				args = append(args, t)
			} else {
				plain = append(plain, string(st))
			}
		default:
			plain = append(plain, string(st))
		}
	}
	if len(plain) > 0 {
		ors = append(ors, "m.status IN ("+placeholders(len(plain))+")")
		args = append(args, plain...)
	}
	w.add("("+strings.Join(ors, " OR ")+")", args...)
}

// episodeFilter adds the conditions of f on the episodes table aliased e.
func episodeFilter(w *where, f *engram.EpisodeFilter) error {
	if len(f.Roles) > 0 {
		args := make([]any, len(f.Roles))
		for i, r := range f.Roles {
			args[i] = r
		}
		w.add("e.role IN ("+placeholders(len(args))+")", args...)
	}
	if f.Speaker != "" {
		w.add("e.speaker = ?", f.Speaker)
	}
	if t := f.OccurredAfter; t != nil {
		w.add("e.occurred_at >= ?", micros(*t))
	}
	if t := f.OccurredBefore; t != nil {
		w.add("e.occurred_at < ?", micros(*t))
	}
	for _, k := range sortedKeys(f.Metadata) {
		cond, args, err := metadataEquals("e.metadata", k, f.Metadata[k])
		if err != nil {
			return err
		}
		w.add(cond, args...)
	}
	if f.Contains != "" {
		w.add("instr(lower(e.content), ?) > 0", storeutil.LowerASCII(f.Contains))
	}
	return nil
}

// auditFilter adds the conditions of f on the audit table aliased a.
func auditFilter(w *where, f *engram.AuditFilter) {
	if len(f.Ops) > 0 {
		args := make([]any, len(f.Ops))
		for i, o := range f.Ops {
			args[i] = o
		}
		w.add("a.op IN ("+placeholders(len(args))+")", args...)
	}
	if t := f.After; t != nil {
		w.add("a.at >= ?", micros(*t))
	}
	if t := f.Before; t != nil {
		w.add("a.at < ?", micros(*t))
	}
}

// sortedKeys returns m's keys sorted, so the same filter always produces the
// same SQL text.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// maxMetadataKey bounds a metadata key used in a filter.
const maxMetadataKey = 256

// metadataEquals returns a condition true when the top-level metadata key
// of col holds a JSON value equal to v: strings, booleans and null by type
// and value, numbers numerically (3 equals 3.0), arrays and objects by their
// JSON text (encoding/json writes object keys sorted, on both sides).
func metadataEquals(col, key string, v any) (string, []any, error) {
	if key == "" || len(key) > maxMetadataKey || !utf8.ValidString(key) {
		return "", nil, engram.Errorf(engram.EINVALID, "filter: metadata key %q must be 1 to %d bytes of UTF-8", key, maxMetadataKey)
	}
	for _, r := range key {
		// The key is quoted in a JSON path; these would end or escape it.
		if r == '"' || r == '\\' || r < 0x20 || r == 0x7f {
			return "", nil, engram.Errorf(engram.EINVALID, "filter: metadata key %q may not contain quotes, backslashes or control characters", key)
		}
	}
	path := `$."` + key + `"`
	// Normalise through JSON so that ints, float32s and named types compare
	// as what the stored metadata holds.
	b, err := json.Marshal(v)
	if err != nil {
		return "", nil, engram.Errorf(engram.EINVALID, "filter: metadata %q value is not representable as JSON", key)
	}
	var n any
	if err := json.Unmarshal(b, &n); err != nil {
		return "", nil, engram.Errorf(engram.EINVALID, "filter: metadata %q value is not representable as JSON", key)
	}
	typ := "json_type(" + col + ", ?)"
	val := "json_extract(" + col + ", ?)"
	switch n := n.(type) {
	case nil:
		return typ + " = 'null'", []any{path}, nil
	case bool:
		if n {
			return typ + " = 'true'", []any{path}, nil
		}
		return typ + " = 'false'", []any{path}, nil
	case float64:
		return typ + " IN ('integer', 'real') AND " + val + " = ?", []any{path, path, n}, nil
	case string:
		return typ + " = 'text' AND " + val + " = ?", []any{path, path, n}, nil
	default:
		return typ + " IN ('array', 'object') AND " + val + " = json(?)", []any{path, path, string(b)}, nil
	}
}

// indexedMetadataIn returns the condition that metadata key k of col is
// one of the strings vs, in the form the index of that key (migration 18)
// serves, when k is an indexed key (engram.MetaFingerprint) and every
// value a string; ok is false otherwise. The path is the index's own
// literal, which the condition must repeat for SQLite to use it.
func indexedMetadataIn(col, k string, vs []any) (cond string, args []any, ok bool) {
	if k != engram.MetaFingerprint || len(vs) == 0 {
		return "", nil, false
	}
	for _, v := range vs {
		s, isString := v.(string)
		if !isString {
			return "", nil, false
		}
		args = append(args, s)
	}
	path := `'$."` + k + `"'`
	return "json_extract(" + col + ", " + path + ") IN (" + placeholders(len(args)) + ") AND json_type(" + col + ", " + path + ") = 'text'", args, true
}

// jsonList encodes ids as a JSON array of strings for json_each.
func jsonList(ids []string) string {
	b, _ := json.Marshal(ids) // strings always encode
	return string(b)
}
