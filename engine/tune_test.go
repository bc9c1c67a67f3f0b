package engine_test

import (
	"strings"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/retrieval"
)

// TestParseAgentConfig: a spec sets exactly the fields it names over the
// defaults; every bad spec is EINVALID naming what is wrong.
func TestParseAgentConfig(t *testing.T) {
	cfg, err := engine.ParseAgentConfig(" parts=0.9,anchors=0.8, neighbour=0.5,cue=0.25,entity=0.9,relation=0.5,mingain=0,from=5,cuelimit=4,limit=5,steps=2,window=12,anchortop=3,")
	if err != nil {
		t.Fatal(err)
	}
	want := engine.DefaultAgentConfig()
	want.PartWeight, want.AnchorWeight, want.NeighbourShare, want.CueShare = 0.9, 0.8, 0.5, 0.25
	want.EntityShare, want.RelationShare, want.MinGain = 0.9, 0.5, 0
	want.ExpandFrom, want.CueLimit, want.EntityLimit, want.ExpandSteps, want.Window, want.AnchorTop = 5, 4, 5, 2, 12, 3
	if cfg != want {
		t.Errorf("config %+v, want %+v", cfg, want)
	}
	if cfg, err := engine.ParseAgentConfig(""); err != nil || cfg != engine.DefaultAgentConfig() {
		t.Errorf("empty spec: %+v, %v; want the defaults", cfg, err)
	}
	for spec, names := range map[string]string{
		"entiti=0.9":    "entiti",
		"limit=x":       "limit",
		"entity":        "entity",
		"entity=-0.1":   "entity",
		"entity=NaN":    "entity",
		"parts=11":      "parts",
		"mingain=1.5":   "mingain",
		"steps=9":       "steps",
		"from=0":        "from",
		"window=0":      "window",
		"limit=2.5":     "limit",
		"cue=0.5,cue=x": "cue",
	} {
		_, err := engine.ParseAgentConfig(spec)
		if engram.ErrorCode(err) != engram.EINVALID || !strings.Contains(err.Error(), names) {
			t.Errorf("%q: got %v, want EINVALID naming %s", spec, err, names)
		}
	}
}

// TestOptionsAddChannel: the channel is appended and weighed in a copy of
// the configuration, so options sharing the same configuration keep
// theirs.
func TestOptionsAddChannel(t *testing.T) {
	shared := retrieval.DefaultConfig()
	before := shared.Weights[retrieval.ChannelGraph]
	o := engine.Options{Retrieval: &shared}
	o.AddChannel(retrieval.Graph{}, 0.25)
	if len(o.Channels) != 1 || o.Channels[0].Name() != retrieval.ChannelGraph {
		t.Fatalf("channels %v", o.Channels)
	}
	if got := o.Retrieval.Weights[retrieval.ChannelGraph]; got != 0.25 {
		t.Errorf("weight %v, want 0.25", got)
	}
	if shared.Weights[retrieval.ChannelGraph] != before || o.Retrieval == &shared {
		t.Errorf("the shared configuration changed: %v", shared.Weights[retrieval.ChannelGraph])
	}
	if o.Retrieval.Weights[retrieval.ChannelBM25] != shared.Weights[retrieval.ChannelBM25] {
		t.Errorf("other weights not kept: %v", o.Retrieval.Weights)
	}
	var none engine.Options
	none.AddChannel(retrieval.Graph{}, 2)
	if none.Retrieval == nil || none.Retrieval.Weights[retrieval.ChannelGraph] != 2 ||
		none.Retrieval.Weights[retrieval.ChannelDense] != retrieval.DefaultConfig().Weights[retrieval.ChannelDense] {
		t.Errorf("from nil options: %+v", none.Retrieval)
	}
}
