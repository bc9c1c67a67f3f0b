// Package lang is engram's language layer: it tells which language a text
// is written in (Detect) and holds what formation and retrieval need to
// know per language: stop words (IsStopWord), stems (Stem), the temporal
// expressions and the periods they name (Resolve, ResolveLang), and the
// rules that pick proper names out of a text (Names).
//
// English is the reference: every function that takes a language tag
// treats "" (undecided) as English, as engram did before it knew other
// languages, and a tag it has no rules for gets either the English rules
// (dates, names) or nothing (stems). The package imports nothing of the
// project, so both formation and retrieval can build on it.
package lang
