package sqlite

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"
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
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encode json: %w", err)
	}
	return string(bytes.TrimRight(buf.Bytes(), "\n")), nil
}

func stringsJSON(s []string) (any, error) { return jsonText(s, len(s) == 0) }

func mapJSON(m map[string]any) (any, error) { return jsonText(m, len(m) == 0) }

func decodeStrings(b []byte) ([]string, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var s []string
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("decode json array: %w", err)
	}
	if len(s) == 0 {
		return nil, nil
	}
	return s, nil
}

func decodeMap(b []byte) (map[string]any, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var m map[string]any
	if err := unmarshalNumbers(b, &m); err != nil {
		return nil, fmt.Errorf("decode json object: %w", err)
	}
	if len(m) == 0 {
		return nil, nil
	}
	return m, nil
}

// unmarshalNumbers decodes JSON keeping numbers as json.Number, so metadata
// numbers come back with every digit they were stored with.
func unmarshalNumbers(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return fmt.Errorf("trailing data after JSON value")
	}
	return nil
}
