package sqlite_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/sqlite"
	"github.com/engramhq/engram/storetest"
)

// Vocabulary of the generated corpus: names, places and things a personal
// assistant's memories are about, with common English around them.
var (
	benchNames = strings.Fields(`Alice Bob Carol David Emma Frank Grace Henry Isabel Jack Karen Liam Maria
		Noah Olivia Peter Quinn Rachel Sam Tina Umar Victor Wendy Xavier Yara Zoe Aisha Bruno Chen Dmitri
		Elena Farid Giulia Hiro Ines Jonas Kenji Lena Mateo Nadia Omar Priya Ravi Sofia Tomas Uma Vera Wei
		Yusuf Zara Amir Beatriz Carlos Dana Erik Fatima Gabriel Hana Ivan Julia`)
	benchCities = strings.Fields(`Lisbon Paris Berlin Madrid Rome Vienna Prague Dublin Oslo Stockholm
		Helsinki Warsaw Athens Istanbul Cairo Nairobi Lagos Mumbai Delhi Bangkok Singapore Tokyo Osaka Seoul
		Beijing Shanghai Sydney Melbourne Auckland Toronto Montreal Vancouver Chicago Boston Seattle Denver
		Austin Miami Lima Bogota Santiago Quito Havana Reykjavik Tallinn Riga Vilnius Krakow Porto Seville`)
	benchFoods = strings.Fields(`peanuts shellfish gluten dairy eggs soy sesame strawberries mushrooms
		olives cilantro garlic onions tomatoes avocado mango pineapple coconut chocolate coffee tea sushi
		ramen pizza pasta risotto curry tacos burritos falafel hummus paella croissants bagels pancakes
		waffles oatmeal yogurt cheese salmon tuna shrimp lamb tofu tempeh lentils chickpeas quinoa kale`)
	benchNouns = strings.Fields(`meeting project report budget deadline invoice contract proposal presentation
		schedule appointment dentist doctor gym workout marathon bicycle car train flight hotel apartment
		garden kitchen birthday anniversary wedding party concert museum library bookstore cafe restaurant
		bakery market pharmacy school university exam course lecture laptop phone camera guitar piano violin
		painting novel podcast movie series game puzzle recipe dinner lunch breakfast picnic vacation trip
		passport visa ticket reservation password account subscription insurance mortgage loan salary bonus
		promotion interview resume colleague manager client team office desk printer keyboard monitor
		umbrella jacket shoes backpack wallet keys glasses watch necklace ring gift card letter package`)
	benchAdjs = strings.Fields(`new old big small quick slow early late quiet noisy cheap expensive
		favourite annual weekly monthly important urgent difficult easy long short warm cold sunny rainy
		vegetarian vegan spicy sweet local foreign private public shared personal red blue green black
		white yellow modern classic broken fixed lost found secret surprise formal casual online offline`)
	benchVerbs = strings.Fields(`visited booked cancelled moved finished started missed attended organised
		planned bought sold repaired painted cleaned cooked baked ordered returned borrowed lent forgot
		remembered signed sent received renewed paid postponed rescheduled reviewed shared downloaded`)
	benchRelations = strings.Fields(`sister brother mother father daughter son wife husband partner cousin
		friend neighbour roommate uncle aunt grandmother grandfather`)
	benchJobs = strings.Fields(`nurse teacher engineer lawyer chef pilot architect designer accountant
		journalist pharmacist dentist plumber electrician librarian scientist researcher developer`)
	benchDays = strings.Fields(`Monday Tuesday Wednesday Thursday Friday Saturday Sunday`)
)

type corpusGen struct{ r *rand.Rand }

func (g corpusGen) pick(words []string) string { return words[g.r.IntN(len(words))] }

// memory returns a realistic memory: one of several sentence shapes over
// the vocabulary, with an abstraction and cues naming its subject.
func (g corpusGen) memory() *engram.Memory {
	name, city := g.pick(benchNames), g.pick(benchCities)
	var value, abs string
	switch g.r.IntN(6) {
	case 0:
		value = fmt.Sprintf("%s %s the %s %s in %s on %s and said it was %s.", name, g.pick(benchVerbs),
			g.pick(benchAdjs), g.pick(benchNouns), city, g.pick(benchDays), g.pick(benchAdjs))
		abs = name + " and the " + g.pick(benchNouns)
	case 1:
		value = fmt.Sprintf("%s is allergic to %s and avoids %s, but loves %s from the %s %s.", name,
			g.pick(benchFoods), g.pick(benchFoods), g.pick(benchFoods), g.pick(benchAdjs), g.pick(benchNouns))
		abs = name + "'s diet"
	case 2:
		value = fmt.Sprintf("%s's %s works as a %s in %s and visits every %s.", name,
			g.pick(benchRelations), g.pick(benchJobs), city, g.pick(benchDays))
		abs = name + "'s family"
	case 3:
		value = fmt.Sprintf("On %s %s plans to meet %s at the %s %s near the %s to talk about the %s.",
			g.pick(benchDays), name, g.pick(benchNames), g.pick(benchAdjs), g.pick(benchNouns),
			g.pick(benchNouns), g.pick(benchNouns))
		abs = "Plans with " + name
	case 4:
		value = fmt.Sprintf("Remember that the %s for the %s %s is due before %s; %s will %s it.",
			g.pick(benchNouns), g.pick(benchAdjs), g.pick(benchNouns), g.pick(benchDays), name,
			strings.TrimSuffix(g.pick(benchVerbs), "ed"))
		abs = "Reminder about the " + g.pick(benchNouns)
	default:
		value = fmt.Sprintf("%s prefers %s %s over %s ones and usually orders %s with %s.", name,
			g.pick(benchAdjs), g.pick(benchNouns), g.pick(benchAdjs), g.pick(benchFoods), g.pick(benchFoods))
		abs = name + "'s preferences"
	}
	m := storetest.Memory(nsU1, value)
	m.Abstraction = abs
	m.Cues = []string{name, city}
	return m
}

// query returns a search as a user would type it.
func (g corpusGen) query() string {
	switch g.r.IntN(5) {
	case 0:
		return fmt.Sprintf("what is %s allergic to", g.pick(benchNames))
	case 1:
		return fmt.Sprintf("where does %s's %s work", g.pick(benchNames), g.pick(benchRelations))
	case 2:
		return fmt.Sprintf("%s %s in %s", g.pick(benchAdjs), g.pick(benchNouns), g.pick(benchCities))
	case 3:
		return fmt.Sprintf("when is the %s %s", g.pick(benchNouns), g.pick(benchNouns))
	default:
		return fmt.Sprintf("%s %s", g.pick(benchFoods), g.pick(benchNames))
	}
}

var corpora = struct {
	sync.Mutex
	dir string
	dbs map[int]*sqlite.DB
}{dbs: map[int]*sqlite.DB{}}

// corpus returns a database holding n generated memories in one namespace,
// built once per size and process.
func corpus(b *testing.B, n int) *sqlite.DB {
	corpora.Lock()
	defer corpora.Unlock()
	if db := corpora.dbs[n]; db != nil {
		return db
	}
	if corpora.dir == "" {
		dir, err := os.MkdirTemp("", "engram-bench-")
		if err != nil {
			b.Fatal(err)
		}
		corpora.dir = dir
	}
	db, err := sqlite.Open(ctx, filepath.Join(corpora.dir, fmt.Sprintf("corpus-%d.db", n)))
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	g := corpusGen{rand.New(rand.NewPCG(uint64(n), 7))}
	for done := 0; done < n; {
		batch := min(1000, n-done)
		err := db.Update(ctx, func(tx engram.Tx) error {
			for range batch {
				if err := tx.InsertMemory(ctx, g.memory()); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		done += batch
	}
	b.Logf("built a corpus of %d memories in %v", n, time.Since(start).Round(time.Millisecond))
	corpora.dbs[n] = db
	return db
}

func closeCorpora() {
	corpora.Lock()
	defer corpora.Unlock()
	for _, db := range corpora.dbs {
		db.Close()
	}
	if corpora.dir != "" {
		os.RemoveAll(corpora.dir)
	}
}

func BenchmarkInsertEpisodes100(b *testing.B) {
	db, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	g := corpusGen{rand.New(rand.NewPCG(1, 2))}
	batch := make([]*engram.Episode, 100)
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		for i := range batch {
			batch[i] = storetest.Episode(nsU1, g.memory().Value)
		}
		b.StartTimer()
		err := db.Update(ctx, func(tx engram.Tx) error {
			for _, e := range batch {
				if err := tx.InsertEpisode(ctx, e); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(100*b.N)/b.Elapsed().Seconds(), "episodes/s")
}

func BenchmarkSearchText(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("%dk", n/1000), func(b *testing.B) {
			db := corpus(b, n)
			g := corpusGen{rand.New(rand.NewPCG(3, 4))}
			lat := make([]time.Duration, 0, b.N)
			hits := 0
			b.ResetTimer()
			for range b.N {
				q := g.query()
				start := time.Now()
				err := db.View(ctx, func(r engram.Reader) error {
					hs, err := r.SearchText(ctx, scU1, q, engram.MemoryFilter{}, 10)
					hits += len(hs)
					return err
				})
				lat = append(lat, time.Since(start))
				if err != nil {
					b.Fatal(err)
				}
			}
			if hits == 0 {
				b.Fatal("no search found anything")
			}
			slices.Sort(lat)
			ms := func(q float64) float64 {
				return float64(lat[int(q*float64(len(lat)-1))].Microseconds()) / 1000
			}
			b.ReportMetric(ms(0.50), "p50-ms")
			b.ReportMetric(ms(0.95), "p95-ms")
			b.ReportMetric(float64(hits)/float64(len(lat)), "hits/op")
		})
	}
}

// vectorCorpus returns a new database holding n memories of nsU1 and n/10
// of another user, each with an abstraction and a value vector of dim
// values by the embedder "bench", and the ids of nsU1's memories.
func vectorCorpus(b *testing.B, n, dim int) (*sqlite.DB, []string) {
	db, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "vectors.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	g := corpusGen{rand.New(rand.NewPCG(uint64(n), 9))}
	other := engram.Namespace{Org: "acme", Project: "app", User: "u2"}
	vec := func() []float32 {
		v := make([]float32, dim)
		for i := range v {
			v[i] = g.r.Float32()*2 - 1
		}
		return v
	}
	var ids []string
	total := n + n/10
	for done := 0; done < total; {
		batch := min(1000, total-done)
		err := db.Update(ctx, func(tx engram.Tx) error {
			for i := range batch {
				m := g.memory()
				if (done+i)%11 == 10 {
					m.Namespace = other
				} else {
					ids = append(ids, m.ID)
				}
				if err := tx.InsertMemory(ctx, m); err != nil {
					return err
				}
				if err := tx.PutVectors(ctx, m.Namespace, m.ID, "bench", []engram.FieldVector{
					{Field: engram.FieldAbstraction, Vec: vec()}, {Field: engram.FieldValue, Vec: vec()}}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		done += batch
	}
	return db, ids
}

// BenchmarkScanVectors reads every vector of one user, as loading a vector
// index for a scope does.
func BenchmarkScanVectors(b *testing.B) {
	const n, dim = 10_000, 512
	db, ids := vectorCorpus(b, n, dim)
	vectors := 0
	for b.Loop() {
		vectors = 0
		err := db.View(ctx, func(r engram.Reader) error {
			return r.ScanVectors(ctx, scU1, "bench", func(v engram.VectorRecord) error {
				vectors++
				return nil
			})
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	if vectors != 2*len(ids) {
		b.Fatalf("scanned %d vectors, want %d", vectors, 2*len(ids))
	}
	b.ReportMetric(float64(vectors*b.N)/b.Elapsed().Seconds(), "vectors/s")
	b.ReportMetric(float64(vectors*b.N*dim*4)/b.Elapsed().Seconds()/1e6, "MB/s")
}

// BenchmarkGetMemories fetches 100 memories by id out of about 10,000, as
// a vector search does with its candidates.
func BenchmarkGetMemories100(b *testing.B) {
	db, ids := vectorCorpus(b, 10_000, 4)
	r := rand.New(rand.NewPCG(5, 6))
	want := make([]string, 100)
	for b.Loop() {
		b.StopTimer()
		for i := range want {
			want[i] = ids[r.IntN(len(ids))]
		}
		b.StartTimer()
		err := db.View(ctx, func(rd engram.Reader) error {
			ms, err := rd.GetMemories(ctx, scU1, want)
			if err == nil && len(ms) == 0 {
				err = fmt.Errorf("no memories found")
			}
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPutVectors stores two 512-value vectors per memory, 100 memories
// per Update.
func BenchmarkPutVectors(b *testing.B) {
	db, ids := vectorCorpus(b, 1_000, 4)
	r := rand.New(rand.NewPCG(7, 8))
	vec := make([]float32, 512)
	for i := range vec {
		vec[i] = r.Float32()
	}
	for b.Loop() {
		err := db.Update(ctx, func(tx engram.Tx) error {
			for range 100 {
				id := ids[r.IntN(len(ids))]
				if err := tx.PutVectors(ctx, nsU1, id, "bench", []engram.FieldVector{
					{Field: engram.FieldAbstraction, Vec: vec}, {Field: engram.FieldValue, Vec: vec}}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(100*b.N)/b.Elapsed().Seconds(), "memories/s")
}

// BenchmarkSearchTextIndex compares full-text search through the engine
// (the bm25 channel alone) with its in-memory index of the namespace
// ("index") and with the store's FTS5 index ("fts5"), at 10k and 100k
// memories in one namespace. It reports latency percentiles and, for the
// index, the heap it took to load (index-MB, bytes/memory).
func BenchmarkSearchTextIndex(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		for _, mode := range []struct {
			name  string
			limit int
		}{{"index", 0}, {"fts5", -1}} {
			b.Run(fmt.Sprintf("%dk/%s", n/1000, mode.name), func(b *testing.B) {
				db := corpus(b, n)
				e, err := engine.New(ctx, db, engine.Options{TextIndexLimit: mode.limit, AccessFlush: time.Hour})
				if err != nil {
					b.Fatal(err)
				}
				defer e.Close()
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				req := engram.SearchRequest{Scope: scU1, Query: "warm up", K: 10, Channels: []string{engine.ChannelBM25}}
				if _, err := e.Search(ctx, req); err != nil { // loads the index
					b.Fatal(err)
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				grew := float64(after.HeapAlloc) - float64(before.HeapAlloc)
				g := corpusGen{rand.New(rand.NewPCG(3, 4))}
				lat := make([]time.Duration, 0, b.N)
				hits := 0
				b.ResetTimer()
				for range b.N {
					req.Query = g.query()
					start := time.Now()
					res, err := e.Search(ctx, req)
					lat = append(lat, time.Since(start))
					if err != nil {
						b.Fatal(err)
					}
					hits += len(res.Hits)
				}
				if hits == 0 {
					b.Fatal("no search found anything")
				}
				slices.Sort(lat)
				ms := func(q float64) float64 {
					return float64(lat[int(q*float64(len(lat)-1))].Microseconds()) / 1000
				}
				b.ReportMetric(ms(0.50), "p50-ms")
				b.ReportMetric(ms(0.95), "p95-ms")
				b.ReportMetric(float64(hits)/float64(len(lat)), "hits/op")
				if mode.limit == 0 { // after the loop: ResetTimer clears metrics
					b.ReportMetric(grew/(1<<20), "index-MB")
					b.ReportMetric(grew/float64(n), "bytes/memory")
				}
			})
		}
	}
}
