package storeutil

import (
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/engramhq/engram"
)

// Cursors are base64 of a kind letter and the last row's sort key, so a
// cursor from one list is refused by another, and a cursor one backend
// hands out is understood by the other.

// ErrBadCursor returns the EINVALID error for a cursor that does not decode.
func ErrBadCursor() error {
	return engram.Errorf(engram.EINVALID, "cursor is malformed or belongs to another list")
}

// EncodeCursor returns the cursor of the list kind that resumes after key.
func EncodeCursor(kind byte, key string) string {
	return base64.RawURLEncoding.EncodeToString(append([]byte{kind, ':'}, key...))
}

// DecodeCursor returns the key of cursor c of the list kind; ErrBadCursor
// if c is malformed or belongs to another kind of list.
func DecodeCursor(kind byte, c string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || len(b) < 2 || b[0] != kind || b[1] != ':' {
		return "", ErrBadCursor()
	}
	return string(b[2:]), nil
}

// DecodeIDCursor decodes a cursor whose key is an id; ErrBadCursor if c is
// malformed, of another kind, or its key is not a valid id.
func DecodeIDCursor(kind byte, c string) (string, error) {
	id, err := DecodeCursor(kind, c)
	if err != nil {
		return "", err
	}
	if !engram.ValidID(id) {
		return "", ErrBadCursor()
	}
	return id, nil
}

// EncodeEpisodeCursor returns the cursor of the episode list, ordered by
// (occurred_at, id), that resumes after the episode with occurredMicros
// (unix microseconds) and id.
func EncodeEpisodeCursor(occurredMicros int64, id string) string {
	return EncodeCursor('e', strconv.FormatInt(occurredMicros, 10)+":"+id)
}

// DecodeEpisodeCursor returns the unix microseconds and id that episode
// cursor c resumes after; ErrBadCursor if c is malformed or not an episode
// cursor.
func DecodeEpisodeCursor(c string) (int64, string, error) {
	key, err := DecodeCursor('e', c)
	if err != nil {
		return 0, "", err
	}
	ts, id, ok := strings.Cut(key, ":")
	v, perr := strconv.ParseInt(ts, 10, 64)
	if !ok || perr != nil || !engram.ValidID(id) {
		return 0, "", ErrBadCursor()
	}
	return v, id, nil
}
