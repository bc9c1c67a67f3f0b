package index

import (
	"encoding/binary"
	"math"
	"strings"
	"time"

	"github.com/engramhq/engram"
)

// packedRow is a memory as the row cache keeps it: its strings back to
// back in one string, its optional times in one block shared by every
// search that reads it, and the rest in a small struct. Kept as an
// engram.Memory, a memory shaped like bench/growth's took 668 bytes of
// heap, most of it in the struct and one allocation per string; packed it
// takes 366 (BenchmarkRowCacheHeap), so a budget holds 1.8 times the
// memories, and a search in a large namespace reads fewer of them from the
// store. A search unpacks each candidate it takes from the cache.
type packedRow struct {
	text             string         // see packRow
	meta             map[string]any // a copy of the memory's own, shared by every search that reads the row
	times            *rowTimes      // nil when the memory has none of them
	created, updated time.Time
	conf, imp        float64
	access           int64
	version          int32
	size             int32 // rowBytes of the memory, as the budget counts it
}

// rowTimes are a packed memory's optional times; a pointer of an
// unpacked memory points into them, so nothing may change them.
type rowTimes struct {
	validFrom, validTo, expiredAt, expiresAt, lastAccessed time.Time
	has                                                    uint8 // bit i: the i-th of them is set
}

// The text of a packedRow holds, each after its length as a uvarint, the
// id (first, so that it can key the cache without a copy of its own), the
// namespace's five parts, kind, status, language, superseded-by,
// abstraction and value; then the cues and the sources, each list after
// its length plus one (zero for a nil list, so that nil and empty stay
// apart).
const packedFields = 12

// packRow packs m, sharing nothing with it but its immutable strings'
// bytes, which it copies. It reports false for a memory it cannot keep
// exactly (a version beyond 32 bits), which is then not cached.
func packRow(m *engram.Memory) (*packedRow, bool) {
	if m.Version < math.MinInt32 || m.Version > math.MaxInt32 {
		return nil, false
	}
	size := rowBytes(m)
	if size > math.MaxInt32 {
		return nil, false
	}
	r := &packedRow{
		created: m.CreatedAt, updated: m.UpdatedAt, conf: m.Confidence, imp: m.Importance,
		access: m.AccessCount, version: int32(m.Version), size: int32(size),
	}
	r.text = packText(m)
	if m.Metadata != nil {
		r.meta = m.Clone().Metadata // a deep copy, as the cache's own
	}
	var ts rowTimes
	for i, t := range []*time.Time{m.ValidFrom, m.ValidTo, m.ExpiredAt, m.ExpiresAt, m.LastAccessed} {
		if t != nil {
			ts.has |= 1 << i
			*ts.at(i) = *t
		}
	}
	if ts.has != 0 {
		r.times = &ts
	}
	return r, true
}

// at is the i-th optional time, in packRow's order.
func (ts *rowTimes) at(i int) *time.Time {
	return [...]*time.Time{&ts.validFrom, &ts.validTo, &ts.expiredAt, &ts.expiresAt, &ts.lastAccessed}[i]
}

// packText lays out the strings of m as packedRow.text says.
func packText(m *engram.Memory) string {
	n := &m.Namespace
	fields := [packedFields]string{m.ID, n.Org, n.Project, n.User, n.Agent, n.Session, string(m.Kind),
		string(m.Status), m.Language, m.SupersededBy, m.Abstraction, m.Value}
	size := 2 * binary.MaxVarintLen64
	for _, f := range fields {
		size += binary.MaxVarintLen64 + len(f)
	}
	for _, l := range [][]string{m.Cues, m.Sources} {
		for _, s := range l {
			size += binary.MaxVarintLen64 + len(s)
		}
	}
	b := make([]byte, 0, size)
	for _, f := range fields {
		b = binary.AppendUvarint(b, uint64(len(f)))
		b = append(b, f...)
	}
	for _, l := range [][]string{m.Cues, m.Sources} {
		if l == nil {
			b = binary.AppendUvarint(b, 0)
			continue
		}
		b = binary.AppendUvarint(b, uint64(len(l))+1)
		for _, s := range l {
			b = binary.AppendUvarint(b, uint64(len(s)))
			b = append(b, s...)
		}
	}
	return strings.Clone(string(b)) // exactly as long as it needs
}

// id is the packed memory's id, a part of r.text.
func (r *packedRow) id() string {
	id, _ := next(r.text)
	return id
}

// next splits the first length-prefixed string off s.
func next(s string) (field, rest string) {
	n, k := uvarint(s)
	return s[k : k+int(n)], s[k+int(n):]
}

// uvarint reads the uvarint at the start of s and its length in bytes.
func uvarint(s string) (uint64, int) {
	var x uint64
	for i := 0; i < len(s) && i < binary.MaxVarintLen64; i++ {
		c := s[i]
		if c < 0x80 {
			return x | uint64(c)<<(7*i), i + 1
		}
		x |= uint64(c&0x7f) << (7 * i)
	}
	panic("engine: a packed row is damaged") // packText wrote it
}

// unpack returns the memory r holds. Its strings, cues' and sources'
// bytes, metadata and optional times are shared with r, and must not be
// changed (a search never changes its candidates; see rowCache).
func (r *packedRow) unpack() *engram.Memory {
	m := &engram.Memory{}
	r.unpackInto(m, nil)
	return m
}

// unpackInto is unpack into m, taking the cues' and sources' lists from
// the spare capacity of strs, or a new block when it has too little, and
// returns strs with them appended: a search reading many memories makes a
// few allocations, not two per memory.
func (r *packedRow) unpackInto(m *engram.Memory, strs []string) []string {
	var f [packedFields]string
	s := r.text
	for i := range f {
		f[i], s = next(s)
	}
	*m = engram.Memory{
		ID: f[0], Namespace: engram.Namespace{Org: f[1], Project: f[2], User: f[3], Agent: f[4], Session: f[5]},
		Kind: engram.Kind(f[6]), Status: engram.Status(f[7]), Language: f[8], SupersededBy: f[9],
		Abstraction: f[10], Value: f[11],
		Confidence: r.conf, Importance: r.imp, CreatedAt: r.created, UpdatedAt: r.updated,
		Metadata: r.meta, Version: int(r.version), AccessCount: r.access,
	}
	m.Cues, s, strs = unpackList(s, strs)
	m.Sources, _, strs = unpackList(s, strs)
	if ts := r.times; ts != nil {
		for i, p := range []**time.Time{&m.ValidFrom, &m.ValidTo, &m.ExpiredAt, &m.ExpiresAt, &m.LastAccessed} {
			if ts.has&(1<<i) != 0 {
				*p = ts.at(i)
			}
		}
	}
	return strs
}

// unpackList reads a list packText wrote at the start of s into the spare
// capacity of strs (see unpackInto); the list's own capacity ends with it,
// so that appending to it never writes into another's.
func unpackList(s string, strs []string) (list []string, rest string, _ []string) {
	n, k := uvarint(s)
	s = s[k:]
	switch n {
	case 0:
		return nil, s, strs
	case 1:
		return []string{}, s, strs
	}
	n--
	if cap(strs)-len(strs) < int(n) {
		strs = make([]string, 0, max(int(n), 64))
	}
	at := len(strs)
	for range n {
		var e string
		e, s = next(s)
		strs = append(strs, e)
	}
	return strs[at:len(strs):len(strs)], s, strs
}
