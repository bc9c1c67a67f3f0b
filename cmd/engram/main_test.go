package main_test

import (
	"github.com/engramhq/engram/internal/syncbuf"
	"github.com/engramhq/engram/uselite"

	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The tests run the real binary, built once here, as a user would.
var binPath string

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "engram-cli-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	binPath = filepath.Join(dir, "engram")
	// The test's working directory is this package's, so "." is ./cmd/engram.
	build := exec.Command("go", "build", "-o", binPath, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "build engram: %v\n", err)
		return 1
	}
	return m.Run()
}

// result is what one run of the binary produced.
type result struct {
	stdout, stderr string
	code           int
}

// cli runs the binary with a fixed environment and with extra arguments
// appended to every command line (e.g. "--data DIR" or "--server URL"), so
// one flow can run in local and in server mode.
type cli struct {
	t     *testing.T
	env   []string
	extra []string
	stdin string
}

// baseEnv is the test process's environment without ENGRAM_* and XDG
// variables and with HOME pointing into a temporary directory, so that
// nothing from the machine leaks into a run. Commands run without an
// embedder (BM25 only) unless a test asks for one, which keeps each exec
// cheap; the model's location is kept for those that do.
func baseEnv(t *testing.T) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "ENGRAM_") || strings.HasPrefix(kv, "XDG_") || strings.HasPrefix(kv, "HOME=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+t.TempDir(), "ENGRAM_MODEL_DIR="+uselite.DefaultDir(), "ENGRAM_EMBEDDER=none")
}

func localCLI(t *testing.T, dir string) *cli {
	return &cli{t: t, env: baseEnv(t), extra: []string{"--data", dir}}
}

func (c *cli) run(args ...string) result {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	args = withExtra(args, c.extra)
	cmd := exec.CommandContext(ctx, binPath, args...)
	cmd.Env = c.env
	cmd.Stdin = strings.NewReader(c.stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := result{stdout: stdout.String(), stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		res.code = ee.ExitCode()
	default:
		c.t.Fatalf("engram %s: %v", strings.Join(args, " "), err)
	}
	return res
}

// withExtra inserts extra before a "--" terminator, if any, so that it is
// still read as flags.
func withExtra(args, extra []string) []string {
	if len(extra) == 0 || len(args) == 0 {
		return args
	}
	out := append([]string{}, args...)
	for i, a := range out {
		if a == "--" {
			return append(append(out[:i:i], extra...), out[i:]...)
		}
	}
	return append(out, extra...)
}

// ok runs a command that must succeed and returns its stdout.
func (c *cli) ok(args ...string) string {
	c.t.Helper()
	r := c.run(args...)
	if r.code != 0 {
		c.t.Fatalf("engram %s: exit %d\nstderr: %s", strings.Join(args, " "), r.code, r.stderr)
	}
	return r.stdout
}

// json runs a command with --json that must succeed and decodes its output
// into v.
func (c *cli) json(v any, args ...string) {
	c.t.Helper()
	out := c.ok(withExtra(args, []string{"--json"})...)
	// Decode into a zero value: fields the output omits must not keep
	// what an earlier call left in v.
	rv := reflect.ValueOf(v).Elem()
	rv.Set(reflect.Zero(rv.Type()))
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		c.t.Fatalf("engram %s --json: decode: %v\n%s", strings.Join(args, " "), err, out)
	}
	if dec.More() {
		c.t.Fatalf("engram %s --json: more than one JSON document:\n%s", strings.Join(args, " "), out)
	}
}

// fail runs a command that must fail with the given exit code and returns
// its stderr.
func (c *cli) fail(code int, args ...string) string {
	c.t.Helper()
	r := c.run(args...)
	if r.code != code {
		c.t.Fatalf("engram %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, code, r.stdout, r.stderr)
	}
	return r.stderr
}

// server is an "engram serve" child process.
type server struct {
	cmd  *exec.Cmd
	url  string
	logs *syncbuf.Buffer
	done chan error
}

var listeningRE = regexp.MustCompile(`listening on (https?://[0-9.]+:[0-9]+)`)

// startServer runs "engram serve --addr 127.0.0.1:0 --data dir --no-auth"
// with any extra flags (--no-auth=false turns keys on) and waits for its
// "listening on" log line. The server is killed at the end of the test
// unless stopped before.
func startServer(t *testing.T, dir string, env []string, extra ...string) *server {
	t.Helper()
	cmd := exec.Command(binPath, append([]string{"serve", "--addr", "127.0.0.1:0", "--data", dir, "--no-auth"}, extra...)...)
	cmd.Env = env
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &server{cmd: cmd, logs: &syncbuf.Buffer{}, done: make(chan error, 1)}
	urlc := make(chan string, 1)
	go func() {
		br := bufio.NewReader(stderr)
		for {
			line, err := br.ReadString('\n')
			s.logs.Write([]byte(line))
			if m := listeningRE.FindStringSubmatch(line); m != nil {
				urlc <- m[1]
			}
			if err != nil {
				break
			}
		}
		s.done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-s.done
		}
	})
	select {
	case s.url = <-urlc:
	case err := <-s.done:
		t.Fatalf("engram serve exited before listening: %v\n%s", err, s.logs.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("engram serve did not log its address in time:\n%s", s.logs.String())
	}
	return s
}

// stop sends SIGTERM and returns the exit code.
func (s *server) stop(t *testing.T) int {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-s.done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(30 * time.Second):
		t.Fatalf("engram serve did not stop after SIGTERM:\n%s", s.logs.String())
	}
	return -1
}

// lines splits output into its non-empty lines.
func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	if err := os.WriteFile(name, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return name
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
