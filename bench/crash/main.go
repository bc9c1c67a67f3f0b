// Command crash checks that engram serve never loses an acknowledged write
// when it is killed: for each round it starts the server (SQLite) on one
// data directory, has writers add episodes, kills the server with SIGKILL
// at a random moment, restarts it, reads back every episode acknowledged
// so far, then stops it and runs SQLite's and FTS5's integrity checks on
// the file (sqlite.DB.IntegrityCheck). With --embedder use-lite the server
// answers each add before embedding it and leaves the embedding to a
// background job, so kills land while such jobs are pending: after each
// restart every job of the round's acknowledged adds must finish and each
// of their turns be found by the dense channel alone. It prints one line
// per round and exits 1 when any round fails.
//
//	go build -o bin/engram ./cmd/engram
//	go run ./bench/crash --engram bin/engram --rounds 20 [--embedder use-lite]
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
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/engramhq/engram/sqlite"
)

func main() {
	bin := flag.String("engram", "bin/engram", "the engram `binary` to serve with")
	rounds := flag.Int("rounds", 20, "kill -9 rounds")
	writers := flag.Int("writers", 4, "concurrent writers")
	maxRun := flag.Duration("max-run", 3*time.Second, "longest time before the kill in a round (at random from a tenth of it)")
	seed := flag.Uint64("seed", uint64(time.Now().UnixNano()), "random seed (printed, to repeat a run)")
	flag.StringVar(&embedder, "embedder", "none", "the server's `embedder`: none, or use-lite to kill it while embed jobs are pending")
	flag.Parse()
	fmt.Printf("seed %d\n", *seed)
	if err := run(*bin, *rounds, *writers, *maxRun, rand.New(rand.NewPCG(*seed, 1))); err != nil {
		fmt.Fprintln(os.Stderr, "crash:", err)
		os.Exit(1)
	}
}

// embedder is the --embedder the server runs with.
var embedder string

// ack is one acknowledged add: its writer's user, episode, memory, embed
// job (when the server embeds later) and text.
type ack struct {
	user, episode, memory, job, text string
}

func run(bin string, rounds, writers int, maxRun time.Duration, rng *rand.Rand) error {
	dir, err := os.MkdirTemp("", "engram-crash-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	hc := &http.Client{Timeout: 30 * time.Second}
	var acked []ack // every add acknowledged in any round
	passed := 0
	for round := 1; round <= rounds; round++ {
		kill := maxRun/10 + time.Duration(rng.Int64N(int64(maxRun-maxRun/10)))
		got, err := crashRound(hc, bin, dir, writers, kill)
		acked = append(acked, got...)
		if err == nil {
			err = verifyRound(hc, bin, dir, acked, got)
		}
		if err != nil {
			fmt.Printf("round %2d: killed after %v, %d writes acknowledged: FAIL: %v\n", round, kill.Round(time.Millisecond), len(got), err)
			continue
		}
		passed++
		fmt.Printf("round %2d: killed after %v, %d writes acknowledged this round, all %d present; integrity ok\n", round, kill.Round(time.Millisecond), len(got), len(acked))
	}
	fmt.Printf("%d of %d rounds passed\n", passed, rounds)
	if passed != rounds {
		return errors.New("some rounds failed")
	}
	return nil
}

// crashRound starts the server, has the writers add episodes and kills the
// server with SIGKILL after kill; it returns the adds acknowledged.
func crashRound(hc *http.Client, bin, dir string, writers int, kill time.Duration) ([]ack, error) {
	srv, base, err := start(hc, bin, dir)
	if err != nil {
		return nil, err
	}
	var (
		mu    sync.Mutex
		acked []ack
		wg    sync.WaitGroup
	)
	stop := make(chan struct{})
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				text := note(w, n)
				body := map[string]any{
					"namespace": map[string]string{"org": "crash", "project": "p", "user": fmt.Sprintf("w%d", w)},
					"episodes":  []map[string]any{{"role": "user", "content": text}},
				}
				var res struct {
					Episodes []struct{ ID string }
					Memories []struct{ ID string }
					EmbedJob *struct{ ID string } `json:"embed_job"`
				}
				if err := call(hc, base, "POST", "/v1/episodes", body, &res, http.StatusCreated); err != nil {
					return // the server is gone; an unanswered write was never acknowledged
				}
				a := ack{user: fmt.Sprintf("w%d", w), text: text}
				if len(res.Episodes) > 0 {
					a.episode = res.Episodes[0].ID
				}
				if len(res.Memories) > 0 {
					a.memory = res.Memories[0].ID
				}
				if res.EmbedJob != nil {
					a.job = res.EmbedJob.ID
				}
				mu.Lock()
				acked = append(acked, a)
				mu.Unlock()
			}
		}()
	}
	time.Sleep(kill)
	_ = srv.Process.Signal(syscall.SIGKILL)
	_ = srv.Wait()
	close(stop)
	wg.Wait()
	return acked, nil
}

// words are what the writers' notes are made of, so that no two notes
// mean nearly the same (the dense check looks for each by its text). They
// are English, the embedder's language: the dense channel weighs a
// memory it detects in another language less (see engine.DenseOtherLanguage).
var words = strings.Fields(`violin harbour cactus glacier lantern mango bicycle
	volcano orchard saxophone lighthouse pancake meteor compass tulip anchor
	squirrel railway umbrella thunder blanket cathedral pumpkin lobster
	chess tractor dolphin canyon marathon kettle origami avalanche jigsaw
	telescope waffle hammock parrot ravioli snowboard trombone quarry`)

// note is writer w's n-th note: four words of words picked by w and n.
func note(w, n int) string {
	h := uint64(w)*1_000_003 + uint64(n)*7_919 + 17
	pick := func() string {
		h = h*6364136223846793005 + 1442695040888963407
		return words[(h>>33)%uint64(len(words))]
	}
	return fmt.Sprintf("Writer %d, note %d: %s, %s, %s and %s.", w, n, pick(), pick(), pick(), pick())
}

// verifyRound restarts the server, reads every acknowledged episode,
// waits for the embed jobs of the round's adds and finds their turns by
// the dense channel, stops the server cleanly and checks the file's
// integrity.
func verifyRound(hc *http.Client, bin, dir string, acked, round []ack) error {
	srv, base, err := start(hc, bin, dir)
	if err != nil {
		return fmt.Errorf("restart: %w", err)
	}
	missing := 0
	for _, a := range acked {
		if err := episodeExists(hc, base, a); err != nil {
			fmt.Printf("missing: %s/%s: %v\n", a.user, a.episode, err)
			missing++
		}
	}
	pending := 0
	for _, a := range round {
		var j struct{ State string }
		if a.job != "" && call(hc, base, "GET", fmt.Sprintf("/v1/jobs/%s?org=crash&project=p&user=%s", a.job, a.user), nil, &j, http.StatusOK) == nil && j.State != "done" {
			pending++
		}
	}
	if embedder != "none" {
		fmt.Printf("          %d of the round's embed jobs were open after the kill\n", pending)
	}
	for _, a := range round {
		if a.job == "" {
			continue
		}
		if err := embedded(hc, base, a); err != nil {
			fmt.Printf("not embedded: %s/%s: %v\n", a.user, a.memory, err)
			missing++
		}
	}
	_ = srv.Process.Signal(os.Interrupt)
	_ = srv.Wait()
	if missing > 0 {
		return fmt.Errorf("%d acknowledged episodes missing", missing)
	}
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(dir, "engram.db"))
	if err != nil {
		return fmt.Errorf("open after the crash: %w", err)
	}
	defer db.Close()
	return db.IntegrityCheck(ctx)
}

// episodeExists reads a's episode in its writer's namespace.
func episodeExists(hc *http.Client, base string, a ack) error {
	return call(hc, base, "GET", fmt.Sprintf("/v1/episodes/%s?org=crash&project=p&user=%s", a.episode, a.user), nil, nil, http.StatusOK)
}

// embedded waits, at most two minutes, until a's embed job is done, then
// searches a's text with the dense channel alone and wants a's memory
// among the first ten hits.
func embedded(hc *http.Client, base string, a ack) error {
	for end := time.Now().Add(2 * time.Minute); ; time.Sleep(20 * time.Millisecond) {
		var j struct{ State string }
		if err := call(hc, base, "GET", fmt.Sprintf("/v1/jobs/%s?org=crash&project=p&user=%s", a.job, a.user), nil, &j, http.StatusOK); err != nil {
			return err
		}
		if j.State == "done" {
			break
		}
		if j.State == "failed" || time.Now().After(end) {
			return fmt.Errorf("embed job %s is %s", a.job, j.State)
		}
	}
	var res struct {
		Hits []struct{ Memory struct{ ID string } }
	}
	body := map[string]any{"scope": map[string]string{"org": "crash", "project": "p", "user": a.user}, "query": a.text, "k": 10, "channels": []string{"dense"}}
	if err := call(hc, base, "POST", "/v1/search", body, &res, http.StatusOK); err != nil {
		return err
	}
	for _, h := range res.Hits {
		if h.Memory.ID == a.memory {
			return nil
		}
	}
	return fmt.Errorf("the dense channel does not find %q", a.text)
}

// start runs the server without keys on a free loopback port and waits
// until it is ready.
func start(hc *http.Client, bin, dir string) (*exec.Cmd, string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	addr := ln.Addr().String()
	ln.Close()
	// Limits off: the verifier reads thousands of episodes in a burst.
	srv := exec.Command(bin, "serve", "--no-auth", "--data", dir, "--addr", addr, "--embedder", embedder, "--log-level", "error", "--rate-limit", "0", "--max-concurrent", "0")
	srv.Stderr = os.Stderr
	if err := srv.Start(); err != nil {
		return nil, "", err
	}
	base := "http://" + addr
	for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if resp, err := hc.Get(base + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return srv, base, nil
			}
		}
	}
	_ = srv.Process.Kill()
	_ = srv.Wait()
	return nil, "", fmt.Errorf("the server at %s did not become ready", addr)
}

func call(hc *http.Client, base, method, path string, body, out any, want int) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		return err
	}
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
		return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, strings.TrimSpace(string(b)))
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}
