package storeutil

import "strings"

// LowerASCII folds ASCII letters only, as SQLite's lower() and
// PostgreSQL's lower() under the "C" collation do, so the needle of a
// contains filter is folded exactly like the column it is matched against.
func LowerASCII(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, s)
}
