// Command crash checks that engram serve never loses an acknowledged write
// when it is killed: for each round it starts the server (SQLite) on one
// data directory, has writers add episodes, kills the server with SIGKILL
// at a random moment, restarts it, reads back every episode acknowledged
// so far, then stops it and runs SQLite's and FTS5's integrity checks on
// the file (sqlite.DB.IntegrityCheck). It prints one line per round and
// exits 1 when any round fails.
//
//	go build -o bin/engram ./cmd/engram
//	go run ./bench/crash --engram bin/engram --rounds 20
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
	flag.Parse()
	fmt.Printf("seed %d\n", *seed)
	if err := run(*bin, *rounds, *writers, *maxRun, rand.New(rand.NewPCG(*seed, 1))); err != nil {
		fmt.Fprintln(os.Stderr, "crash:", err)
		os.Exit(1)
	}
}

func run(bin string, rounds, writers int, maxRun time.Duration, rng *rand.Rand) error {
	dir, err := os.MkdirTemp("", "engram-crash-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	hc := &http.Client{Timeout: 30 * time.Second}
	var acked []string // "USER/ID" of every episode acknowledged in any round
	passed := 0
	for round := 1; round <= rounds; round++ {
		kill := maxRun/10 + time.Duration(rng.Int64N(int64(maxRun-maxRun/10)))
		got, err := crashRound(hc, bin, dir, writers, kill)
		acked = append(acked, got...)
		if err == nil {
			err = verifyRound(hc, bin, dir, acked)
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
// server with SIGKILL after kill; it returns the ids acknowledged.
func crashRound(hc *http.Client, bin, dir string, writers int, kill time.Duration) ([]string, error) {
	srv, base, err := start(hc, bin, dir)
	if err != nil {
		return nil, err
	}
	var (
		mu    sync.Mutex
		acked []string
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
				body := map[string]any{
					"namespace": map[string]string{"org": "crash", "project": "p", "user": fmt.Sprintf("w%d", w)},
					"episodes":  []map[string]any{{"role": "user", "content": fmt.Sprintf("Writer %d, message %d: Ich habe heute Kuchen gebacken.", w, n)}},
				}
				var ack struct{ Episodes []struct{ ID string } }
				if err := call(hc, base, "POST", "/v1/episodes", body, &ack, http.StatusCreated); err != nil {
					return // the server is gone; an unanswered write was never acknowledged
				}
				mu.Lock()
				for _, e := range ack.Episodes {
					acked = append(acked, fmt.Sprintf("w%d/%s", w, e.ID))
				}
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

// verifyRound restarts the server, reads every acknowledged episode, stops
// the server cleanly and checks the file's integrity.
func verifyRound(hc *http.Client, bin, dir string, acked []string) error {
	srv, base, err := start(hc, bin, dir)
	if err != nil {
		return fmt.Errorf("restart: %w", err)
	}
	missing := 0
	for _, key := range acked {
		if err := episodeExists(hc, base, key); err != nil {
			fmt.Printf("missing: %s: %v\n", key, err)
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

// episodeExists reads the episode key ("USER/ID") in its writer's namespace.
func episodeExists(hc *http.Client, base, key string) error {
	user, id, _ := strings.Cut(key, "/")
	return call(hc, base, "GET", fmt.Sprintf("/v1/episodes/%s?org=crash&project=p&user=%s", id, user), nil, nil, http.StatusOK)
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
	srv := exec.Command(bin, "serve", "--no-auth", "--data", dir, "--addr", addr, "--embedder", "none", "--log-level", "error", "--rate-limit", "0", "--max-concurrent", "0")
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
