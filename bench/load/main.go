// Command load measures engram serve under many concurrent clients, each
// with its own API key bound to its own user: it starts the server (SQLite,
// authentication on) in a fresh data directory, creates an admin key with
// `engram keys create` and one write key per client through POST /v1/keys,
// runs a mix of add-episodes and search for a while, and then reads back
// every episode the server acknowledged. It prints latency percentiles per
// operation, the error count and the lost writes (both must be 0), and
// exits 1 when either is not. It prints the throughput (completed
// requests per second) too. With --store URL the server keeps its data in
// that PostgreSQL database instead of a data directory.
//
// By default each client sends its next request when the last is
// answered (closed loop). With --rates the requests arrive instead at a
// set rate whatever the answers take (open loop, Poisson arrivals), one
// step per rate, and it prints the highest rate whose p99 stayed under
// 100 ms with no error.
//
//	go build -o bin/engram ./cmd/engram
//	go run ./bench/load --engram bin/engram --clients 100 --duration 60s
//	go run ./bench/load --engram bin/engram --add-share 0.1 --rates 50,100,150 --duration 5m
//	bash scripts/pg.sh sh -c 'go run ./bench/load --engram bin/engram --store "$ENGRAM_TEST_POSTGRES_URL"'
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	bin := flag.String("engram", "bin/engram", "the engram `binary` to serve with")
	clients := flag.Int("clients", 100, "concurrent clients, each with its own key and user")
	duration := flag.Duration("duration", 60*time.Second, "how long the clients send requests")
	addShare := flag.Float64("add-share", 0.5, "share of requests that add an episode; the rest search")
	embedder := flag.String("embedder", "use-lite", "the server's --embedder (use-lite or none)")
	store := flag.String("store", "", "PostgreSQL `URL` for the server's --store; empty: SQLite in a fresh data directory")
	fulltext := flag.String("fulltext", "on", "the store's full-text index (engram fulltext) during the run: on or off")
	rates := flag.String("rates", "", "open loop: comma-separated `arrival rates` (requests a second, Poisson arrivals spread over the clients' keys), each run for --duration in turn on one server; empty: closed loop, each client sending its next request when the last is answered")
	flag.Parse()
	steps, err := parseRates(*rates)
	if err != nil {
		fmt.Fprintln(os.Stderr, "load: --rates:", err)
		os.Exit(2)
	}
	if *fulltext != "on" && *fulltext != "off" {
		fmt.Fprintln(os.Stderr, "load: --fulltext is on or off, not", *fulltext)
		os.Exit(2)
	}
	if err := run(*bin, *clients, *duration, *addShare, *embedder, *store, *fulltext, steps); err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

// project is the project every client writes to and searches.
var project = "bench"

// result is what one client saw.
type result struct {
	mu     sync.Mutex
	lat    map[string][]time.Duration
	errors []string
	acked  []string // episode ids the server acknowledged
	user   string
	secret string
}

func run(bin string, clients int, duration time.Duration, addShare float64, embedder, store, fulltext string, rates []float64) error {
	dir, err := os.MkdirTemp("", "engram-load-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	// where names the store for the engram commands: the fresh data
	// directory, or the PostgreSQL database (with no saved vector index,
	// so runs against one database do not share files).
	where, backend := []string{"--data", dir}, "SQLite"
	if store != "" {
		where, backend = []string{"--store", store}, "PostgreSQL"
		// A database may outlive a run: each run writes to its own project.
		project = fmt.Sprintf("bench-%d", time.Now().UnixNano())
	}
	out, err := exec.Command(bin, append([]string{"keys", "create", "--org", "load", "--project", project, "--role", "admin", "--name", "load-admin"}, where...)...).Output()
	if err != nil {
		return fmt.Errorf("engram keys create: %w", err)
	}
	admin := strings.TrimSpace(string(out))
	if out, err := exec.Command(bin, append([]string{"fulltext", fulltext}, where...)...).CombinedOutput(); err != nil {
		return fmt.Errorf("engram fulltext %s: %w: %s", fulltext, err, out)
	}
	addr, err := freeAddr()
	if err != nil {
		return err
	}
	args := append([]string{"serve", "--addr", addr, "--embedder", embedder, "--log-level", "warn"}, where...)
	if store != "" {
		args = append(args, "--index-dir", "off")
	}
	srv := exec.Command(bin, args...)
	srv.Stderr = os.Stderr
	if err := srv.Start(); err != nil {
		return err
	}
	defer func() { _ = srv.Process.Signal(os.Interrupt); _ = srv.Wait() }()
	base := "http://" + addr
	hc := &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: clients + 10}}
	if err := waitReady(hc, base); err != nil {
		return err
	}

	res := make([]*result, clients)
	for i := range res {
		r := &result{lat: map[string][]time.Duration{}, user: fmt.Sprintf("user-%03d", i)}
		var key struct{ Secret string }
		spec := map[string]any{"namespace": map[string]string{"org": "load", "project": project, "user": r.user}, "role": "write", "name": r.user}
		if err := call(hc, base, admin, "POST", "/v1/keys", spec, &key, http.StatusCreated); err != nil {
			return fmt.Errorf("create key %d: %w", i, err)
		}
		r.secret = key.Secret
		res[i] = r
	}
	mode := fmt.Sprintf("%d clients with their own keys, closed loop, for %v", clients, duration)
	if len(rates) > 0 {
		mode = fmt.Sprintf("open loop over %d clients' keys at %v requests/s, %v each", clients, rates, duration)
	}
	fmt.Printf("server %s (%s, full-text index %s, auth on, embedder %s); %s; %.0f%% adds\n", addr, backend, fulltext, embedder, mode, 100*addShare)
	if len(rates) > 0 {
		return runOpen(hc, base, res, rates, duration, addShare, srv.Process.Pid)
	}

	cpu0 := procCPU(srv.Process.Pid)
	start := time.Now()
	deadline := start.Add(duration)
	var wg sync.WaitGroup
	for i, r := range res {
		wg.Add(1)
		go func() {
			defer wg.Done()
			drive(hc, base, r, i, deadline, addShare)
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu := procCPU(srv.Process.Pid) - cpu0
	_, errs := summarize(res, elapsed, cpu)
	return verdict(errs, verify(hc, base, res))
}

// drive sends requests for one client until deadline, each as soon as
// the one before is answered (closed loop).
func drive(hc *http.Client, base string, r *result, i int, deadline time.Time, addShare float64) {
	rng := rand.New(rand.NewPCG(uint64(i), 7))
	for n := 0; time.Now().Before(deadline); n++ {
		start := time.Now()
		op, id, err := one(hc, base, r, rng, n, addShare)
		r.record(op, id, time.Since(start), err)
	}
}

// topics are what the clients talk and ask about.
var topics = []string{"hiking in the Alps", "Spanish lessons", "a new espresso machine", "the trip to Shanghai", "Oma's birthday", "learning Go"}

// asked counts the questions of the whole run, which numbers each one so
// that no two are the same, across clients and rate steps alike.
var asked atomic.Int64

// openers begin the clients' questions.
var openers = []string{"what did I say about", "remind me of", "what do you know about", "did I mention", "anything new on", "what was the plan for"}

// one sends client r's n-th request: an add of one episode with
// probability addShare, else a search. It returns the operation, the
// acknowledged episode's id (adds only) and the request's error.
func one(hc *http.Client, base string, r *result, rng *rand.Rand, n int, addShare float64) (op, id string, err error) {
	topic := topics[rng.IntN(len(topics))]
	if rng.Float64() >= addShare {
		// Every question differs, as real ones do, so none is answered
		// from the embedder's cache.
		q := fmt.Sprintf("%s %s, around question %d?", openers[rng.IntN(len(openers))], topic, asked.Add(1))
		body := map[string]any{"scope": map[string]string{"org": "load", "project": project, "user": r.user}, "query": q, "k": 5}
		return "search", "", call(hc, base, r.secret, "POST", "/v1/search", body, nil, http.StatusOK)
	}
	var ack struct {
		Episodes []struct{ ID string }
	}
	body := map[string]any{
		"namespace": map[string]string{"org": "load", "project": project, "user": r.user},
		"episodes":  []map[string]any{{"role": "user", "content": fmt.Sprintf("Message %d of %s: I talked about %s today.", n, r.user, topic)}},
	}
	err = call(hc, base, r.secret, "POST", "/v1/episodes", body, &ack, http.StatusCreated)
	if err == nil && len(ack.Episodes) == 1 {
		id = ack.Episodes[0].ID
	}
	return "add_episodes", id, err
}

// record keeps one request's latency, acknowledged id and error; safe for
// the concurrent requests of an open loop.
func (r *result) record(op, id string, lat time.Duration, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lat[op] = append(r.lat[op], lat)
	if id != "" {
		r.acked = append(r.acked, id)
	}
	if err != nil {
		r.errors = append(r.errors, op+": "+err.Error())
	}
}

// verify reads back every acknowledged episode with its client's key and
// returns how many are missing. A read the server's rate limit refuses
// (429) is tried again after the second it asks for, so that only an
// episode the server does not have counts as lost.
func verify(hc *http.Client, base string, res []*result) int {
	lost := 0
	for _, r := range res {
		for _, id := range r.acked {
			q := "/v1/episodes/" + id + "?org=load&project=" + project + "&user=" + r.user
			err := call(hc, base, r.secret, "GET", q, nil, nil, http.StatusOK)
			for try := 0; try < 30 && isStatus(err, http.StatusTooManyRequests); try++ {
				time.Sleep(time.Second)
				err = call(hc, base, r.secret, "GET", q, nil, nil, http.StatusOK)
			}
			if err != nil {
				fmt.Printf("lost write: episode %s of %s: %v\n", id, r.user, err)
				lost++
			}
		}
	}
	return lost
}

// summarize prints what the clients saw: per operation the latency
// percentiles, the throughput and cpu, the server's processor time during
// the run (per request it is a cost that other jobs on a shared machine
// do not inflate, unlike the throughput), and the first errors. It
// returns the highest p99 of the operations and the number of errors.
func summarize(res []*result, elapsed, cpu time.Duration) (worstP99 time.Duration, errCount int) {
	all := map[string][]time.Duration{}
	var errs []string
	acked := 0
	for _, r := range res {
		for op, l := range r.lat {
			all[op] = append(all[op], l...)
		}
		errs = append(errs, r.errors...)
		acked += len(r.acked)
	}
	for _, op := range []string{"add_episodes", "search"} {
		l := all[op]
		slices.Sort(l)
		if len(l) == 0 {
			continue
		}
		worstP99 = max(worstP99, pct(l, 99))
		fmt.Printf("%-13s n=%6d  p50=%8v  p95=%8v  p99=%8v  max=%8v\n", op, len(l), pct(l, 50), pct(l, 95), pct(l, 99), l[len(l)-1])
	}
	n := len(all["add_episodes"]) + len(all["search"])
	fmt.Printf("throughput=%.1f ops/s (%d requests in %v)\n", float64(n)/elapsed.Seconds(), n, elapsed.Round(time.Millisecond))
	if cpu > 0 && n > 0 {
		fmt.Printf("server cpu=%v (%.2f ms per request, %.0f%% of one core)\n", cpu.Round(10*time.Millisecond), float64(cpu.Microseconds())/1000/float64(n), 100*cpu.Seconds()/elapsed.Seconds())
	}
	fmt.Printf("errors=%d  acknowledged episodes=%d\n", len(errs), acked)
	for i, e := range errs {
		if i == 10 {
			fmt.Printf("... and %d more errors\n", len(errs)-10)
			break
		}
		fmt.Println("error:", e)
	}
	return worstP99, len(errs)
}

// verdict prints the lost writes and fails when there were errors or lost
// writes.
func verdict(errs, lost int) error {
	fmt.Printf("lost writes=%d\n", lost)
	if errs > 0 || lost > 0 {
		return fmt.Errorf("%d errors, %d lost writes", errs, lost)
	}
	return nil
}

func pct(sorted []time.Duration, p int) time.Duration {
	i := (len(sorted)*p+99)/100 - 1
	return sorted[max(0, min(i, len(sorted)-1))].Round(100 * time.Microsecond)
}

// call sends one JSON request with the key and decodes the answer into out
// (when not nil); a status other than want is an error.
// statusError is a response with another status than the one wanted.
type statusError struct {
	code int
	msg  string
}

func (e *statusError) Error() string { return e.msg }

// isStatus reports whether err is a response with status code.
func isStatus(err error, code int) bool {
	var se *statusError
	return errors.As(err, &se) && se.code == code
}

func call(hc *http.Client, base, key, method, path string, body, out any, want int) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(context.Background(), method, base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != want {
		return &statusError{resp.StatusCode, fmt.Sprintf("%s %s: %d %s", method, path, resp.StatusCode, strings.TrimSpace(string(b)))}
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

// procCPU returns the user and system time the process pid has used, from
// /proc (0 where there is none, and for the PostgreSQL server's own work).
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The fields after the command name, which is in parentheses and may
	// hold spaces: utime and stime are the 12th and 13th of them, in ticks
	// of 1/100 s (USER_HZ).
	i := bytes.LastIndexByte(b, ')')
	f := strings.Fields(string(b[i+1:]))
	if i < 0 || len(f) < 13 {
		return 0
	}
	var ticks int64
	for _, s := range f[11:13] {
		var t int64
		fmt.Sscan(s, &t)
		ticks += t
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func waitReady(hc *http.Client, base string) error {
	for end := time.Now().Add(2 * time.Minute); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if resp, err := hc.Get(base + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
	}
	return fmt.Errorf("the server at %s did not become ready", base)
}
