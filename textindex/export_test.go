package textindex

// SearchAll is Search scoring every posting, without pruning: the
// reference WAND is checked against.
func SearchAll[A any](parts []*Index[A], query string, k int, keep func(string, *A) bool) []Hit {
	return search(parts, query, k, keep, true)
}
