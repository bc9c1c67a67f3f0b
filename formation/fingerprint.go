package formation

// Fingerprint returns the fingerprint of text that the rules former keeps
// on a turn memory (MetaFingerprint) to find a turn said again: an edit of
// the memory's value keeps it matching the text it now holds.
func Fingerprint(text string) string { return fingerprint(text) }
