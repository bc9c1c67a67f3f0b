package main_test

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServePortTakenLeavesNoDataDir: a server whose port is in use ends
// with exit 1 naming the address before it creates or migrates its data
// directory, on the data directory and with --store (whose directory holds
// the embedding cache) alike.
func TestServePortTakenLeavesNoDataDir(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	c := &cli{t: t, env: baseEnv(t)}
	for _, extra := range [][]string{nil, {"--store", "postgres://engram@127.0.0.1:1/none?connect_timeout=1"}} {
		data := filepath.Join(t.TempDir(), "new")
		stderr := c.fail(1, append([]string{"serve", "--no-auth", "--addr", addr, "--data", data}, extra...)...)
		if !strings.Contains(stderr, "listen on "+addr) {
			t.Errorf("%v: stderr %q does not name the address", extra, stderr)
		}
		if _, err := os.Stat(data); !os.IsNotExist(err) {
			t.Errorf("%v: the data directory %s was made (stat: %v)", extra, data, err)
		}
	}
}
