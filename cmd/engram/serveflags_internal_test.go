package main

import (
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
)

// TestServeTextIndexFlags: --text-index-mb, --text-index-limit and
// --row-cache-mb (and their variables) reach the engine's options, 0
// meaning no bound, the store's index always and no cache; left out, the
// engine's defaults apply.
func TestServeTextIndexFlags(t *testing.T) {
	for _, c := range []struct {
		env   map[string]string
		args  []string
		bytes int64
		limit int
		rows  int64
	}{
		{nil, nil, engine.DefaultTextIndexBytes, engine.DefaultTextIndexLimit, engine.DefaultRowCacheBytes},
		{nil, []string{"--text-index-mb", "64", "--text-index-limit", "5000", "--row-cache-mb", "32"}, 64 << 20, 5000, 32 << 20},
		{map[string]string{"ENGRAM_TEXT_INDEX_MB": "0", "ENGRAM_TEXT_INDEX_LIMIT": "0", "ENGRAM_ROW_CACHE_MB": "0"}, nil, -1, -1, -1},
	} {
		var f serveFlags
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		f.register(fs, func(k string) string { return c.env[k] })
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		var o engine.Options
		f.tuneEngine(&o)
		if o.TextIndexBytes != c.bytes || o.TextIndexLimit != c.limit || o.RowCacheBytes != c.rows {
			t.Errorf("%v %v: TextIndexBytes %d, TextIndexLimit %d, RowCacheBytes %d; want %d, %d, %d", c.env, c.args,
				o.TextIndexBytes, o.TextIndexLimit, o.RowCacheBytes, c.bytes, c.limit, c.rows)
		}
	}
}

// TestServeSensitiveFlag: --sensitive off turns detection off in the
// engine's options; a policy sets the default policy with detection on;
// a bad one is a usage error naming the flag.
func TestServeSensitiveFlag(t *testing.T) {
	for _, c := range []struct {
		arg    string
		off    bool
		secret engram.Treatment
		bad    bool
	}{
		{"off", true, "", false},
		{" off ", true, "", false},
		{"keep", false, engram.TreatKeep, false},
		{"secret=redact", false, engram.TreatRedact, false},
		{"of", false, "", true},
	} {
		var f serveFlags
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		f.register(fs, func(string) string { return "" })
		if err := fs.Parse([]string{"--sensitive", c.arg}); err != nil {
			t.Fatal(err)
		}
		err := f.checkSensitive(&Command{Name: "serve"})
		if c.bad {
			if err == nil || !strings.Contains(err.Error(), "--sensitive") {
				t.Errorf("--sensitive %q: err %v, want a usage error naming the flag", c.arg, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("--sensitive %q: %v", c.arg, err)
		}
		var o engine.Options
		f.tuneEngine(&o)
		if o.DetectOff != c.off || o.Sensitive.Secret != c.secret {
			t.Errorf("--sensitive %q: DetectOff %v, secret %q; want %v, %q", c.arg, o.DetectOff, o.Sensitive.Secret, c.off, c.secret)
		}
	}
}
