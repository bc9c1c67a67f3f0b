package engram

import "time"

// MemoryFilter narrows a list or search of memories. Zero fields do not
// filter, except Statuses, which defaults to active only.
type MemoryFilter struct {
	Kinds    []Kind   `json:"kinds,omitempty"`
	Statuses []Status `json:"statuses,omitempty"` // default: [active]

	CreatedAfter  *time.Time `json:"created_after,omitempty"`  // created_at >= this
	CreatedBefore *time.Time `json:"created_before,omitempty"` // created_at < this
	// ValidAt keeps memories whose validity interval holds this event time.
	ValidAt *time.Time `json:"valid_at,omitempty"`
	// ValidAfter and ValidBefore keep memories whose validity interval
	// overlaps [ValidAfter, ValidBefore).
	ValidAfter  *time.Time `json:"valid_after,omitempty"`
	ValidBefore *time.Time `json:"valid_before,omitempty"`

	// Metadata keeps memories whose metadata has each key equal to the value.
	Metadata map[string]any `json:"metadata,omitempty"`
	// MetadataIn keeps memories whose metadata value at each key is one of
	// the listed values.
	MetadataIn map[string][]any `json:"metadata_in,omitempty"`
	// Contains keeps memories whose value, abstraction or a cue contains this
	// text, case-insensitively for ASCII letters.
	Contains string `json:"contains,omitempty"`
	// IDs keeps only memories with these ids.
	IDs []string `json:"ids,omitempty"`
	// Sources keeps memories that cite at least one of these episodes.
	Sources []string `json:"sources,omitempty"`

	Limit  int    `json:"limit,omitempty"`  // default DefaultLimit, at most MaxLimit
	Cursor string `json:"cursor,omitempty"` // from a previous page's Next

	// Now is the time a TTL is judged at: an active memory whose
	// expires_at is at or before it counts as expired, not active, even
	// before the sweeper has written so. A read with ValidAt judges at
	// ValidAt instead, so an as-of read sees what had not expired then.
	// Zero means the store's clock. The engine sets it; it is not part of
	// the JSON form.
	Now time.Time `json:"-"`
}

// TTLAt returns the time the filter judges TTLs at (see Now), and whether
// that is an as-of time (ValidAt).
func (f *MemoryFilter) TTLAt() (time.Time, bool) {
	if f.ValidAt != nil {
		return *f.ValidAt, true
	}
	if f.Now.IsZero() {
		return time.Now(), false
	}
	return f.Now, false
}

// EpisodeFilter narrows a list of episodes. Zero fields do not filter.
type EpisodeFilter struct {
	Roles          []string       `json:"roles,omitempty"`
	Speaker        string         `json:"speaker,omitempty"`
	OccurredAfter  *time.Time     `json:"occurred_after,omitempty"`  // occurred_at >= this
	OccurredBefore *time.Time     `json:"occurred_before,omitempty"` // occurred_at < this
	Metadata       map[string]any `json:"metadata,omitempty"`
	Contains       string         `json:"contains,omitempty"`
	Limit          int            `json:"limit,omitempty"`
	Cursor         string         `json:"cursor,omitempty"`
}

// AuditFilter narrows a read of the audit log.
type AuditFilter struct {
	Ops    []string   `json:"ops,omitempty"`
	After  *time.Time `json:"after,omitempty"`
	Before *time.Time `json:"before,omitempty"`
	Limit  int        `json:"limit,omitempty"`
	Cursor string     `json:"cursor,omitempty"`
}

// Page sizes.
const (
	DefaultLimit = 50
	MaxLimit     = 1000
)

// ClampLimit returns the page size to use for a requested limit, or an
// EINVALID error when it is negative or above MaxLimit.
func ClampLimit(n int) (int, error) {
	switch {
	case n < 0:
		return 0, Errorf(EINVALID, "limit %d is negative", n)
	case n == 0:
		return DefaultLimit, nil
	case n > MaxLimit:
		return 0, Errorf(EINVALID, "limit %d is above the maximum of %d", n, MaxLimit)
	}
	return n, nil
}

// Validate checks the filter's values and returns an EINVALID error naming the
// first bad one.
func (f *MemoryFilter) Validate() error {
	for _, k := range f.Kinds {
		if !k.Valid() {
			return Errorf(EINVALID, "filter: kind %q is not one of core, episodic, semantic, procedural, resource, vault", k)
		}
	}
	for _, s := range f.Statuses {
		if !s.Valid() {
			return Errorf(EINVALID, "filter: status %q is not one of active, superseded, deleted, expired", s)
		}
	}
	if err := checkText("filter: contains", f.Contains, MaxShortBytes); err != nil {
		return err
	}
	if len(f.IDs) > MaxLimit {
		return Errorf(EINVALID, "filter: %d ids, more than the limit of %d", len(f.IDs), MaxLimit)
	}
	for _, id := range f.IDs {
		if err := CheckID("filter: memory", id); err != nil {
			return err
		}
	}
	if len(f.Sources) > MaxLimit {
		return Errorf(EINVALID, "filter: %d sources, more than the limit of %d", len(f.Sources), MaxLimit)
	}
	for _, id := range f.Sources {
		if err := CheckID("filter: source episode", id); err != nil {
			return err
		}
	}
	if err := checkMetadata("filter", f.Metadata); err != nil {
		return err
	}
	for k, vs := range f.MetadataIn {
		if len(vs) == 0 {
			return Errorf(EINVALID, "filter: metadata_in %q lists no values", k)
		}
	}
	_, err := ClampLimit(f.Limit)
	return err
}

// Validate checks the filter's values and returns an EINVALID error naming the
// first bad one.
func (f *EpisodeFilter) Validate() error {
	if err := checkText("filter: contains", f.Contains, MaxShortBytes); err != nil {
		return err
	}
	if err := checkMetadata("filter", f.Metadata); err != nil {
		return err
	}
	_, err := ClampLimit(f.Limit)
	return err
}
