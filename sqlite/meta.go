package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"unicode/utf8"

	"github.com/engramhq/engram"
)

// Meta returns the store-wide value under key, or "" if there is none;
// EINVALID for an empty or overlong key.
func (t *base) Meta(ctx context.Context, key string) (string, error) {
	var v string
	err := t.queryRow(ctx, getMetaSQL, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return v, mapErr(ctx, "meta", err)
}

// SetMeta stores value under key, replacing any value there; an empty value
// deletes the key. EINVALID for an empty or overlong key or a value that is
// not UTF-8.
func (t *base) SetMeta(ctx context.Context, key, value string) error {
	if err := t.writable(); err != nil {
		return err
	}
	if !utf8.ValidString(value) {
		return engram.Errorf(engram.EINVALID, "meta value of %q is not UTF-8", key)
	}
	var err error
	if value == "" {
		_, err = t.exec(ctx, deleteMetaSQL, key)
	} else {
		_, err = t.exec(ctx, setMetaSQL, key, value)
	}
	return mapErr(ctx, "set meta", err)
}
