// Package jsonbody checks raw JSON request bodies before they are decoded.
//
// encoding/json replaces every byte sequence that is not valid UTF-8 with
// U+FFFD while it decodes, so two different byte strings (two user names,
// two contents) would silently become one. The transports refuse such a
// body instead, naming where in it the bad bytes are.
package jsonbody

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"unicode/utf8"
)

// InvalidUTF8 says where a body holds bytes that are not valid UTF-8, or
// a \u escape of a lone UTF-16 surrogate (which decodes to U+FFFD as well).
type InvalidUTF8 struct {
	Offset    int    // byte offset of the first invalid sequence
	Path      string // the JSON path of the value holding it ("" when it is outside any value, or the body is not JSON)
	Surrogate bool   // a lone surrogate escape rather than invalid bytes
}

func (e *InvalidUTF8) Error() string {
	what := "is not valid UTF-8"
	if e.Surrogate {
		what = "holds a \\u escape of a lone UTF-16 surrogate, which is no character"
	}
	at := " (at byte " + strconv.Itoa(e.Offset) + ")"
	if e.Path == "" {
		return what + at
	}
	return e.Path + " " + what + at
}

// CheckUTF8 returns nil when b is valid UTF-8 without lone surrogate
// escapes, and an *InvalidUTF8 naming the first offence otherwise. It never
// fails for another reason: a body that is not JSON at all is left to the
// decoder to report.
func CheckUTF8(b []byte) error {
	if !utf8.Valid(b) {
		off := firstInvalid(b)
		return &InvalidUTF8{Offset: off, Path: PathAt(b, off)}
	}
	if off := loneSurrogate(b); off >= 0 {
		return &InvalidUTF8{Offset: off, Path: PathAt(b, off), Surrogate: true}
	}
	return nil
}

// loneSurrogate returns the offset of the first \u escape inside a JSON
// string of b that is a surrogate not paired with its other half, or -1.
func loneSurrogate(b []byte) int {
	in := false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case !in:
			in = c == '"'
		case c == '"':
			in = false
		case c == '\\' && i+1 < len(b):
			if b[i+1] != 'u' {
				i++ // the escaped character
				continue
			}
			r, ok := hex4(b, i+2)
			switch {
			case !ok || r < 0xd800 || r > 0xdfff:
			case r <= 0xdbff && i+11 < len(b) && b[i+6] == '\\' && b[i+7] == 'u':
				if lo, ok := hex4(b, i+8); ok && lo >= 0xdc00 && lo <= 0xdfff {
					i += 6 // the pair's second half
					break
				}
				return i
			default:
				return i
			}
			i += 5
		}
	}
	return -1
}

// hex4 reads four hexadecimal digits of b at i.
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(b[i:i+4]), 16, 32)
	return rune(v), err == nil
}

// firstInvalid returns the offset of the first byte of b that does not
// start a valid UTF-8 sequence.
func firstInvalid(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(b)
}

// PathAt returns the JSON path (as "episodes[1].content" or "namespace.user";
// a key itself is named by its object's path and the key) of the value or
// key of the JSON document b whose text covers the byte offset off, or ""
// when none does or b is not JSON up to there.
func PathAt(b []byte, off int) string {
	dec := json.NewDecoder(bytes.NewReader(b))
	w := walker{}
	for {
		start := skipSpace(b, int(dec.InputOffset()))
		tok, err := dec.Token()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return ""
			}
			return w.path()
		}
		end := int(dec.InputOffset())
		if off >= start && off < end {
			return w.pathOf(tok, dec)
		}
		w.step(tok, dec)
	}
}

// skipSpace returns the offset of the first byte at or after i that is not
// JSON white space or a separator (',' and ':' come before the next token).
func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r', ',', ':':
			i++
		default:
			return i
		}
	}
	return i
}

// frame is one open object or array: in an object, the key whose value
// comes next (and whether the next token is a key); in an array, the index.
type frame struct {
	array   bool
	index   int
	key     string
	wantKey bool
}

// walker follows the tokens of a document to know the path of the next one.
type walker struct{ stack []frame }

func (w *walker) path() string {
	var p []byte
	for _, f := range w.stack {
		if f.array {
			p = append(p, '[')
			p = strconv.AppendInt(p, int64(f.index), 10)
			p = append(p, ']')
			continue
		}
		if f.wantKey {
			break
		}
		if len(p) > 0 {
			p = append(p, '.')
		}
		p = append(p, f.key...)
	}
	return string(p)
}

// pathOf names the token tok, read last: a key is named with its object's
// path and the key.
func (w *walker) pathOf(tok json.Token, dec *json.Decoder) string {
	if n := len(w.stack); n > 0 && !w.stack[n-1].array && w.stack[n-1].wantKey {
		if s, ok := tok.(string); ok {
			w.stack[n-1].key, w.stack[n-1].wantKey = s, false
			return w.path()
		}
	}
	return w.path()
}

// step moves past tok.
func (w *walker) step(tok json.Token, dec *json.Decoder) {
	n := len(w.stack)
	if d, ok := tok.(json.Delim); ok {
		switch d {
		case '{':
			w.stack = append(w.stack, frame{wantKey: true})
		case '[':
			w.stack = append(w.stack, frame{array: true})
		case '}', ']':
			if n > 0 {
				w.stack = w.stack[:n-1]
				w.valueDone()
			}
		}
		return
	}
	if n > 0 && !w.stack[n-1].array && w.stack[n-1].wantKey {
		if s, ok := tok.(string); ok {
			w.stack[n-1].key, w.stack[n-1].wantKey = s, false
		}
		return
	}
	w.valueDone()
}

// valueDone records that the value at the top of the stack was read.
func (w *walker) valueDone() {
	n := len(w.stack)
	if n == 0 {
		return
	}
	if w.stack[n-1].array {
		w.stack[n-1].index++
		return
	}
	w.stack[n-1].wantKey = true
}
