package storeutil

import (
	"errors"

	"github.com/engramhq/engram"
)

// NextPage trims a page read with one row more than limit to limit rows
// and returns the cursor of the next page, made from the page's last row
// by cursor, or "" when it was the last page.
func NextPage[T any](page []T, limit int, cursor func(last T) string) ([]T, string) {
	if len(page) <= limit {
		return page, ""
	}
	page = page[:limit]
	return page, cursor(page[limit-1])
}

// ExportPage is the engram.ExportPager.ExportPage of a store: it refuses a
// bad scope, kind or limit, reads the records after the cursor through
// read, which is asked for limit+1 rows, and trims them to a page with the
// next page's cursor. read's error is returned as is.
func ExportPage(s engram.Scope, kind string, limit int, read func(n int) ([]engram.Record, error)) ([]engram.Record, string, error) {
	if err := s.Validate(); err != nil {
		return nil, "", err
	}
	if err := CheckExportPage(kind, limit); err != nil {
		return nil, "", err
	}
	out, err := read(limit + 1)
	if err != nil {
		return nil, "", err
	}
	out, next := ExportNext(out, limit)
	return out, next, nil
}

// IdentityExportPage is the engram.IdentityExporter.IdentityExportPage of
// a store: it refuses a bad scope, limit or cursor, reads the records
// after the decoded cursor (user, key) through read, which is asked for
// limit+1 rows, and trims them to a page with the next page's cursor.
// read's error is returned as is.
func IdentityExportPage(s engram.Scope, kind, after string, limit int, read func(user, key string, n int) ([]engram.Record, error)) ([]engram.Record, string, error) {
	if err := s.Validate(); err != nil {
		return nil, "", err
	}
	user, key, err := CheckIdentityExportPage(kind, after, limit)
	if err != nil {
		return nil, "", err
	}
	out, err := read(user, key, limit+1)
	if err != nil {
		return nil, "", err
	}
	out, next := IdentityExportNext(out, limit)
	return out, next, nil
}

// Collect runs each, which calls emit once per row of a query, and returns
// the rows scanned by scan; the first error, of each or scan, stops it and
// is returned with the rows scanned so far.
func Collect[R, T any](each func(emit func(R) error) error, scan func(R) (T, error)) ([]T, error) {
	var out []T
	err := each(func(row R) error {
		v, err := scan(row)
		if err != nil {
			return err
		}
		out = append(out, v)
		return nil
	})
	return out, err
}

// FnError marks an error returned by a caller's function called from a
// store's row loop, so that it reaches the caller unwrapped.
type FnError struct{ Err error }

// Error returns the caller's error's message.
func (e FnError) Error() string { return e.Err.Error() }

// RowError returns what a row loop returns when its per-row function
// failed with err: a FnError's own error, anything else through mapErr.
func RowError(err error, mapErr func(error) error) error {
	var fe FnError
	if errors.As(err, &fe) {
		return fe.Err
	}
	return mapErr(err)
}

// DumpRow returns the per-row function of one table of a store's Dump: it
// scans the row with scan and hands fn the record that rec makes of it;
// fn's error comes back as a FnError, so the row loop returns it as is.
func DumpRow[R, T any](scan func(R) (T, error), rec func(*T) engram.Record, fn func(engram.DumpRecord) error) func(R) error {
	return func(row R) error {
		v, err := scan(row)
		if err != nil {
			return err
		}
		if err := fn(engram.DumpRecord{Record: rec(&v)}); err != nil {
			return FnError{Err: err}
		}
		return nil
	}
}

// EpisodeRecord, MemoryRecord, VersionRecord and AuditRecord wrap one
// record of their type for an export or a dump.
func EpisodeRecord(e *engram.Episode) engram.Record {
	return engram.Record{Type: engram.RecordEpisode, Episode: e}
}

// MemoryRecord wraps m as a record; see EpisodeRecord.
func MemoryRecord(m *engram.Memory) engram.Record {
	return engram.Record{Type: engram.RecordMemory, Memory: m}
}

// VersionRecord wraps v as a record; see EpisodeRecord.
func VersionRecord(v *engram.Version) engram.Record {
	return engram.Record{Type: engram.RecordVersion, Version: v}
}

// AuditRecord wraps a as a record; see EpisodeRecord.
func AuditRecord(a *engram.AuditEntry) engram.Record {
	return engram.Record{Type: engram.RecordAudit, Audit: a}
}
