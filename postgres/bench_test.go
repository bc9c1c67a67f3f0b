package postgres_test

// Benchmarks of the PostgreSQL store beside the embedded SQLite store, on
// the same generated corpora:
//
//	PG_DURABLE=1 scripts/pg.sh go test -run '^$' -bench . -benchtime 2000x -timeout 2h ./postgres/
//
// Corpora are built once per process and kept for every benchmark that
// reads them. "1ns" is benchCorpus memories in one namespace; "manyns" is
// benchTenants tenants of benchPerTenant memories each. PG_DURABLE=1 makes
// PostgreSQL sync every commit, as SQLite does.

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	engramhttp "github.com/engramhq/engram/http"
	"github.com/engramhq/engram/postgres"
	"github.com/engramhq/engram/sqlite"
	"github.com/engramhq/engram/storetest"
)

// Corpus sizes: the issue's, 100,000 memories in one namespace and 1,000
// namespaces of 1,000 memories. Building them takes minutes on a small
// machine (each corpus is built once per process and backend), so
// ENGRAM_BENCH_CORPUS, ENGRAM_BENCH_TENANTS and ENGRAM_BENCH_PER_TENANT
// shrink them for a quick run.
var (
	benchCorpus    = envInt("ENGRAM_BENCH_CORPUS", 100_000)
	benchTenants   = envInt("ENGRAM_BENCH_TENANTS", 1_000)
	benchPerTenant = envInt("ENGRAM_BENCH_PER_TENANT", 1_000)
)

func envInt(key string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(key)); err == nil && v > 0 {
		return v
	}
	return def
}

// Words of the generated memories: people, places, things, and the verbs
// and adjectives around them.
var (
	bPeople = strings.Fields(`Ana Bruno Chiara Dev Elif Femi Greta Hugo Ines Jun Kofi Lea Mads Nia
		Oskar Pia Quim Rosa Sven Tariq Ulla Vik Wanda Xiu Yosef Zain Adele Boris Cleo Dario Esme Farah
		Gus Hana Ivo Jana Kai Lior Mira Nils Otto Paz Rui Sana Teo Uri Vera Wim Yara Zoe`)
	bPlaces = strings.Fields(`Porto Lyon Graz Bergen Turku Gdansk Brno Cork Malaga Bari Ghent Aarhus
		Tartu Split Cluj Plovdiv Izmir Tunis Accra Durban Pune Hanoi Cebu Busan Sapporo Perth Hobart
		Quebec Halifax Tucson Boise Oaxaca Cusco Rosario Recife Valparaiso`)
	bThings = strings.Fields(`invoice passport bicycle piano recipe lease contract visa ticket laptop
		camera garden kitchen dentist surgery marathon concert wedding interview mortgage salary
		vaccine allergy peanuts gluten shellfish coffee tea sushi ramen pasta curry tacos bagels
		kayak tent guitar violin novel podcast museum library bakery pharmacy insurance budget
		deadline report meeting workshop conference flight hotel apartment printer keyboard`)
	bAdjs  = strings.Fields(`new old cheap costly early late quiet loud urgent yearly weekly spicy sweet broken fixed lost secret`)
	bVerbs = strings.Fields(`booked cancelled renewed paid signed moved visited missed repaired ordered returned postponed`)
	bRels  = strings.Fields(`sister brother mother father cousin friend neighbour colleague partner uncle aunt`)
)

type gen struct{ r *rand.Rand }

func (g gen) w(ws []string) string { return ws[g.r.IntN(len(ws))] }

func (g gen) memory(ns engram.Namespace) *engram.Memory {
	who, where, what := g.w(bPeople), g.w(bPlaces), g.w(bThings)
	var v string
	switch g.r.IntN(4) {
	case 0:
		v = fmt.Sprintf("%s %s the %s %s in %s and found it %s.", who, g.w(bVerbs), g.w(bAdjs), what, where, g.w(bAdjs))
	case 1:
		v = fmt.Sprintf("%s's %s lives in %s and cares about the %s and the %s.", who, g.w(bRels), where, what, g.w(bThings))
	case 2:
		v = fmt.Sprintf("Remember: the %s %s for %s is due before the %s in %s.", g.w(bAdjs), what, who, g.w(bThings), where)
	default:
		v = fmt.Sprintf("%s avoids %s but likes %s with %s when in %s.", who, what, g.w(bThings), g.w(bThings), where)
	}
	m := storetest.Memory(ns, v)
	m.Abstraction = who + " and the " + what
	m.Cues = []string{who, where}
	return m
}

func (g gen) query() string {
	switch g.r.IntN(3) {
	case 0:
		return fmt.Sprintf("what did %s do with the %s", g.w(bPeople), g.w(bThings))
	case 1:
		return fmt.Sprintf("%s %s in %s", g.w(bAdjs), g.w(bThings), g.w(bPlaces))
	default:
		return fmt.Sprintf("where does %s's %s live", g.w(bPeople), g.w(bRels))
	}
}

func tenantNS(i int) engram.Namespace {
	return engram.Namespace{Org: fmt.Sprintf("org%04d", i), Project: "app", User: "u1"}
}

// corpus is a store holding one of the generated corpora.
type corpus struct {
	st     engram.Store
	url    string         // PostgreSQL only: where it is
	scopes []engram.Scope // the namespaces it holds
}

var corpora struct {
	sync.Mutex
	m   map[string]*corpus
	dir string // SQLite files
}

// benchStore opens an empty store of the given backend that lives until
// the process ends.
func benchStore(b *testing.B, backend string) (engram.Store, string) {
	switch backend {
	case "postgres":
		p := adminPool(b)
		name := "bench_" + strings.ToLower(engram.NewID())
		if _, err := p.Exec(ctx, "CREATE SCHEMA "+name); err != nil {
			b.Fatal(err)
		}
		spare.Lock()
		spare.all = append(spare.all, name) // dropped by TestMain
		spare.Unlock()
		u := withParam(b, testURL(b), "search_path", name)
		db, err := postgres.Open(ctx, u, postgres.Options{Logger: quiet, MaxConns: 64})
		if err != nil {
			b.Fatal(err)
		}
		return db, u
	case "sqlite":
		if corpora.dir == "" {
			dir, err := os.MkdirTemp("", "engram-pg-bench-")
			if err != nil {
				b.Fatal(err)
			}
			corpora.dir = dir
		}
		db, err := sqlite.Open(ctx, filepath.Join(corpora.dir, engram.NewID()+".db"))
		if err != nil {
			b.Fatal(err)
		}
		return db, ""
	}
	b.Fatalf("unknown backend %s", backend)
	return nil, ""
}

// load returns the corpus shape ("1ns" or "manyns") in backend, building it
// the first time.
func load(b *testing.B, backend, shape string) *corpus {
	if backend == "postgres" {
		testURL(b)
	}
	corpora.Lock()
	defer corpora.Unlock()
	key := backend + "/" + shape
	if c := corpora.m[key]; c != nil {
		return c
	}
	st, u := benchStore(b, backend)
	c := &corpus{st: st, url: u}
	g := gen{rand.New(rand.NewPCG(1, 2))}
	var nss []engram.Namespace
	perNS := benchCorpus
	if shape == "manyns" {
		for i := range benchTenants {
			nss = append(nss, tenantNS(i))
		}
		perNS = benchPerTenant
	} else {
		nss = []engram.Namespace{nsU1}
	}
	start := time.Now()
	for _, ns := range nss {
		c.scopes = append(c.scopes, engram.ScopeOf(ns))
		for done := 0; done < perNS; {
			n := min(1000, perNS-done)
			err := st.Update(ctx, func(tx engram.Tx) error {
				for range n {
					if err := tx.InsertMemory(ctx, g.memory(ns)); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			done += n
		}
	}
	b.Logf("%s: loaded %d memories in %d namespaces in %v", key, perNS*len(nss), len(nss), time.Since(start).Round(time.Millisecond))
	if corpora.m == nil {
		corpora.m = map[string]*corpus{}
	}
	corpora.m[key] = c
	return c
}

// closeCorpora closes the benchmark stores and removes the SQLite files;
// TestMain drops the PostgreSQL schemas afterwards.
func closeCorpora() {
	corpora.Lock()
	defer corpora.Unlock()
	for _, c := range corpora.m {
		c.st.Close()
	}
	if corpora.dir != "" {
		os.RemoveAll(corpora.dir)
	}
}

var backends = []string{"postgres", "sqlite"}

// reportLatency reports the median and 95th percentile of lat.
func reportLatency(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	at := func(q float64) float64 {
		return float64(lat[int(q*float64(len(lat)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.95), "p95-ms")
}

// BenchmarkSearch measures full-text search latency (View + SearchText,
// k=10) over each corpus; every query is scoped to one namespace.
func BenchmarkSearch(b *testing.B) {
	for _, shape := range []string{"1ns", "manyns"} {
		for _, backend := range backends {
			b.Run(shape+"/"+backend, func(b *testing.B) {
				c := load(b, backend, shape)
				g := gen{rand.New(rand.NewPCG(3, 4))}
				lat := make([]time.Duration, 0, b.N)
				hits := 0
				b.ResetTimer()
				for i := range b.N {
					s, q := c.scopes[i%len(c.scopes)], g.query()
					start := time.Now()
					err := c.st.View(ctx, func(r engram.Reader) error {
						hs, err := r.SearchText(ctx, s, q, engram.MemoryFilter{}, 10)
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
				reportLatency(b, lat)
				b.ReportMetric(float64(hits)/float64(b.N), "hits/op")
			})
		}
	}
}

// clients runs b.N operations on n goroutines, each calling op with its
// worker number (from 0) until the operations are used up, and returns the
// latencies of op by kind (op returns its kind).
func clients(b *testing.B, n int, op func(worker int) (string, error)) map[string][]time.Duration {
	var (
		ops sync.WaitGroup
		mu  sync.Mutex
		lat = map[string][]time.Duration{}
		got atomic.Int64
	)
	for w := range n {
		ops.Go(func() {
			mine := map[string][]time.Duration{}
			for got.Add(1) <= int64(b.N) {
				start := time.Now()
				kind, err := op(w)
				mine[kind] = append(mine[kind], time.Since(start))
				if err != nil {
					b.Error(err)
					return
				}
			}
			mu.Lock()
			for k, v := range mine {
				lat[k] = append(lat[k], v...)
			}
			mu.Unlock()
		})
	}
	ops.Wait()
	return lat
}

// addOne adds m with its version and audit entry in one transaction, as
// the engine's AddMemories of one memory does.
func addOne(st engram.Store, m *engram.Memory) error {
	return st.Update(ctx, func(tx engram.Tx) error {
		if err := tx.InsertMemory(ctx, m); err != nil {
			return err
		}
		if err := tx.InsertVersion(ctx, storetest.Version(m, 1, engram.OpAdd)); err != nil {
			return err
		}
		return tx.InsertAudit(ctx, storetest.Audit(m.Namespace, "memory.add", m.ID))
	})
}

// BenchmarkAdd measures adding one memory per transaction (with its
// version and audit entry) by one client and by 16 concurrent ones, into a
// store already holding the many-namespace corpus; each client writes to a
// namespace of its own.
func BenchmarkAdd(b *testing.B) {
	for _, n := range []int{1, 16} {
		for _, backend := range backends {
			b.Run(fmt.Sprintf("clients=%d/%s", n, backend), func(b *testing.B) {
				c := load(b, backend, "manyns")
				gens := make([]gen, n)
				for w := range gens {
					gens[w] = gen{rand.New(rand.NewPCG(uint64(w), 9))}
				}
				b.ResetTimer()
				lat := clients(b, n, func(w int) (string, error) {
					return "add", addOne(c.st, gens[w].memory(tenantNS(w)))
				})
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "adds/s")
				reportLatency(b, lat["add"])
			})
		}
	}
}

// mixedStores loads the many-namespace corpus of setup's backend
// ("postgres", "sqlite") and returns its store, plus, for
// "postgres-2servers", a second store over the same database, closed when
// the benchmark ends.
func mixedStores(b *testing.B, setup string) []engram.Store {
	c := load(b, strings.TrimSuffix(setup, "-2servers"), "manyns")
	stores := []engram.Store{c.st}
	if setup == "postgres-2servers" {
		second, err := postgres.Open(ctx, c.url, postgres.Options{Logger: quiet, MaxConns: 64})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { second.Close() })
		stores = append(stores, second)
	}
	return stores
}

// BenchmarkMixed runs 50 concurrent clients, each doing one add for every
// nine searches in its own namespace of the many-namespace corpus, against
// one store, and (PostgreSQL) against two stores over one database, as two
// servers would be. p50/p95 are of the searches.
func BenchmarkMixed(b *testing.B) {
	const n = 50
	for _, setup := range []string{"postgres", "postgres-2servers", "sqlite"} {
		b.Run(setup, func(b *testing.B) {
			stores := mixedStores(b, setup)
			gens := make([]gen, n)
			calls := make([]int, n)
			for w := range gens {
				gens[w] = gen{rand.New(rand.NewPCG(uint64(w), 11))}
			}
			b.ResetTimer()
			lat := clients(b, n, func(w int) (string, error) {
				st, g, ns := stores[w%len(stores)], gens[w], tenantNS(100+w)
				calls[w]++
				if calls[w]%10 == 0 {
					return "add", addOne(st, g.memory(ns))
				}
				q := g.query()
				return "search", st.View(ctx, func(r engram.Reader) error {
					_, err := r.SearchText(ctx, engram.ScopeOf(ns), q, engram.MemoryFilter{}, 10)
					return err
				})
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
			reportLatency(b, lat["search"])
			if a := lat["add"]; len(a) > 0 {
				slices.Sort(a)
				b.ReportMetric(float64(a[int(0.95*float64(len(a)-1))].Microseconds())/1000, "add-p95-ms")
			}
		})
	}
}

// BenchmarkMixedHTTP is BenchmarkMixed through the whole server: 50
// concurrent HTTP clients, each doing one AddMemories for every nine
// Searches (k=10, BM25 channel, no embedder) in its own namespace of the
// many-namespace corpus, against one engram server over SQLite, one over
// PostgreSQL, and two over one PostgreSQL database (clients alternate
// between them). p50/p95 are of the searches.
func BenchmarkMixedHTTP(b *testing.B) {
	const n = 50
	for _, setup := range []string{"postgres", "postgres-2servers", "sqlite"} {
		b.Run(setup, func(b *testing.B) {
			stores := mixedStores(b, setup)
			var clientsOf []*engramhttp.Client
			for _, st := range stores {
				eng, err := engine.New(ctx, st, engine.Options{Logger: quiet})
				if err != nil {
					b.Fatal(err)
				}
				defer eng.Close()
				srv := httptest.NewServer(engramhttp.NewServer(eng, engramhttp.ServerOptions{Logger: quiet}))
				defer srv.Close()
				// Keep a connection per client open, as 50 long-lived
				// clients would.
				hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n}}
				defer hc.CloseIdleConnections()
				clientsOf = append(clientsOf, engramhttp.NewClient(srv.URL, engramhttp.ClientOptions{HTTPClient: hc}))
			}
			gens := make([]gen, n)
			calls := make([]int, n)
			for w := range gens {
				gens[w] = gen{rand.New(rand.NewPCG(uint64(w), 13))}
			}
			b.ResetTimer()
			lat := clients(b, n, func(w int) (string, error) {
				cl, g, ns := clientsOf[w%len(clientsOf)], gens[w], tenantNS(200+w)
				calls[w]++
				if calls[w]%10 == 0 {
					_, err := cl.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: ns, Memories: []engram.Memory{{Value: g.memory(ns).Value}}})
					return "add", err
				}
				_, err := cl.Search(ctx, engram.SearchRequest{Scope: engram.ScopeOf(ns), Query: g.query(), K: 10, Channels: []string{"bm25"}})
				return "search", err
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
			reportLatency(b, lat["search"])
			if a := lat["add"]; len(a) > 0 {
				slices.Sort(a)
				b.ReportMetric(float64(a[int(0.95*float64(len(a)-1))].Microseconds())/1000, "add-p95-ms")
			}
		})
	}
}

// BenchmarkSearchEngine measures full-text search through the engine (the
// bm25 channel alone, k=10) over the one-namespace corpus, with the
// engine's in-memory index ("index") and with the store's own full-text
// index ("store"), on both backends; cold-ms is the first search, which
// loads the in-memory index.
func BenchmarkSearchEngine(b *testing.B) {
	for _, backend := range backends {
		for _, mode := range []struct {
			name  string
			limit int
		}{{"index", 0}, {"store", -1}} {
			b.Run(backend+"/"+mode.name, func(b *testing.B) {
				c := load(b, backend, "1ns")
				e, err := engine.New(ctx, c.st, engine.Options{TextIndexLimit: mode.limit, AccessFlush: time.Hour, Logger: quiet})
				if err != nil {
					b.Fatal(err)
				}
				defer e.Close()
				req := engram.SearchRequest{Scope: c.scopes[0], Query: "warm up", K: 10, Channels: []string{engine.ChannelBM25}}
				start := time.Now()
				if _, err := e.Search(ctx, req); err != nil { // loads the index
					b.Fatal(err)
				}
				cold := time.Since(start)
				g := gen{rand.New(rand.NewPCG(3, 4))}
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
				reportLatency(b, lat)
				b.ReportMetric(float64(hits)/float64(b.N), "hits/op")
				b.ReportMetric(float64(cold.Microseconds())/1000, "cold-ms")
			})
		}
	}
}

// BenchmarkSearchEngineCold measures the first full-text search of a
// freshly started engine over the one-namespace corpus (the bm25 channel
// alone), which loads the in-memory text index: read and analysed from
// the store ("store"), or loaded from the file a previous engine saved in
// its index directory ("file"). Each op starts an engine, searches once
// and closes it; only the search is timed.
func BenchmarkSearchEngineCold(b *testing.B) {
	for _, backend := range backends {
		for _, mode := range []string{"store", "file"} {
			b.Run(backend+"/"+mode, func(b *testing.B) {
				c := load(b, backend, "1ns")
				dir := ""
				if mode == "file" {
					dir = b.TempDir()
				}
				req := engram.SearchRequest{Scope: c.scopes[0], Query: "booked the cheap passport in Porto", K: 10, Channels: []string{engine.ChannelBM25}}
				search := func() time.Duration {
					e, err := engine.New(ctx, c.st, engine.Options{IndexDir: dir, AccessFlush: time.Hour, Logger: quiet})
					if err != nil {
						b.Fatal(err)
					}
					defer e.Close()
					start := time.Now()
					res, err := e.Search(ctx, req)
					took := time.Since(start)
					if err != nil || len(res.Hits) == 0 {
						b.Fatalf("search found %v (%v)", res, err)
					}
					return took
				}
				if mode == "file" {
					search() // builds the index from the store and saves it on Close
				}
				b.ResetTimer()
				var total time.Duration
				for range b.N {
					total += search()
				}
				b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "cold-ms")
			})
		}
	}
}

// BenchmarkRead measures a read of the change log, the statement every
// search starts with, as View runs it (one statement, or two) and as
// ReadFresh does, on an otherwise idle database: the cost of the round
// trips around it.
//
//	bash scripts/pg.sh go test -run '^$' -bench BenchmarkRead -count 5 ./postgres/
func BenchmarkRead(b *testing.B) {
	db := openFresh(b, postgres.Options{})
	storetest.Put(b, db, storetest.Memory(nsU1, "a change to read"))
	changes := func(r engram.Reader) error {
		_, _, err := r.Changes(ctx, scU1, 0)
		return err
	}
	for _, c := range []struct {
		name string
		read func(fn func(engram.Reader) error) error
		n    int
	}{
		{"view-1", func(fn func(engram.Reader) error) error { return db.View(ctx, fn) }, 1},
		{"view-2", func(fn func(engram.Reader) error) error { return db.View(ctx, fn) }, 2},
		{"fresh-1", func(fn func(engram.Reader) error) error { return db.ReadFresh(ctx, fn) }, 1},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				err := c.read(func(r engram.Reader) error {
					for range c.n {
						if err := changes(r); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
