package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/retrieval"
	"github.com/engramhq/engram/sqlite"
	"github.com/engramhq/engram/wordnet"
)

// parseSearchFlags registers and parses engram serve's flags with env as
// the environment, and returns them with options' error.
func parseSearchFlags(t *testing.T, env map[string]string, args ...string) (*serveFlags, error) {
	t.Helper()
	var f serveFlags
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f.register(fs, func(k string) string { return env[k] })
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	_, err := f.options(&Command{Name: "serve"})
	return &f, err
}

// TestServeSearchFlags: the opt-in channels and the agentic rules reach
// the engine's options from flags and from variables; left out, the
// engine's defaults apply.
func TestServeSearchFlags(t *testing.T) {
	f, err := parseSearchFlags(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	var o engine.Options
	f.tuneEngine(&o)
	if len(o.Channels) != 0 || o.Agent != nil || o.Retrieval != nil {
		t.Errorf("defaults: channels %v, agent %+v, retrieval %+v; want none", o.Channels, o.Agent, o.Retrieval)
	}

	want := engine.DefaultAgentConfig()
	want.EntityShare, want.ExpandSteps = 0.9, 2
	for _, c := range []struct {
		env  map[string]string
		args []string
	}{
		{nil, []string{"--search-graph", "pagerank", "--search-graph-weight", "0.5", "--agent-rules", "entity=0.9,steps=2"}},
		{map[string]string{"ENGRAM_SEARCH_GRAPH": "pagerank", "ENGRAM_SEARCH_GRAPH_WEIGHT": "0.5", "ENGRAM_AGENT_RULES": "entity=0.9,steps=2"}, nil},
	} {
		f, err := parseSearchFlags(t, c.env, c.args...)
		if err != nil {
			t.Fatalf("%v %v: %v", c.env, c.args, err)
		}
		var o engine.Options
		f.tuneEngine(&o)
		if len(o.Channels) != 1 || o.Channels[0].Name() != retrieval.ChannelGraph {
			t.Fatalf("%v %v: channels %v, want the graph's", c.env, c.args, o.Channels)
		}
		if w := o.Retrieval.Weights[retrieval.ChannelGraph]; w != 0.5 {
			t.Errorf("%v %v: graph weight %v, want 0.5", c.env, c.args, w)
		}
		if o.Agent == nil || *o.Agent != want {
			t.Errorf("%v %v: agent %+v, want %+v", c.env, c.args, o.Agent, want)
		}
	}
}

// TestServeSearchFlagsBad: every bad value is a usage error naming its
// flag, before anything is opened.
func TestServeSearchFlagsBad(t *testing.T) {
	t.Setenv("ENGRAM_WORDNET_DIR", t.TempDir()) // no database there
	for _, c := range []struct {
		env   map[string]string
		args  []string
		names string
	}{
		{nil, []string{"--search-graph", "bfs"}, "--search-graph"},
		{map[string]string{"ENGRAM_SEARCH_GRAPH": "spread", "ENGRAM_SEARCH_GRAPH_WEIGHT": "x"}, nil, "--search-graph-weight"},
		{nil, []string{"--search-graph", "spread", "--search-graph-weight", "0"}, "--search-graph-weight"},
		{nil, []string{"--search-wordnet-weight", "11"}, "--search-wordnet-weight"},
		{nil, []string{"--agent-rules", "entity=2x"}, "--agent-rules"},
		{map[string]string{"ENGRAM_AGENT_RULES": "steps=99", "ENGRAM_AGENT": "ignored-here"}, nil, "--agent-rules"},
		{nil, []string{"--search-wordnet"}, "--search-wordnet"},
	} {
		_, err := parseSearchFlags(t, c.env, c.args...)
		var ue *usageError
		if err == nil || !errors.As(err, &ue) || !strings.Contains(err.Error(), c.names) {
			t.Errorf("%v %v: got %v, want a usage error naming %s", c.env, c.args, err, c.names)
		}
	}
}

// TestServeSearchWordNet: --search-wordnet loads the database at start
// and adds its channel. It skips without the database (make wordnet).
func TestServeSearchWordNet(t *testing.T) {
	if err := wordnet.Open(wordnet.DefaultDir()).Load(); err != nil {
		t.Skipf("wordnet database not installed: %v", err)
	}
	f, err := parseSearchFlags(t, nil, "--search-wordnet", "--search-wordnet-weight", "0.4")
	if err != nil {
		t.Fatal(err)
	}
	var o engine.Options
	f.tuneEngine(&o)
	if len(o.Channels) != 1 || o.Channels[0].Name() != retrieval.ChannelThesaurus || o.Retrieval.Weights[retrieval.ChannelThesaurus] != 0.4 {
		t.Errorf("channels %v, weights %v; want the thesaurus at 0.4", o.Channels, o.Retrieval)
	}
}

// TestServeSearchGraphChannel: an engine tuned by --search-graph runs the
// graph channel, which finds a memory sharing no word with the query
// through the entity it is related to; without the flag a search asking
// for the channel is refused.
func TestServeSearchGraphChannel(t *testing.T) {
	ctx := engram.WithActor(context.Background(), "test")
	ns := engram.Namespace{Org: "acme", Project: "p", User: "alice"}
	for _, on := range []bool{false, true} {
		var args []string
		if on {
			args = []string{"--search-graph", "spread"}
		}
		f, err := parseSearchFlags(t, nil, args...)
		if err != nil {
			t.Fatal(err)
		}
		var o engine.Options
		f.tuneEngine(&o)
		db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "engram.db"))
		if err != nil {
			t.Fatal(err)
		}
		e, err := engine.New(ctx, db, o)
		if err != nil {
			t.Fatal(err)
		}
		var related string
		for i, v := range []string{"At the bakery Maria works with Tomás.", "Last year Tomás went hiking with Lucía."} {
			ms, err := e.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: ns, Memories: []engram.Memory{{Value: v}}})
			if err != nil {
				t.Fatal(err)
			}
			if i == 1 {
				related = ms[0].ID
			}
		}
		res, err := e.Search(ctx, engram.SearchRequest{Scope: engram.ScopeOf(ns), Query: "What does Maria like?", K: 10, Channels: []string{retrieval.ChannelGraph}})
		switch {
		case !on && engram.ErrorCode(err) != engram.EINVALID:
			t.Errorf("without the flag: got %v, want EINVALID for an unknown channel", err)
		case on && err != nil:
			t.Errorf("with the flag: %v", err)
		case on && !slices.ContainsFunc(res.Hits, func(h engram.Hit) bool { return h.Memory.ID == related }):
			t.Errorf("with the flag: hits %v lack the memory related through Tomás", res.Hits)
		}
		e.Close()
		db.Close()
	}
}
