package index

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
)

// fullMemory has every field of engram.Memory set.
func fullMemory() *engram.Memory {
	at := func(s int64) *time.Time { t := time.Unix(1_700_000_000+s, 123_456_789).UTC(); return &t }
	return &engram.Memory{
		ID: engram.NewID(), Namespace: engram.Namespace{Org: "acme", Project: "p", User: "u", Agent: "a", Session: "s"},
		Kind: engram.KindEpisodic, Abstraction: "Übung macht den Meister", Cues: []string{"猫", "", "Madrid"},
		Value: "Mi perro se llama Toby und 东京开会", Language: "es", Confidence: 0.7, Importance: 0.3,
		Status: engram.StatusSuperseded, ValidFrom: at(1), ValidTo: at(2), CreatedAt: *at(3), UpdatedAt: *at(4),
		ExpiredAt: at(5), ExpiresAt: at(6), Sources: []string{engram.NewID(), engram.NewID()}, SupersededBy: engram.NewID(),
		Metadata: map[string]any{"k": "v", "n": 1.5, "l": []any{"x", map[string]any{"y": true}}, "z": nil},
		Version:  7, AccessCount: 3, LastAccessed: at(7),
	}
}

// A packed memory unpacks to exactly the memory packed, field by field,
// and does not change when the memory it was packed from does.
func TestPackRowRoundTrip(t *testing.T) {
	full := fullMemory()
	v := reflect.ValueOf(full).Elem()
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Fatalf("the fixture leaves %s unset: set it, so that packing it is checked", v.Type().Field(i).Name)
		}
	}
	empty := &engram.Memory{ID: engram.NewID(), Cues: []string{}, Sources: []string{}, Metadata: map[string]any{}}
	long := fullMemory()
	long.Value = strings.Repeat("ein langer Satz, ", 4000) // a length of three uvarint bytes
	long.Cues = []string{strings.Repeat("c", 200)}
	cases := map[string]*engram.Memory{"full": full, "zero": {ID: engram.NewID()}, "empty lists": empty, "long": long}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 300 {
		cases[fmt.Sprintf("random %d", i)] = randomMemory(r)
	}
	for name, m := range cases {
		want := m.Clone()
		p, ok := packRow(m)
		if !ok {
			t.Fatalf("%s: not packed", name)
		}
		if p.id() != m.ID {
			t.Errorf("%s: id %q, want %q", name, p.id(), m.ID)
		}
		if int64(p.size) != rowBytes(m) {
			t.Errorf("%s: size %d, rowBytes %d", name, p.size, rowBytes(m))
		}
		if m.Metadata != nil {
			m.Metadata["added"] = "after packing"
		}
		if len(m.Cues) > 0 {
			m.Cues[0] = "changed"
		}
		if m.ValidFrom != nil {
			*m.ValidFrom = m.ValidFrom.Add(time.Hour)
		}
		got := p.unpack()
		gv, wv := reflect.ValueOf(got).Elem(), reflect.ValueOf(want).Elem()
		for i := range gv.NumField() {
			if !reflect.DeepEqual(gv.Field(i).Interface(), wv.Field(i).Interface()) {
				t.Errorf("%s: %s unpacked differs from the memory packed", name, gv.Type().Field(i).Name)
			}
		}
	}
}

// randomMemory sets fields at random, with strings whose lengths cross
// the uvarint's byte boundaries.
func randomMemory(r *rand.Rand) *engram.Memory {
	str := func() string {
		n := []int{0, 1, 127, 128, 300, 16383, 16384}[r.IntN(7)]
		if r.IntN(2) == 0 {
			n = r.IntN(40)
		}
		b := make([]rune, n)
		for i := range b {
			b[i] = []rune("aZ 9ßñ中\x00é")[r.IntN(9)]
		}
		return string(b)[:min(n, len(string(b)))]
	}
	list := func() []string {
		switch r.IntN(3) {
		case 0:
			return nil
		case 1:
			return []string{}
		}
		l := make([]string, 1+r.IntN(4))
		for i := range l {
			l[i] = str()
		}
		return l
	}
	tm := func() *time.Time {
		if r.IntN(2) == 0 {
			return nil
		}
		t := time.Unix(r.Int64N(4_000_000_000), r.Int64N(1e9)).UTC()
		return &t
	}
	m := &engram.Memory{
		ID: engram.NewID(), Namespace: engram.Namespace{Org: str(), Project: str(), User: str(), Agent: str(), Session: str()},
		Kind: engram.Kind(str()), Abstraction: str(), Cues: list(), Value: str(), Language: str(),
		Confidence: r.Float64(), Importance: r.Float64(), Status: engram.Status(str()),
		ValidFrom: tm(), ValidTo: tm(), ExpiredAt: tm(), ExpiresAt: tm(), Sources: list(), SupersededBy: str(),
		Version: r.IntN(1 << 20), AccessCount: r.Int64(), LastAccessed: tm(),
	}
	if r.IntN(2) == 0 {
		m.CreatedAt, m.UpdatedAt = time.Unix(r.Int64N(4_000_000_000), r.Int64N(1e9)).UTC(), time.Unix(r.Int64N(1e9), 0).UTC()
	}
	if r.IntN(2) == 0 {
		m.Metadata = map[string]any{str(): str(), "n": r.Float64()}
	}
	return m
}

// A memory whose version does not fit the packed form is not cached.
func TestPackRowVersionOutOfRange(t *testing.T) {
	if math.MaxInt == math.MaxInt32 {
		t.Skip("int is 32 bits")
	}
	m := fullMemory()
	m.Version = math.MaxInt32 + 1
	if _, ok := packRow(m); ok {
		t.Fatal("a version beyond 32 bits was packed")
	}
	tx, ps := rowTexts(1<<20, partKey{"acme", "p", "u"})
	tx.cacheRow(ps[0], m, 0)
	if len(ps[0].rows.m) != 0 {
		t.Fatal("a memory that cannot be packed was cached")
	}
}

// BenchmarkRowCacheHeap reports the heap one cached memory of
// bench/growth's shape takes, kept as an engram.Memory (as before
// packedRow) and packed, and what rowBytes estimates for it.
func BenchmarkRowCacheHeap(b *testing.B) {
	const n = 50_000
	src := make([]*engram.Memory, n)
	var est int64
	for i := range src {
		src[i] = growthLikeMemory(i)
		est += rowBytes(src[i])
	}
	// fresh copies m as the store's read would hand it over: the
	// cache keeping it keeps its strings too.
	fresh := func(m *engram.Memory) *engram.Memory {
		c := m.Clone()
		c.ID, c.Value, c.Abstraction = strings.Clone(c.ID), strings.Clone(c.Value), strings.Clone(c.Abstraction)
		c.Namespace.Org, c.Namespace.Project, c.Namespace.User = strings.Clone(c.Namespace.Org), strings.Clone(c.Namespace.Project), strings.Clone(c.Namespace.User)
		c.Kind, c.Status = engram.Kind(strings.Clone(string(c.Kind))), engram.Status(strings.Clone(string(c.Status)))
		for i := range c.Cues {
			c.Cues[i] = strings.Clone(c.Cues[i])
		}
		return c
	}
	heapPer := func(fill func()) float64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		fill()
		runtime.GC()
		runtime.ReadMemStats(&after)
		return float64(after.HeapAlloc-before.HeapAlloc) / n
	}
	var asMemory, packed float64
	for b.Loop() {
		var ms map[string]*engram.Memory
		asMemory = heapPer(func() {
			ms = make(map[string]*engram.Memory)
			for _, m := range src {
				ms[m.ID] = fresh(m)
			}
		})
		runtime.KeepAlive(ms)
		ms = nil
		var ps map[string]*packedRow
		packed = heapPer(func() {
			ps = make(map[string]*packedRow)
			for _, m := range src {
				p, _ := packRow(fresh(m))
				ps[p.id()] = p
			}
		})
		runtime.KeepAlive(ps)
	}
	b.ReportMetric(asMemory, "B/memory-struct")
	b.ReportMetric(packed, "B/packed")
	b.ReportMetric(float64(est)/n, "B/estimate")
}

// growthLikeMemory is shaped like bench/growth's memories: a sentence of
// 12 to 20 words, an abstraction naming a person, a thing and a place,
// those two as cues.
func growthLikeMemory(i int) *engram.Memory {
	at := time.Unix(1_700_000_000+int64(i), 0).UTC()
	words := strings.Fields(strings.Repeat("alpha brave cedar delta ember flint grove harbor ", 4))
	v := strings.Join(words[i%7:i%7+12+i%9], " ")
	return &engram.Memory{
		ID: engram.NewID(), Namespace: engram.Namespace{Org: "acme", Project: "default", User: "user-1"},
		Kind: engram.KindSemantic, Value: v, Abstraction: "Maria and the lantern in Lisbon",
		Cues: []string{"Maria", "Lisbon"}, Confidence: 0.8, Importance: 0.5,
		Status: engram.StatusActive, CreatedAt: at, UpdatedAt: at, Version: 1,
	}
}

// BenchmarkRowCacheMemories is a search's read of 200 candidates from a
// partition caching 20,000 memories.
func BenchmarkRowCacheMemories(b *testing.B) {
	tx, ps := rowTexts(1<<30, partKey{"acme", "default", "user-1"})
	p := ps[0]
	ids := make([]string, 0, 200)
	for i := range 20_000 {
		m := growthLikeMemory(i)
		tx.cacheRow(p, m, 0)
		if i%100 == 0 {
			ids = append(ids, m.ID)
		}
	}
	v := &textView{t: tx, parts: []*textPart{p}, scope: engram.Scope{Org: "acme", Project: "default", User: "user-1"}}
	b.ReportAllocs()
	for b.Loop() {
		into := make(map[string]*engram.Memory, len(ids))
		if miss := v.Memories(ids, into); len(miss) != 0 {
			b.Fatalf("%d missed", len(miss))
		}
	}
}

// Memories read in one call share a block for their lists, and appending
// to one memory's list never writes into another's.
func TestRowCacheListsApart(t *testing.T) {
	tx, ps := rowTexts(1<<20, partKey{"acme", "default", "user-1"})
	a, b := growthLikeMemory(1), growthLikeMemory(2)
	b.Cues = []string{"Oslo", "Bergen"}
	tx.cacheRow(ps[0], a, 0)
	tx.cacheRow(ps[0], b, 0)
	v := &textView{t: tx, parts: ps, scope: engram.Scope{Org: "acme", Project: "default", User: "user-1"}}
	into := map[string]*engram.Memory{}
	if miss := v.Memories([]string{a.ID, b.ID}, into); len(miss) != 0 {
		t.Fatalf("missed %v", miss)
	}
	_ = append(into[a.ID].Cues, "written past the end")
	_ = append(into[a.ID].Sources, "written past the end")
	if got := into[b.ID].Cues; !reflect.DeepEqual(got, b.Cues) {
		t.Fatalf("the second memory's cues are %q after appending to the first's, want %q", got, b.Cues)
	}
}
