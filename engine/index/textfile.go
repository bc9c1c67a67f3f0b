package index

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/textindex"
)

// A text index file keeps the full-text index of one (tenant, user) so
// that its first search after a start loads it instead of reading and
// analysing every memory. Layout, little-endian: magic "engrmtxt", format
// version (uint32), CRC-32C (uint32) of all that follows; the change-log
// sequence number the index reflects (int64), then four strings (uint32
// length, bytes): the store id, org, project and user; then the index
// (textindex.Index.Save) with each memory's attributes (textAttr). A file
// is used only if every header field matches the partition it is loaded
// for; anything else is rebuilt from the store.
var textMagic = [8]byte{'e', 'n', 'g', 'r', 'm', 't', 'x', 't'}

const (
	textVersion = 2 // 2: private-use and unassigned code points are parts of words
	textExt     = ".bm25"
)

// textFiles reads and writes the text index files of one store in one
// directory (the vector index files' directory).
type textFiles struct {
	dir   string // the configured directory joined with the store id
	store string
}

func (f *textFiles) path(k partKey) string { return partFile(f.dir, k, textExt) }

// write saves idx, reflecting change sequence seq, as partition k's file,
// atomically. It fails with the file system's error, leaving the old file
// in place.
func (f *textFiles) write(k partKey, seq int64, idx *textindex.Index[memAttr]) error {
	return writeIndexFile(f.dir, f.path(k), textMagic, textVersion, func(bw *bufio.Writer) error {
		b := binary.LittleEndian.AppendUint64(nil, uint64(seq))
		for _, s := range []string{f.store, k.org, k.project, k.user} {
			b = appendString(b, s)
		}
		if _, err := bw.Write(b); err != nil {
			return err
		}
		return idx.Save(bw, appendAttr)
	})
}

// read loads partition k's file and the change sequence it reflects,
// passing the names of its memories' attributes through name. It fails
// with an error wrapping fs.ErrNotExist when there is none,
// errANNMismatch when it was made for another store or partition or in
// another format version, and a descriptive error when it is truncated
// or corrupted.
func (f *textFiles) read(k partKey, name func([]byte) string) (*textindex.Index[memAttr], int64, error) {
	var (
		idx *textindex.Index[memAttr]
		seq int64
	)
	err := readIndexFile(f.path(k), textMagic, textVersion, func(r *bufio.Reader) error {
		var sb [8]byte
		if _, err := io.ReadFull(r, sb[:]); err != nil {
			return fmt.Errorf("read the file's header: %w", err)
		}
		seq = int64(binary.LittleEndian.Uint64(sb[:]))
		var s [4]string
		for i := range s {
			var err error
			if s[i], err = readString(r); err != nil {
				return fmt.Errorf("read the file's header: %w", err)
			}
		}
		if s[0] != f.store || (partKey{s[1], s[2], s[3]}) != k {
			return errANNMismatch
		}
		var err error
		idx, err = textindex.Load(r, func(b []byte) (memAttr, error) { return readAttr(b, name) })
		return err
	})
	return idx, seq, err
}

// appendAttr appends the encoding of a: its five names (strings), its
// creation time, each bound of its validity (a byte saying whether it is
// set, then the time) and whether it expires (a byte).
func appendAttr(b []byte, a *memAttr) []byte {
	for _, s := range []string{a.user, a.agent, a.session, string(a.kind), string(a.status)} {
		b = appendString(b, s)
	}
	b = appendTime(b, a.created)
	for _, t := range []*time.Time{a.validFrom, a.validTo} {
		if t == nil {
			b = append(b, 0)
			continue
		}
		b = appendTime(append(b, 1), *t)
	}
	if a.expires {
		return append(b, 1)
	}
	return append(b, 0)
}

func appendTime(b []byte, t time.Time) []byte {
	b = binary.LittleEndian.AppendUint64(b, uint64(t.Unix()))
	return binary.LittleEndian.AppendUint32(b, uint32(t.Nanosecond()))
}

var errShortAttr = errors.New("a memory's attributes are cut short")

// readAttr decodes what appendAttr wrote, making its names with name.
func readAttr(b []byte, name func([]byte) string) (memAttr, error) {
	var (
		a memAttr
		s [5]string
	)
	for i := range s {
		if len(b) < 4 || uint64(len(b)-4) < uint64(binary.LittleEndian.Uint32(b)) {
			return a, errShortAttr
		}
		n := binary.LittleEndian.Uint32(b)
		s[i], b = name(b[4:4+n]), b[4+n:]
	}
	a.user, a.agent, a.session, a.kind, a.status = s[0], s[1], s[2], engram.Kind(s[3]), engram.Status(s[4])
	var ok bool
	if a.created, b, ok = readTime(b); !ok {
		return a, errShortAttr
	}
	for _, t := range []**time.Time{&a.validFrom, &a.validTo} {
		if len(b) < 1 {
			return a, errShortAttr
		}
		set := b[0] == 1
		b = b[1:]
		if !set {
			continue
		}
		v, rest, ok := readTime(b)
		if !ok {
			return a, errShortAttr
		}
		*t, b = &v, rest
	}
	if len(b) != 1 {
		return a, errShortAttr
	}
	a.expires = b[0] == 1
	return a, nil
}

func readTime(b []byte) (time.Time, []byte, bool) {
	if len(b) < 12 {
		return time.Time{}, b, false
	}
	return time.Unix(int64(binary.LittleEndian.Uint64(b)), int64(binary.LittleEndian.Uint32(b[8:]))).UTC(), b[12:], true
}

// remove deletes partition k's file; a missing file is not an error.
func (f *textFiles) remove(k partKey) error {
	if err := os.Remove(f.path(k)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}
