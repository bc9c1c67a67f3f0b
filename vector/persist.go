package vector

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"unsafe"
)

// nativeLittle reports whether this machine stores a float32 as the file
// does, so vectors are read and written as they lie in memory, without
// converting each float (a variable so that tests can force either path).
var nativeLittle = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// floatBytes returns the memory of f as bytes.
func floatBytes(f []float32) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(f))), len(f)*4)
}

// readWords fills w with little-endian 32-bit words from r: straight into
// w's memory where that is how the machine stores them.
func readWords(r io.Reader, w []uint32) error {
	if !nativeLittle {
		return binary.Read(r, binary.LittleEndian, w)
	}
	_, err := io.ReadFull(r, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(w))), len(w)*4))
	return err
}

// The graph format, little-endian: the magic, a header of eight 32-bit
// words (dim, M, EfConstruction, EfSearch, slots, live, entry, top), then
// per slot its level and a dead flag (one byte each), per slot its id (a
// 32-bit length and the bytes), the vectors of every slot (zeros for a
// deleted one), every bottom-layer list (count and 2M words) and the
// upper-layer lists of the slots above layer 0 (count and M words each).
var graphMagic = [8]byte{'e', 'g', 'h', 'n', 's', 'w', 0, 1}

// maxIDLen bounds an id read from a file, so that a corrupted length cannot
// make the reader allocate gigabytes.
const maxIDLen = 1 << 16

// WriteTo writes the graph to w in a compact binary form that ReadHNSW
// reads back into an index answering every search exactly as h does. A
// deleted node's vector is written as zeros: the bytes of a deleted vector
// never reach the file (a loaded graph still routes through the node, by
// its zero vector). Searches may run meanwhile; writers wait. It returns
// the bytes written and w's error.
func (h *HNSW) WriteTo(w io.Writer) (int64, error) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	cw := &countWriter{w: w}
	bw := bufio.NewWriterSize(cw, 1<<20)
	err := h.writeGraph(bw)
	if err == nil {
		err = bw.Flush()
	}
	return cw.n, err
}

func (h *HNSW) writeGraph(w *bufio.Writer) error {
	entry, top := h.entry, h.top
	head := []uint32{uint32(h.dim), uint32(h.m), uint32(h.efc), uint32(h.efs), uint32(h.n), uint32(h.live), entry, uint32(int32(top))}
	w.Write(graphMagic[:])
	if err := binary.Write(w, binary.LittleEndian, head); err != nil {
		return err
	}
	for s := range h.n {
		w.WriteByte(h.levels[s])
		w.WriteByte(boolByte(h.dead[s]))
	}
	var lb [4]byte
	for _, id := range h.ids[:h.n] {
		binary.LittleEndian.PutUint32(lb[:], uint32(len(id)))
		w.Write(lb[:])
		w.WriteString(id)
	}
	if err := h.writeVectors(w); err != nil {
		return err
	}
	for c, links := range h.links0 {
		used := min(chunkSize, h.n-c*chunkSize)
		if err := binary.Write(w, binary.LittleEndian, links[:used*(h.m0+1)]); err != nil {
			return err
		}
	}
	for s := range h.n {
		if err := binary.Write(w, binary.LittleEndian, h.upper[s]); err != nil {
			return err
		}
	}
	return nil
}

// writeVectors writes every slot's vector, zeros for a tombstone.
func (h *HNSW) writeVectors(w io.Writer) error {
	zero := make([]float32, h.dim)
	if nativeLittle { // no conversion: each vector as it lies in memory
		for s := range uint32(h.n) {
			v := h.vec(s)
			if h.dead[s] {
				v = zero
			}
			if _, err := w.Write(floatBytes(v)); err != nil {
				return err
			}
		}
		return nil
	}
	buf := make([]byte, 0, 256*h.dim*4)
	for s := range uint32(h.n) {
		v := h.vec(s)
		if h.dead[s] {
			v = zero
		}
		for _, x := range v {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(x))
		}
		if len(buf) == cap(buf) || int(s) == h.n-1 {
			if _, err := w.Write(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
	}
	return nil
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// ReadHNSW reads a graph WriteTo wrote. It checks the structure (magic,
// sizes, ids, every link) so that no input can make the index panic or
// allocate much more than the input's size, and fails with an error
// saying what is wrong with a truncated or malformed input; it does not
// check the vectors' values, which a caller that needs to trust them
// guards with a checksum. workers sets HNSWConfig.Workers for later adds.
func ReadHNSW(r io.Reader, workers int) (*HNSW, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	h, err := readGraph(br, workers)
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return nil, fmt.Errorf("vector: read graph: %w", err)
	}
	return h, nil
}

func readGraph(r *bufio.Reader, workers int) (*HNSW, error) {
	var magic [8]byte
	if _, err := io.ReadFull(r, magic[:]); err != nil {
		return nil, err
	}
	if magic != graphMagic {
		return nil, errors.New("not a graph of this version (bad magic)")
	}
	head := make([]uint32, 8)
	if err := binary.Read(r, binary.LittleEndian, head); err != nil {
		return nil, err
	}
	dim, m, efc, efs, n, live := int(head[0]), int(head[1]), int(head[2]), int(head[3]), int(head[4]), int(head[5])
	switch {
	case dim < 1 || dim > 1<<16:
		return nil, fmt.Errorf("dimension %d out of range", dim)
	case m < 2 || m > 1<<10 || efc < 1 || efs < 1:
		return nil, fmt.Errorf("parameters M=%d efConstruction=%d efSearch=%d out of range", m, efc, efs)
	case n > math.MaxInt32 || live > n || (n > 0) != (live > 0):
		return nil, fmt.Errorf("%d live of %d slots is impossible", live, n)
	}
	h := NewHNSW(dim, HNSWConfig{M: m, EfConstruction: efc, EfSearch: efs, Workers: workers, Seed: uint64(n)})
	if n == 0 {
		return h, nil
	}
	if err := h.readSlots(r, n); err != nil {
		return nil, err
	}
	if err := h.readVectors(r); err != nil {
		return nil, err
	}
	if err := h.readLinks(r); err != nil {
		return nil, err
	}
	h.entry, h.top = head[6], int(int32(head[7]))
	if h.entry >= uint32(n) || h.top != int(h.levels[h.entry]) {
		return nil, fmt.Errorf("entry point %d at layer %d does not exist", h.entry, h.top)
	}
	if h.live != live {
		return nil, fmt.Errorf("%d live slots, the header says %d", h.live, live)
	}
	return h, nil
}

// readSlots reads the levels, dead flags and ids of n slots. The levels
// and flags, two bytes a slot, are read first: once they have proven that
// the input holds n slots, the ids and their map are sized for n at once
// (growing a map of millions of ids took a third of a graph's load).
func (h *HNSW) readSlots(r *bufio.Reader, n int) error {
	for s := 0; s < n; s++ {
		var b [2]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return err
		}
		if b[0] >= maxLayers || b[1] > 1 {
			return fmt.Errorf("slot %d: level %d or dead flag %d out of range", s, b[0], b[1])
		}
		h.levels = append(h.levels, b[0])
		h.dead = append(h.dead, b[1] == 1)
	}
	h.ids = make([]string, n)
	live := 0
	buf := make([]byte, 0, 64)
	for s := range h.ids {
		var lb [4]byte
		if _, err := io.ReadFull(r, lb[:]); err != nil {
			return err
		}
		l := binary.LittleEndian.Uint32(lb[:])
		if l > maxIDLen || (l == 0) != h.dead[s] {
			return fmt.Errorf("slot %d: id of length %d (dead: %v)", s, l, h.dead[s])
		}
		if cap(buf) < int(l) {
			buf = make([]byte, l)
		}
		buf = buf[:l]
		if _, err := io.ReadFull(r, buf); err != nil {
			return err
		}
		h.ids[s] = string(buf)
		if l > 0 {
			live++
		}
	}
	h.slots = make(map[string]uint32, live)
	for s, id := range h.ids {
		if h.dead[s] {
			h.free = append(h.free, uint32(s))
			continue
		}
		h.slots[id] = uint32(s)
		if h.live++; len(h.slots) != h.live {
			return fmt.Errorf("slot %d: id %q appears twice", s, id)
		}
	}
	h.n = n
	return nil
}

// readVectors reads the vectors chunk by chunk, so a short input fails
// before a long one's memory is allocated.
func (h *HNSW) readVectors(r io.Reader) error {
	var buf []byte // the per-float path's
	for base := 0; base < h.n; base += chunkSize {
		c := make([]float32, chunkSize*h.dim)
		h.vecs = append(h.vecs, c)
		h.links0 = append(h.links0, make([]uint32, chunkSize*(h.m0+1)))
		floats := c[:min(chunkSize, h.n-base)*h.dim]
		if nativeLittle {
			if _, err := io.ReadFull(r, floatBytes(floats)); err != nil {
				return err
			}
			continue
		}
		if buf == nil {
			buf = make([]byte, 256*h.dim*4)
		}
		for len(floats) > 0 {
			k := min(len(floats), len(buf)/4)
			if _, err := io.ReadFull(r, buf[:k*4]); err != nil {
				return err
			}
			for i := range k {
				floats[i] = math.Float32frombits(binary.LittleEndian.Uint32(buf[i*4:]))
			}
			floats = floats[k:]
		}
	}
	return nil
}

// readLinks reads every neighbour list, checks that each count fits and
// each neighbour exists, and recounts the bottom layer's in-degrees.
func (h *HNSW) readLinks(r io.Reader) error {
	h.indeg = make([]int32, h.n)
	for c, links := range h.links0 {
		used := min(chunkSize, h.n-c*chunkSize)
		if err := readWords(r, links[:used*(h.m0+1)]); err != nil {
			return err
		}
	}
	h.upper = make([][]uint32, h.n)
	for s := range uint32(h.n) {
		if l := int(h.levels[s]); l > 0 {
			h.upper[s] = make([]uint32, l*(h.m+1))
			if err := readWords(r, h.upper[s]); err != nil {
				return err
			}
		}
		for l := 0; l <= int(h.levels[s]); l++ {
			ls := h.linkSlot(s, l)
			if int(ls[0]) > h.maxLinks(l) {
				return fmt.Errorf("slot %d layer %d: %d links, at most %d fit", s, l, ls[0], h.maxLinks(l))
			}
			for _, x := range ls[1 : 1+ls[0]] {
				if x >= uint32(h.n) || int(h.levels[x]) < l {
					return fmt.Errorf("slot %d layer %d: link to %d, which is not on that layer", s, l, x)
				}
				if l == 0 {
					h.indeg[x]++
				}
			}
		}
	}
	return nil
}

// Graph returns the approximate index while Auto answers from it, or nil
// while it is exact or still building the graph. The graph stays Auto's:
// write it (WriteTo), do not change it.
func (a *Auto) Graph() *HNSW {
	a.mu.RLock()
	defer a.mu.RUnlock()
	if a.building {
		return nil
	}
	return a.ann
}

// Adopt makes an empty Auto answer from h, as if it had built h itself:
// the way to start from a graph ReadHNSW read instead of building one. It
// fails with EINVALID, changing nothing, if a holds vectors, is building,
// or h has another dimension.
func (a *Auto) Adopt(h *HNSW) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case h.Dim() != a.dim:
		return invalidf("vector: a graph of %d dimensions cannot serve an index of %d", h.Dim(), a.dim)
	case a.building || a.cur().Len() > 0:
		return invalidf("vector: only an empty index can adopt a graph")
	}
	a.ann, a.flat = h, nil
	return nil
}
