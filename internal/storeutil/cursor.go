package storeutil

import (
	"context"
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

// ExportCursor returns the cursor of an export page (engram.ExportPager)
// that resumes after r, in the order of r's type: (occurred_at, id) for
// episodes, (memory id, version) for versions, id for the others.
func ExportCursor(r engram.Record) string {
	switch r.Type {
	case engram.RecordEpisode:
		return EncodeEpisodeCursor(r.Episode.OccurredAt.UnixMicro(), r.Episode.ID)
	case engram.RecordMemory:
		return EncodeCursor('m', r.Memory.ID)
	case engram.RecordVersion:
		return EncodeCursor('v', strconv.Itoa(r.Version.Version)+":"+r.Version.MemoryID)
	case engram.RecordAudit:
		return EncodeCursor('a', r.Audit.ID)
	}
	return ""
}

// DecodeVersionCursor returns the memory id and version that a version
// export cursor resumes after; ErrBadCursor if c is malformed or of
// another kind.
func DecodeVersionCursor(c string) (string, int, error) {
	key, err := DecodeCursor('v', c)
	if err != nil {
		return "", 0, err
	}
	v, id, ok := strings.Cut(key, ":")
	n, perr := strconv.Atoi(v)
	if !ok || perr != nil || !engram.ValidID(id) {
		return "", 0, ErrBadCursor()
	}
	return id, n, nil
}

// ExportNext trims a page read with one row more than limit to limit
// records and returns the cursor of the next page, "" when it was the last.
func ExportNext(page []engram.Record, limit int) ([]engram.Record, string) {
	return NextPage(page, limit, ExportCursor)
}

// CheckExportPage returns the EINVALID error for an export page of an
// unknown kind or a limit below 1, or nil.
func CheckExportPage(kind string, limit int) error {
	switch kind {
	case engram.RecordEpisode, engram.RecordMemory, engram.RecordVersion, engram.RecordAudit:
	default:
		return engram.Errorf(engram.EINVALID, "export page: unknown record type %q", kind)
	}
	if limit < 1 {
		return engram.Errorf(engram.EINVALID, "export page: limit %d is not positive", limit)
	}
	return nil
}

// ExportAll calls fn for every record of the scope that p holds, kind by
// kind in export order, reading pages of size records; it is how a backend
// implements Reader.Export within one transaction. fn's error is returned
// as is.
func ExportAll(ctx context.Context, p engram.ExportPager, s engram.Scope, size int, fn func(engram.Record) error) error {
	for _, kind := range []string{engram.RecordEpisode, engram.RecordMemory, engram.RecordVersion, engram.RecordAudit} {
		for after := ""; ; {
			page, next, err := p.ExportPage(ctx, s, kind, after, size)
			if err != nil {
				return err
			}
			for _, r := range page {
				if err := fn(r); err != nil {
					return err
				}
			}
			if next == "" {
				break
			}
			after = next
		}
	}
	return nil
}

// identityCursorKinds are the cursor letters of the identity export lists.
var identityCursorKinds = map[string]byte{
	engram.RecordModality: 'M', engram.RecordPerson: 'P', engram.RecordIdentity: 'I',
	engram.RecordObservation: 'O', engram.RecordIdentityEvent: 'E',
}

// IdentityExportCursor returns the cursor of an identity export page
// (engram.IdentityExporter) that resumes after r: its user and then its
// name (a modality) or id.
func IdentityExportCursor(r engram.Record) string {
	var n engram.Namespace
	var key string
	switch r.Type {
	case engram.RecordModality:
		n, key = r.Modality.Namespace, r.Modality.Name
	case engram.RecordPerson:
		n, key = r.Person.Namespace, r.Person.ID
	case engram.RecordIdentity:
		n, key = r.Identity.Namespace, r.Identity.ID
	case engram.RecordObservation:
		n, key = r.Observation.Namespace, r.Observation.ID
	case engram.RecordIdentityEvent:
		n, key = r.IdentityEvent.Namespace, r.IdentityEvent.ID
	default:
		return ""
	}
	return EncodeCursor(identityCursorKinds[r.Type], n.User+"\x00"+key)
}

// DecodeIdentityExportCursor returns the user and key an identity export
// cursor of kind resumes after ("", "" for the empty cursor); EINVALID for
// an unknown kind, ErrBadCursor for a malformed cursor or one of another
// kind.
func DecodeIdentityExportCursor(kind, c string) (user, key string, err error) {
	letter, ok := identityCursorKinds[kind]
	if !ok {
		return "", "", engram.Errorf(engram.EINVALID, "identity export: unknown record type %q", kind)
	}
	if c == "" {
		return "", "", nil
	}
	k, err := DecodeCursor(letter, c)
	if err != nil {
		return "", "", err
	}
	user, key, ok = strings.Cut(k, "\x00")
	if !ok || key == "" {
		return "", "", ErrBadCursor()
	}
	return user, key, nil
}

// IdentityExportNext trims an identity export page read with one row more
// than limit to limit records and returns the cursor of the next page, ""
// when it was the last.
func IdentityExportNext(page []engram.Record, limit int) ([]engram.Record, string) {
	return NextPage(page, limit, IdentityExportCursor)
}

// CheckIdentityExportPage decodes the cursor of an identity export page
// (see DecodeIdentityExportCursor) and refuses a limit below 1.
func CheckIdentityExportPage(kind, after string, limit int) (user, key string, err error) {
	if limit < 1 {
		return "", "", engram.Errorf(engram.EINVALID, "identity export: limit %d is not positive", limit)
	}
	return DecodeIdentityExportCursor(kind, after)
}
