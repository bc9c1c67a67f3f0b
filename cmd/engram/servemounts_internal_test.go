package main

import (
	"context"
	"encoding/json"
	"flag"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/engramhq/engram/engine"
	engramhttp "github.com/engramhq/engram/http"
	"github.com/engramhq/engram/storeopen"
)

// TestServeMountsDocumented: every handler engram serve mounts beside the
// REST API (MCP, Mem0, the chat proxy, the dashboard) is a path of the
// OpenAPI document marked x-engram-mount, with the mount's method when it
// has one, and every path so marked is mounted.
func TestServeMountsDocumented(t *testing.T) {
	getenv := func(string) string { return "" }
	var f serveCommandFlags
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f.register(fs, getenv)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	r, err := f.check(serveCommand, getenv)
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.DiscardHandler)
	if err := f.connectModels(serveCommand, r, logger); err != nil {
		t.Fatal(err)
	}
	eng, err := storeopen.Engine(context.Background(), t.TempDir(), engine.Options{Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	ms, err := r.mounts(eng)
	if err != nil {
		t.Fatal(err)
	}
	ms = append(ms, tenantsMount(eng))
	ms = append(ms, sensitiveMounts(eng)...)
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(engramhttp.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	mounted := map[string]bool{}
	for _, m := range ms {
		method, path, ok := strings.Cut(m.Pattern, " ")
		if !ok {
			method, path = "", m.Pattern
		}
		switch {
		case strings.HasSuffix(path, "{$}"):
			path = strings.TrimSuffix(path, "{$}")
		case strings.HasSuffix(path, "/") && path != "/":
			path += "{path}"
		}
		mounted[path] = true
		item, ok := doc.Paths[path]
		if !ok {
			t.Errorf("mount %q: openapi.json has no path %s", m.Pattern, path)
			continue
		}
		if _, ok := item["x-engram-mount"]; !ok {
			t.Errorf("mount %q: path %s is not marked x-engram-mount", m.Pattern, path)
		}
		if _, ok := item[strings.ToLower(method)]; method != "" && !ok {
			t.Errorf("mount %q: path %s does not document %s", m.Pattern, path, method)
		}
	}
	for path, item := range doc.Paths {
		if _, mark := item["x-engram-mount"]; mark && !mounted[path] {
			t.Errorf("openapi.json marks %s as a mount, which engram serve does not mount", path)
		}
	}
	if len(mounted) < 4 {
		t.Errorf("only %d mounts: %v", len(mounted), mounted)
	}
}
