package postgres

import (
	"bytes"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/storeutil"
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
	b, err := storeutil.MarshalText(v)
	if err != nil {
		return nil, engram.Errorf(engram.EINVALID, "%s is not representable as JSON: %v", field, err)
	}
	if jsonHasNUL(b) {
		return nil, engram.Errorf(engram.EINVALID, "%s contains a NUL character, which the PostgreSQL store cannot hold", field)
	}
	return b, nil
}

func mapJSON(field string, m map[string]any) ([]byte, error) { return jsonText(field, m, len(m) == 0) }

// nilIfEmpty stores an empty list as NULL, which reads back as nil.
func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
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
