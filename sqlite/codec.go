package sqlite

import (
	"database/sql"
	"fmt"
	"time"

	"github.com/engramhq/engram/internal/storeutil"
)

// Times are stored as unix microseconds: callers truncate to microseconds,
// and unlike nanoseconds the range covers every year engram accepts.

func micros(t time.Time) int64 { return t.UnixMicro() }

func fromMicros(v int64) time.Time { return time.UnixMicro(v).UTC() }

// microsPtr returns nil for a nil time so the column stores NULL.
func microsPtr(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UnixMicro()
}

func timePtr(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := fromMicros(v.Int64)
	return &t
}

// jsonText encodes v for a JSON column without HTML escaping, so that the
// stored text is what a substring filter expects. Empty slices and maps
// become NULL, and read back as nil.
func jsonText[T any](v T, empty bool) (any, error) {
	if empty {
		return nil, nil
	}
	b, err := storeutil.MarshalText(v)
	if err != nil {
		return nil, fmt.Errorf("encode json: %w", err)
	}
	return string(b), nil
}

func stringsJSON(s []string) (any, error) { return jsonText(s, len(s) == 0) }

func mapJSON(m map[string]any) (any, error) { return jsonText(m, len(m) == 0) }
