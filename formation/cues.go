package formation

import "github.com/engramhq/engram/lang"

// Names returns the proper names of English text (see lang.Names): runs of
// capitalised words, a word that starts a sentence only when known (name
// keys, see NameKeys) says it is a name.
func Names(text string, known map[string]bool) []string { return lang.Names(lang.English, text, known) }

// NameKeys returns the keys of the words that appear capitalised in the
// middle of a sentence somewhere in the English texts (see lang.NameKeys).
func NameKeys(texts ...string) map[string]bool { return lang.NameKeys(lang.English, texts...) }

// Titles returns the short quoted phrases of text (see lang.Titles).
func Titles(text string) []string { return lang.Titles(text) }
