package postgres

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/engramhq/engram"
)

// utc returns t in UTC; pgx reads timestamptz in the local zone.
func utc(t time.Time) time.Time { return t.UTC() }

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// storable returns EINVALID if s cannot be stored in a text column: it is
// not UTF-8 or holds a NUL character. Checking first keeps the transaction
// usable: a statement the server refuses would abort it.
func storable(field, s string) error {
	if !utf8.ValidString(s) {
		return engram.Errorf(engram.EINVALID, "%s is not valid UTF-8", field)
	}
	if strings.IndexByte(s, 0) >= 0 {
		return engram.Errorf(engram.EINVALID, "%s contains a NUL character, which the PostgreSQL store cannot hold", field)
	}
	return nil
}

// jsonHasNUL reports whether JSON text escapes a NUL character (\u0000),
// which a json column accepts but cannot hand to text or jsonb.
func jsonHasNUL(b []byte) bool {
	for i := 0; ; {
		j := bytes.Index(b[i:], []byte(`u0000`))
		if j < 0 {
			return false
		}
		j += i
		slashes := 0
		for k := j - 1; k >= 0 && b[k] == '\\'; k-- {
			slashes++
		}
		if slashes%2 == 1 {
			return true
		}
		i = j + 1
	}
}

// jsonText encodes v for a json column without HTML escaping, so the stored
// text is what the embedded store stores. empty gives NULL (nil).
func jsonText(field string, v any, empty bool) ([]byte, error) {
	if empty {
		return nil, nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, engram.Errorf(engram.EINVALID, "%s is not representable as JSON: %v", field, err)
	}
	b := bytes.TrimRight(buf.Bytes(), "\n")
	if jsonHasNUL(b) {
		return nil, engram.Errorf(engram.EINVALID, "%s contains a NUL character, which the PostgreSQL store cannot hold", field)
	}
	return b, nil
}

func mapJSON(field string, m map[string]any) ([]byte, error) { return jsonText(field, m, len(m) == 0) }

// decodeMap decodes a json column, keeping numbers as json.Number so they
// come back with every digit they were stored with.
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

// nilIfEmpty stores an empty list as NULL, which reads back as nil.
func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

// encodeVec returns v as little-endian float32s, the layout of the vec
// column (and of the embedded store's).
func encodeVec(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func decodeVec(b []byte, dim int) ([]float32, error) {
	if dim <= 0 || len(b) != 4*dim {
		return nil, fmt.Errorf("%d bytes do not hold %d float32s", len(b), dim)
	}
	v := make([]float32, dim)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}

// checkMemoryText refuses the text of a memory that PostgreSQL cannot
// store (Validate has checked UTF-8 and limits).
func checkMemoryText(what string, m *engram.Memory) error {
	if err := storable(what+": value", m.Value); err != nil {
		return err
	}
	if err := storable(what+": abstraction", m.Abstraction); err != nil {
		return err
	}
	if err := storable(what+": language", m.Language); err != nil {
		return err
	}
	if err := storable(what+": superseded_by", m.SupersededBy); err != nil {
		return err
	}
	for _, c := range m.Cues {
		if err := storable(what+": cue", c); err != nil {
			return err
		}
	}
	return nil
}
