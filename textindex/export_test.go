package textindex

// SearchAll is Search scoring every posting, without pruning: the
// reference block-max WAND and WAND are checked against.
func SearchAll[A any](parts []*Index[A], query string, k int, keep func(string, *A) bool) []Hit {
	return search(parts, query, k, keep, exhaustive)
}

// SearchWAND is Search with WAND on whole lists' bounds only, without the
// blocks': the baseline block-max WAND's speed is measured against.
func SearchWAND[A any](parts []*Index[A], query string, k int, keep func(string, *A) bool) []Hit {
	return search(parts, query, k, keep, wandOnly)
}

// Strategies names the ways a search can walk the postings, the one
// Search uses first.
var Strategies = []string{"bmw", "wand", "exhaustive"}

// SearchCounting is Search with the strategy named s, also returning how
// many documents it scored.
func SearchCounting[A any](s string, parts []*Index[A], query string, k int) ([]Hit, int) {
	how := map[string]strategy{"bmw": blockMax, "wand": wandOnly, "exhaustive": exhaustive}[s]
	return searchCounting(parts, query, k, nil, how)
}
