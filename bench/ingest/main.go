// Command ingest measures how fast engram serve ingests conversation turns
// over HTTP: it starts each given binary on a fresh data directory (on
// /dev/shm when there is one, so SQLite's fsync does not dominate),
// posts every LoCoMo session as one POST /v1/episodes (speaker, content and
// session time, as engram eval and bench/mem0 do) from --clients
// concurrent clients, each conversation to its own user, and prints turns
// per second. With two binaries it alternates them --rounds times and
// prints the ratio of the medians, so a shared machine's load falls on both.
//
//	go build -o /tmp/new ./cmd/engram
//	go run ./bench/ingest --data ../shared/datasets/locomo/locomo10.json /tmp/old /tmp/new
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
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: ingest [--data FILE] [--clients N] [--rounds N] [--limit N] BINARY [BINARY]")
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
	if err := run(flag.Args(), convs, *clients, *rounds); err != nil {
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

func run(bins []string, convs []conversation, clients, rounds int) error {
	turns := 0
	for _, c := range convs {
		turns += c.turns
	}
	rates := make([][]float64, len(bins))
	perCPU := make([][]float64, len(bins))
	for r := range rounds {
		for i, bin := range bins {
			rate, cpu, err := once(bin, convs, clients)
			if err != nil {
				return fmt.Errorf("%s: %w", bin, err)
			}
			rates[i] = append(rates[i], rate)
			perCPU[i] = append(perCPU[i], cpu)
			fmt.Printf("round %d  %-28s %d turns  %7.1f turns/s  %7.1f turns/cpu-s\n", r+1, bin, turns, rate, cpu)
		}
	}
	med := make([]float64, len(bins))
	medCPU := make([]float64, len(bins))
	for i, bin := range bins {
		med[i], medCPU[i] = median(rates[i]), median(perCPU[i])
		fmt.Printf("median   %-28s %7.1f turns/s  %7.1f turns/cpu-s (clients %d)\n", bin, med[i], medCPU[i], clients)
	}
	if len(bins) == 2 {
		fmt.Printf("ratio    second/first %.2fx turns/s, %.2fx turns/cpu-s\n", med[1]/med[0], medCPU[1]/medCPU[0])
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

// once serves bin on a fresh data directory and ingests every
// conversation, returning turns per second of wall clock and turns per
// CPU-second of the server (which a loaded machine changes less).
func once(bin string, convs []conversation, clients int) (float64, float64, error) {
	parent := ""
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		parent = "/dev/shm"
	}
	dir, err := os.MkdirTemp(parent, "engram-ingest-")
	if err != nil {
		return 0, 0, err
	}
	defer os.RemoveAll(dir)
	addr, err := freeAddr()
	if err != nil {
		return 0, 0, err
	}
	srv := exec.Command(bin, "serve", "--data", dir, "--addr", addr, "--no-auth", "--rate-limit", "0", "--max-concurrent", "0", "--log-level", "warn")
	srv.Stderr = os.Stderr
	if err := srv.Start(); err != nil {
		return 0, 0, err
	}
	defer func() { _ = srv.Process.Signal(os.Interrupt); _ = srv.Wait() }()
	base := "http://" + addr
	hc := &http.Client{Timeout: 5 * time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: clients + 2}}
	if err := waitReady(hc, base); err != nil {
		return 0, 0, err
	}
	work := make(chan int, len(convs))
	for i := range convs {
		work <- i
	}
	close(work)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		turns int
	)
	cpu0, err := cpuTime(srv.Process.Pid)
	if err != nil {
		return 0, 0, err
	}
	start := time.Now()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				n, err := ingest(hc, base, convs[i])
				mu.Lock()
				turns += n
				if err != nil && first == nil {
					first = err
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if first != nil {
		return 0, 0, first
	}
	cpu1, err := cpuTime(srv.Process.Pid)
	if err != nil {
		return 0, 0, err
	}
	return float64(turns) / elapsed.Seconds(), float64(turns) / (cpu1 - cpu0).Seconds(), nil
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

// ingest posts c's sessions in order, one request each, to c's own user.
func ingest(hc *http.Client, base string, c conversation) (int, error) {
	n := 0
	for _, eps := range c.sessions {
		body, _ := json.Marshal(map[string]any{
			"namespace": map[string]string{"org": "bench", "project": "ingest", "user": c.id},
			"episodes":  eps,
		})
		resp, err := hc.Post(base+"/v1/episodes", "application/json", bytes.NewReader(body))
		if err != nil {
			return n, err
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			return n, fmt.Errorf("POST /v1/episodes: %s: %s", resp.Status, b)
		}
		var res struct {
			Episodes []json.RawMessage `json:"episodes"`
		}
		if err := json.Unmarshal(b, &res); err != nil || len(res.Episodes) != len(eps) {
			return n, fmt.Errorf("POST /v1/episodes: %d episodes back for %d (%v)", len(res.Episodes), len(eps), err)
		}
		n += len(eps)
	}
	return n, nil
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
