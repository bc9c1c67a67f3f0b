package main_test

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestKeys: keys made with engram keys open a server that requires them;
// their secrets are not stored; list shows no secret; a revoked key gets
// 401; the CLI's --server mode sends --key (ENGRAM_KEY).
func TestKeys(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := localCLI(t, dir)
	admin := strings.TrimSpace(c.ok("keys", "create", "--org", "acme", "--project", "app", "--role", "admin", "--name", "ops"))
	reader := strings.TrimSpace(c.ok("keys", "create", "--org", "acme", "--project", "app", "--user", "ann", "--role", "read"))
	if !strings.HasPrefix(admin, "ek_") || strings.Contains(admin, "\n") {
		t.Fatalf("keys create printed %q, want one secret", admin)
	}
	for _, name := range []string{"engram.db", "engram.db-wal"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		for _, secret := range []string{admin, reader} {
			if bytes.Contains(b, []byte(secret)) {
				t.Errorf("%s holds a secret in plain text", name)
			}
		}
	}
	listed := c.ok("keys", "list")
	if strings.Contains(listed, admin) || !strings.Contains(listed, "admin") || !strings.Contains(listed, "acme/app user ann") || !strings.Contains(listed, "ops") {
		t.Errorf("keys list:\n%s", listed)
	}
	readerID := strings.Split(strings.TrimPrefix(reader, "ek_"), "_")[0]

	s := startServer(t, dir, baseEnv(t), "--no-auth=false")
	get := func(key, path string) int {
		t.Helper()
		req, err := http.NewRequest("GET", s.url+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	const annList = "/v1/memories?org=acme&project=app&user=ann"
	if got := get("", "/healthz"); got != 200 {
		t.Errorf("healthz without a key: %d", got)
	}
	if got := get("", annList); got != 401 {
		t.Errorf("no key: %d, want 401", got)
	}
	if got := get(reader, annList); got != 200 {
		t.Errorf("ann's read key: %d, want 200", got)
	}
	if got := get(reader, "/v1/memories?org=acme&project=app&user=bob"); got != 403 {
		t.Errorf("ann's key naming bob: %d, want 403", got)
	}

	remote := &cli{t: t, env: append(baseEnv(t), "ENGRAM_SERVER="+s.url, "ENGRAM_ORG=acme", "ENGRAM_PROJECT=app", "ENGRAM_USER=ann")}
	if r := remote.run("add", "ann likes tea"); r.code == 0 || !strings.Contains(r.stderr, "requires an API key") {
		t.Errorf("add without a key: exit %d, stderr %q", r.code, r.stderr)
	}
	remote.ok("list", "--key", admin)
	if r := remote.run("add", "--key", reader, "ann likes tea"); r.code == 0 || !strings.Contains(r.stderr, "role read") {
		t.Errorf("add with a read key: exit %d, stderr %q", r.code, r.stderr)
	}

	if got := c.ok("keys", "revoke", readerID); got != "revoked "+readerID+"\n" {
		t.Errorf("keys revoke printed %q", got)
	}
	if got := get(reader, annList); got != 401 {
		t.Errorf("revoked key: %d, want 401", got)
	}
	if !strings.Contains(c.ok("keys", "list", "--org", "acme", "--project", "app"), "Z\n") {
		t.Errorf("keys list does not show the revocation time")
	}
}

// TestServeAuthFlags: --no-auth only on loopback, with a warning; with
// keys on and none made, the server says how to make the first.
func TestServeAuthFlags(t *testing.T) {
	t.Parallel()
	c := &cli{t: t, env: baseEnv(t)}
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:0"} {
		stderr := c.fail(2, "serve", "--addr", addr, "--data", t.TempDir(), "--no-auth")
		if !strings.Contains(stderr, "--no-auth (ENGRAM_NO_AUTH) is allowed only on a loopback address") || !strings.Contains(stderr, "engram keys create --org ORG --project PROJECT --role admin") {
			t.Errorf("--no-auth on %s: stderr %q", addr, stderr)
		}
	}
	env := &cli{t: t, env: append(baseEnv(t), "ENGRAM_NO_AUTH=1")}
	env.fail(2, "serve", "--addr", "0.0.0.0:0", "--data", t.TempDir())

	s := startServer(t, t.TempDir(), baseEnv(t))
	if !strings.Contains(s.logs.String(), "authentication is off") {
		t.Errorf("--no-auth logs no warning:\n%s", s.logs.String())
	}
	s = startServer(t, t.TempDir(), baseEnv(t), "--no-auth=false")
	if !strings.Contains(s.logs.String(), "engram keys create --data") {
		t.Errorf("a server without keys does not say how to make one:\n%s", s.logs.String())
	}
}
