package index

import (
	"bufio"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/vector"
)

// An index file keeps the approximate vector index of one (tenant, user)
// so that a restart loads it instead of building it again. Layout,
// little-endian:
//
//	magic "engrmann", format version (uint32), CRC-32C (uint32) of all
//	that follows;
//	dim (uint32), the change-log sequence number the index reflects
//	(int64), the graph's vector count and the memory count (uint64 each),
//	then five strings (uint32 length, bytes): the store id, the embedder
//	name, org, project and user;
//	per memory: its id, agent and session (strings);
//	the graph (vector.HNSW.WriteTo).
//
// A file is used only if every header field matches what the engine
// expects for the partition it loads; anything else is rebuilt.
var annMagic = [8]byte{'e', 'n', 'g', 'r', 'm', 'a', 'n', 'n'}

const (
	annVersion = 1
	annExt     = ".hnsw"
	// MetaIndexStore is the store meta key holding a random id of the
	// store, written into index files so that a file is only ever loaded
	// for the store that it was made from (a cache directory may be shared
	// by servers of several databases). Copying a store (engram
	// migrate-store) must not copy it.
	MetaIndexStore = "ann_store_id"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// errANNMismatch marks a file made for another store, embedder, dimension
// or partition.
var errANNMismatch = errors.New("made for another store, embedder or partition")

// annHeader is what a file says it holds.
type annHeader struct {
	dim         int
	seq         int64
	items, mems uint64
	store, emb  string
	key         partKey
}

// annFiles reads and writes the index files of one store in one directory.
type annFiles struct {
	dir   string // the configured directory joined with the store id
	store string
	emb   string
	dim   int
}

// path returns the file of partition k: a hash, so that tenant and user
// names never become file names.
func (f *annFiles) path(k partKey) string { return partFile(f.dir, k, annExt) }

// partFile returns the file in dir of partition k with extension ext.
func partFile(dir string, k partKey, ext string) string {
	h := sha256.Sum256([]byte(k.org + "\x00" + k.project + "\x00" + k.user))
	return filepath.Join(dir, hex.EncodeToString(h[:16])+ext)
}

// write saves the graph and memory namespaces of partition k, reflecting
// change sequence seq, atomically: a temporary file is written, synced and
// renamed over the old one. It fails with the file system's error, leaving
// the old file in place.
func (f *annFiles) write(k partKey, seq int64, g *vector.HNSW, ns map[string]engram.Namespace) error {
	h := annHeader{dim: g.Dim(), seq: seq, items: uint64(g.Len()), mems: uint64(len(ns)), store: f.store, emb: f.emb, key: k}
	return writeIndexFile(f.dir, f.path(k), annMagic, annVersion, func(bw *bufio.Writer) error {
		return writeANNBody(bw, &h, g, ns)
	})
}

// writeIndexFile writes the file path in dir atomically: a temporary file
// with the magic, the format version and the CRC-32C of what body writes
// after them is synced and renamed over the old one. It fails with body's
// or the file system's error, leaving the old file in place.
func writeIndexFile(dir, path string, magic [8]byte, version uint32, body func(*bufio.Writer) error) (err error) {
	tmp, err := os.CreateTemp(dir, ".tmp-*"+filepath.Ext(path))
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	crc := crc32.New(castagnoli)
	bw := bufio.NewWriterSize(io.MultiWriter(tmp, crc), 1<<20)
	var pre [16]byte
	copy(pre[:], magic[:])
	binary.LittleEndian.PutUint32(pre[8:], version)
	if _, err := tmp.Write(pre[:]); err != nil {
		return err
	}
	if err := body(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	binary.LittleEndian.PutUint32(pre[12:], crc.Sum32())
	if _, err := tmp.WriteAt(pre[12:], 12); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	return syncDir(dir)
}

func writeANNBody(bw *bufio.Writer, h *annHeader, g *vector.HNSW, ns map[string]engram.Namespace) error {
	var b []byte
	b = binary.LittleEndian.AppendUint32(b, uint32(h.dim))
	b = binary.LittleEndian.AppendUint64(b, uint64(h.seq))
	b = binary.LittleEndian.AppendUint64(b, h.items)
	b = binary.LittleEndian.AppendUint64(b, h.mems)
	for _, s := range []string{h.store, h.emb, h.key.org, h.key.project, h.key.user} {
		b = appendString(b, s)
	}
	bw.Write(b)
	for id, n := range ns {
		b = appendString(b[:0], id)
		b = appendString(b, n.Agent)
		b = appendString(b, n.Session)
		bw.Write(b)
	}
	if _, err := g.WriteTo(bw); err != nil {
		return err
	}
	return bw.Flush()
}

func appendString(b []byte, s string) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

// maxANNString bounds a string read from a file, so that a corrupted
// length cannot make the reader allocate gigabytes.
const maxANNString = 1 << 20

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// annFile is what read returns: a partition's graph, the namespaces of its
// memories and the change sequence number they reflect.
type annFile struct {
	seq   int64
	graph *vector.HNSW
	ns    map[string]engram.Namespace
}

// read loads partition k's file. It fails with an error wrapping
// fs.ErrNotExist when there is none, errANNMismatch when it was made for
// another store, embedder, dimension or partition (or by another format
// version), and a descriptive error when it is truncated or corrupted.
func (f *annFiles) read(k partKey, workers int) (*annFile, error) {
	var out *annFile
	err := readIndexFile(f.path(k), annMagic, annVersion, func(r *bufio.Reader) (err error) {
		out, err = f.readBody(r, k, workers)
		return err
	})
	return out, err
}

// readIndexFile reads the file path that writeIndexFile wrote, passing
// what follows its magic, version and checksum to body, then checks the
// checksum. It fails with an error wrapping fs.ErrNotExist when there is
// no file, errANNMismatch when its magic or version is not the one asked
// for, body's error, and a descriptive one when the checksum does not
// match.
func readIndexFile(path string, magic [8]byte, version uint32, body func(*bufio.Reader) error) error {
	file, err := os.Open(path)
	if err != nil {
		return err
	}
	defer file.Close()
	var pre [16]byte
	if _, err := io.ReadFull(file, pre[:]); err != nil {
		return fmt.Errorf("read the file's header: %w", err)
	}
	if [8]byte(pre[:8]) != magic || binary.LittleEndian.Uint32(pre[8:]) != version {
		return fmt.Errorf("not an index file of format version %d: %w", version, errANNMismatch)
	}
	crc := crc32.New(castagnoli)
	r := bufio.NewReaderSize(io.TeeReader(file, crc), 1<<20)
	if err := body(r); err != nil {
		return err
	}
	if _, err := io.Copy(io.Discard, r); err != nil {
		return err
	}
	if got, want := crc.Sum32(), binary.LittleEndian.Uint32(pre[12:]); got != want {
		return fmt.Errorf("checksum %08x, the header says %08x: the file is corrupted", got, want)
	}
	return nil
}

func (f *annFiles) readBody(r *bufio.Reader, k partKey, workers int) (*annFile, error) {
	h, err := readANNHeader(r)
	if err != nil {
		return nil, fmt.Errorf("read the file's header: %w", err)
	}
	if h.store != f.store || h.emb != f.emb || h.dim != f.dim || h.key != k {
		return nil, errANNMismatch
	}
	// The records first, then a map sized for them: growing a map of a
	// million ids took seconds of a restart.
	type rec struct{ id, agent, session string }
	recs := make([]rec, 0, min(h.mems, 1<<16))
	var buf []byte
	for range h.mems {
		var s [3]string
		for i := range s {
			if s[i], buf, err = readStringBuf(r, buf); err != nil {
				return nil, fmt.Errorf("read the memories: %w", err)
			}
		}
		recs = append(recs, rec{s[0], s[1], s[2]})
	}
	ns := make(map[string]engram.Namespace, len(recs))
	for _, m := range recs {
		ns[m.id] = engram.Namespace{Org: k.org, Project: k.project, User: k.user, Agent: m.agent, Session: m.session}
	}
	g, err := vector.ReadHNSW(r, workers)
	if err != nil {
		return nil, err
	}
	if uint64(g.Len()) != h.items || uint64(len(ns)) != h.mems {
		return nil, fmt.Errorf("%d vectors of %d memories, the header says %d of %d", g.Len(), len(ns), h.items, h.mems)
	}
	return &annFile{seq: h.seq, graph: g, ns: ns}, nil
}

func readANNHeader(r io.Reader) (*annHeader, error) {
	var fixed [28]byte
	if _, err := io.ReadFull(r, fixed[:]); err != nil {
		return nil, err
	}
	h := &annHeader{
		dim:   int(binary.LittleEndian.Uint32(fixed[0:])),
		seq:   int64(binary.LittleEndian.Uint64(fixed[4:])),
		items: binary.LittleEndian.Uint64(fixed[12:]),
		mems:  binary.LittleEndian.Uint64(fixed[20:]),
	}
	var s [5]string
	for i := range s {
		var err error
		if s[i], err = readString(r); err != nil {
			return nil, err
		}
	}
	h.store, h.emb, h.key = s[0], s[1], partKey{s[2], s[3], s[4]}
	return h, nil
}

func readString(r io.Reader) (string, error) {
	s, _, err := readStringBuf(r, nil)
	return s, err
}

// readStringBuf is readString reading through buf, which it returns,
// grown if it had to be, for the next string.
func readStringBuf(r io.Reader, buf []byte) (string, []byte, error) {
	var lb [4]byte
	if _, err := io.ReadFull(r, lb[:]); err != nil {
		return "", buf, err
	}
	n := binary.LittleEndian.Uint32(lb[:])
	if n > maxANNString {
		return "", buf, fmt.Errorf("a string of %d bytes is longer than any the engine writes", n)
	}
	if uint32(cap(buf)) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := io.ReadFull(r, buf); err != nil {
		return "", buf, err
	}
	return string(buf), buf, nil
}

// remove deletes partition k's file; a missing file is not an error.
func (f *annFiles) remove(k partKey) error {
	if err := os.Remove(f.path(k)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// newStoreID returns a random id for MetaIndexStore.
func newStoreID() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}
