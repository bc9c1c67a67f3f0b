// Command ingest measures how fast engram serve ingests conversation turns
// over HTTP: it starts each given binary on a fresh data directory (on
// /dev/shm when there is one, so SQLite's fsync does not dominate),
// posts every LoCoMo session as one POST /v1/episodes (speaker, content and
// session time, as engram eval and bench/mem0 do) from --clients
// concurrent clients, each conversation to its own user, and prints turns
// per second and the latency of a request. Turns per second are given
// twice: until the last request was answered (acknowledged), and until
// the background jobs the requests left (embedding) were done (drained);
// the server's CPU time counts the jobs. With --per-turn each request
// carries one turn, as an agent adding every turn does: the sessions are
// dealt round-robin to --clients writers, each its own user. With two
// binaries it alternates them --rounds times and prints the ratio of the
// medians, so a shared machine's load falls on both. A BINARY may carry
// serve flags after a space ("/tmp/engram --embed-batch=false"), to
// compare one binary with itself.
//
//	go build -o /tmp/new ./cmd/engram
//	go run ./bench/ingest --data ../shared/datasets/locomo/locomo10.json /tmp/old /tmp/new
//	go run ./bench/ingest --per-turn --clients 50 --limit 3 "/tmp/new --embed-batch=false" /tmp/new
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

func main() {
	data := flag.String("data", "../shared/datasets/locomo/locomo10.json", "the LoCoMo `file` (locomo10.json)")
	clients := flag.Int("clients", 1, "concurrent clients; each takes whole conversations")
	rounds := flag.Int("rounds", 3, "runs of each binary, alternated")
	limit := flag.Int("limit", 0, "ingest only the first N conversations (0: all)")
	perTurn := flag.Bool("per-turn", false, "one turn a request, the sessions dealt to --clients writers of their own user")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: ingest [--data FILE] [--clients N] [--rounds N] [--limit N] [--per-turn] BINARY [BINARY]")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() < 1 || flag.NArg() > 2 || *clients < 1 || *rounds < 1 {
		flag.Usage()
		os.Exit(2)
	}
	convs, err := readLoCoMo(*data, *limit)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ingest:", err)
		os.Exit(2)
	}
	work := bySession(convs)
	if *perTurn {
		work = byTurn(convs, *clients)
	}
	if err := run(flag.Args(), work, *clients, *rounds); err != nil {
		fmt.Fprintln(os.Stderr, "ingest:", err)
		os.Exit(1)
	}
}

type episode struct {
	Role       string `json:"role"`
	Speaker    string `json:"speaker"`
	Content    string `json:"content"`
	OccurredAt string `json:"occurred_at"`
}

// conversation is one LoCoMo sample: its sessions in order.
type conversation struct {
	id       string
	sessions [][]episode
	turns    int
}

// A stream is what one client posts in order to one user: each request's
// episodes.
type stream struct {
	user     string
	requests [][]episode
}

// bySession makes a stream of each conversation, a request a session.
func bySession(convs []conversation) []stream {
	out := make([]stream, len(convs))
	for i, c := range convs {
		out[i] = stream{user: c.id, requests: c.sessions}
	}
	return out
}

// byTurn deals the sessions of convs round-robin to n streams of users of
// their own, a request a turn.
func byTurn(convs []conversation, n int) []stream {
	out := make([]stream, n)
	for i := range out {
		out[i].user = fmt.Sprintf("writer-%d", i)
	}
	k := 0
	for _, c := range convs {
		for _, eps := range c.sessions {
			for _, ep := range eps {
				out[k%n].requests = append(out[k%n].requests, []episode{ep})
			}
			k++
		}
	}
	return out
}

var sessionKey = regexp.MustCompile(`^session_(\d+)$`)

// readLoCoMo parses the file as engram eval does: turn text plus
// " [shares a photo: CAPTION]", event time = session time + i seconds,
// empty turns skipped.
func readLoCoMo(path string, limit int) ([]conversation, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var samples []struct {
		SampleID     string                     `json:"sample_id"`
		Conversation map[string]json.RawMessage `json:"conversation"`
	}
	if err := json.Unmarshal(raw, &samples); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if limit > 0 && limit < len(samples) {
		samples = samples[:limit]
	}
	var out []conversation
	for _, s := range samples {
		c := conversation{id: s.SampleID}
		var nums []int
		for k := range s.Conversation {
			if m := sessionKey.FindStringSubmatch(k); m != nil {
				n, _ := strconv.Atoi(m[1])
				nums = append(nums, n)
			}
		}
		sort.Ints(nums)
		for _, n := range nums {
			var turns []struct{ Speaker, Text, Blip_caption string }
			var date string
			if err := json.Unmarshal(s.Conversation[fmt.Sprintf("session_%d", n)], &turns); err != nil {
				return nil, fmt.Errorf("%s session_%d: %w", s.SampleID, n, err)
			}
			if err := json.Unmarshal(s.Conversation[fmt.Sprintf("session_%d_date_time", n)], &date); err != nil {
				return nil, fmt.Errorf("%s session_%d_date_time: %w", s.SampleID, n, err)
			}
			at, err := time.ParseInLocation("3:04 pm on 2 January, 2006", strings.TrimSpace(date), time.UTC)
			if err != nil {
				return nil, fmt.Errorf("%s session_%d_date_time: %w", s.SampleID, n, err)
			}
			var eps []episode
			for i, t := range turns {
				content := t.Text
				if t.Blip_caption != "" {
					content = strings.TrimSpace(content + " [shares a photo: " + t.Blip_caption + "]")
				}
				if strings.TrimSpace(content) == "" {
					continue
				}
				eps = append(eps, episode{Role: "user", Speaker: t.Speaker, Content: content,
					OccurredAt: at.Add(time.Duration(i) * time.Second).Format(time.RFC3339)})
			}
			if len(eps) > 0 {
				c.sessions = append(c.sessions, eps)
				c.turns += len(eps)
			}
		}
		out = append(out, c)
	}
	return out, nil
}

func run(bins []string, work []stream, clients, rounds int) error {
	turns := 0
	for _, w := range work {
		for _, r := range w.requests {
			turns += len(r)
		}
	}
	runs := make([][]result, len(bins))
	for r := range rounds {
		for i, bin := range bins {
			res, err := once(bin, work, clients)
			if err != nil {
				return fmt.Errorf("%s: %w", bin, err)
			}
			runs[i] = append(runs[i], res)
			fmt.Printf("round %d  %-40s %d turns  %7.1f turns/s acknowledged  %7.1f drained  %7.1f turns/cpu-s  request p50 %6.1f ms  p95 %6.1f ms\n",
				r+1, bin, turns, res.rate, res.drained, res.perCPU, res.p50, res.p95)
		}
	}
	med := make([]result, len(bins))
	for i, bin := range bins {
		m := func(f func(result) float64) float64 {
			xs := make([]float64, len(runs[i]))
			for j, r := range runs[i] {
				xs[j] = f(r)
			}
			return median(xs)
		}
		med[i] = result{rate: m(func(r result) float64 { return r.rate }), drained: m(func(r result) float64 { return r.drained }),
			perCPU: m(func(r result) float64 { return r.perCPU }), p50: m(func(r result) float64 { return r.p50 }), p95: m(func(r result) float64 { return r.p95 })}
		fmt.Printf("median   %-40s %7.1f turns/s acknowledged  %7.1f drained  %7.1f turns/cpu-s  request p50 %6.1f ms  p95 %6.1f ms (clients %d)\n",
			bin, med[i].rate, med[i].drained, med[i].perCPU, med[i].p50, med[i].p95, clients)
	}
	if len(bins) == 2 {
		a, b := med[0], med[1]
		fmt.Printf("ratio    second/first %.2fx turns/s acknowledged, %.2fx drained, %.2fx turns/cpu-s, %.2fx request p50\n",
			b.rate/a.rate, b.drained/a.drained, b.perCPU/a.perCPU, b.p50/a.p50)
	}
	return nil
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// result is what one run measured.
type result struct {
	rate    float64 // turns acknowledged per second of wall clock
	drained float64 // turns per second of wall clock until their background jobs were done
	perCPU  float64 // turns per CPU-second of the server, background jobs included
	p50     float64 // request latency, milliseconds
	p95     float64
}

// once serves bin on a fresh data directory and posts every stream of
// work, returning turns per second of wall clock, turns per CPU-second of
// the server (which a loaded machine changes less) and the requests'
// latency.
func once(bin string, work []stream, clients int) (result, error) {
	parent := ""
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		parent = "/dev/shm"
	}
	dir, err := os.MkdirTemp(parent, "engram-ingest-")
	if err != nil {
		return result{}, err
	}
	defer os.RemoveAll(dir)
	addr, err := freeAddr()
	if err != nil {
		return result{}, err
	}
	argv := strings.Fields(bin)
	srv := exec.Command(argv[0], append([]string{"serve", "--data", dir, "--addr", addr, "--no-auth",
		"--rate-limit", "0", "--max-concurrent", "0", "--log-level", "warn"}, argv[1:]...)...)
	srv.Stderr = os.Stderr
	if err := srv.Start(); err != nil {
		return result{}, err
	}
	defer func() { _ = srv.Process.Signal(os.Interrupt); _ = srv.Wait() }()
	base := "http://" + addr
	hc := &http.Client{Timeout: 5 * time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: clients + 2}}
	if err := waitReady(hc, base); err != nil {
		return result{}, err
	}
	cpu0, err := cpuTime(srv.Process.Pid)
	if err != nil {
		return result{}, err
	}
	start := time.Now()
	turns, lat, err := postAll(hc, base, work, clients)
	elapsed := time.Since(start)
	if err != nil {
		return result{}, err
	}
	if err := drain(hc, base, work); err != nil {
		return result{}, err
	}
	drained := time.Since(start)
	cpu1, err := cpuTime(srv.Process.Pid)
	if err != nil {
		return result{}, err
	}
	slices.Sort(lat)
	return result{rate: float64(turns) / elapsed.Seconds(), drained: float64(turns) / drained.Seconds(),
		perCPU: float64(turns) / (cpu1 - cpu0).Seconds(), p50: quantile(lat, 0.50), p95: quantile(lat, 0.95)}, nil
}

// drain waits until no user of work has a background job left open (the
// embed jobs of a server that answers before it embeds), so that the
// figures that count it cover all the work an ingest caused.
func drain(hc *http.Client, base string, work []stream) error {
	deadline := time.Now().Add(30 * time.Minute)
	for _, w := range work {
		for {
			open, err := openJobs(hc, base, w.user)
			if err != nil || !open {
				return err
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("user %s still has open jobs after 30 minutes", w.user)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return nil
}

// openJobs reports whether user has a queued, running or retrying job.
func openJobs(hc *http.Client, base, user string) (bool, error) {
	resp, err := hc.Get(base + "/v1/jobs?org=bench&project=ingest&user=" + user + "&state=queued&state=running&state=retrying&limit=1")
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	var page struct {
		Jobs []json.RawMessage `json:"jobs"`
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return false, fmt.Errorf("GET /v1/jobs: %s: %s", resp.Status, b)
	}
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil {
		return false, fmt.Errorf("GET /v1/jobs: %w", err)
	}
	return len(page.Jobs) > 0, nil
}

// postAll posts the streams of work from clients concurrent clients, each
// taking whole streams, and returns the turns posted and each request's
// latency in milliseconds; the first error stops nothing but is returned.
func postAll(hc *http.Client, base string, work []stream, clients int) (int, []float64, error) {
	queue := make(chan stream, len(work))
	for _, w := range work {
		queue <- w
	}
	close(queue)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		turns int
		lat   []float64
	)
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for w := range queue {
				n, ms, err := ingest(hc, base, w)
				mu.Lock()
				turns += n
				lat = append(lat, ms...)
				if err != nil && first == nil {
					first = err
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return turns, lat, first
}

// quantile returns the q-quantile of the sorted xs, 0 for none.
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return xs[min(len(xs)-1, int(q*float64(len(xs))))]
}

// cpuTime returns the user and system time the process has used so far,
// from /proc (Linux).
func cpuTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("read the server's CPU time: %w", err)
	}
	// Fields after the command (which may hold spaces) start after ')'.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("unexpected /proc/%d/stat", pid)
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100, nil // USER_HZ is 100 on Linux
}

// ingest posts w's requests in order to w's user and returns the turns
// posted and each request's latency in milliseconds.
func ingest(hc *http.Client, base string, w stream) (int, []float64, error) {
	n := 0
	var lat []float64
	for _, eps := range w.requests {
		body, _ := json.Marshal(map[string]any{
			"namespace": map[string]string{"org": "bench", "project": "ingest", "user": w.user},
			"episodes":  eps,
		})
		t0 := time.Now()
		resp, err := hc.Post(base+"/v1/episodes", "application/json", bytes.NewReader(body))
		if err != nil {
			return n, lat, err
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		lat = append(lat, float64(time.Since(t0).Microseconds())/1000)
		if resp.StatusCode/100 != 2 {
			return n, lat, fmt.Errorf("POST /v1/episodes: %s: %s", resp.Status, b)
		}
		var res struct {
			Episodes []json.RawMessage `json:"episodes"`
		}
		if err := json.Unmarshal(b, &res); err != nil || len(res.Episodes) != len(eps) {
			return n, lat, fmt.Errorf("POST /v1/episodes: %d episodes back for %d (%v)", len(res.Episodes), len(eps), err)
		}
		n += len(eps)
	}
	return n, lat, nil
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func waitReady(hc *http.Client, base string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for ctx.Err() == nil {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/readyz", nil)
		if resp, err := hc.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%s/readyz did not answer 200 within a minute", base)
}
