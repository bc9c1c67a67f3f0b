// Package textsearch holds the backend-neutral half of engram's full-text
// search: how text is prepared for a word-splitting tokenizer and how a free
// text query is cut into terms. Every storage backend indexes Segment(text)
// and searches for the terms of Terms(query), so a query finds the same
// memories whichever backend stores them.
//
// Chinese, Japanese and Korean are written without spaces between words; a
// tokenizer that splits on non-letters would keep a whole sentence as one
// token, and no word inside it could be found. Segment therefore rewrites
// each run of such characters as its overlapping bigrams, and a CJK query
// term becomes the phrase of its bigrams.
package textsearch
