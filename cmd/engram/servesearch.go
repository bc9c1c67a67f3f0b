package main

import (
	"flag"
	"math"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/retrieval"
	"github.com/engramhq/engram/wordnet"
)

// searchFlags turn on the search channels that are off by default (the
// entity graph, WordNet's related words) and weigh the rules of agentic
// searches. Off by default because on the data measured they did not help
// without an LLM (docs/retrieval-tuning.md); a graph an LLM former fills
// with topics is where the graph channel may pay.
type searchFlags struct {
	graph         *string
	graphWeight   *float64
	wordnet       *bool
	wordnetWeight *float64
	agent         *string
	agentCfg      engine.AgentConfig // agent parsed by check
	walk          func(map[string]float64, []retrieval.Edge) map[string]float64
	thesaurus     *wordnet.Thesaurus // loaded by check when wordnet is on
}

const maxChannelWeight = 10

func (f *searchFlags) register(fs *flag.FlagSet, getenv func(string) string) {
	weights := retrieval.DefaultConfig().Weights
	f.graph = fs.String("search-graph", envOr(getenv, "ENGRAM_SEARCH_GRAPH", "off"),
		"add the entity-graph channel to every search, walking the graph by `walk`: spread (spreading activation) or pagerank; off for none (env ENGRAM_SEARCH_GRAPH)")
	f.graphWeight = fs.Float64("search-graph-weight", envFloat(getenv, "ENGRAM_SEARCH_GRAPH_WEIGHT", weights[retrieval.ChannelGraph]),
		"the graph channel's `weight` in fusion, above 0 and at most 10 (env ENGRAM_SEARCH_GRAPH_WEIGHT)")
	f.wordnet = fs.Bool("search-wordnet", envBool(getenv, "ENGRAM_SEARCH_WORDNET"),
		"add the channel that searches the words WordNet relates to an English query's words (database in ENGRAM_WORDNET_DIR or the default directory; make wordnet installs it) (env ENGRAM_SEARCH_WORDNET=1)")
	f.wordnetWeight = fs.Float64("search-wordnet-weight", envFloat(getenv, "ENGRAM_SEARCH_WORDNET_WEIGHT", weights[retrieval.ChannelThesaurus]),
		"the WordNet channel's `weight` in fusion, above 0 and at most 10 (env ENGRAM_SEARCH_WORDNET_WEIGHT)")
	f.agent = fs.String("agent-rules", getenv("ENGRAM_AGENT_RULES"),
		"weigh the rules of agentic searches without a chat model, `key=value,...`: parts, anchors, neighbour, cue, entity, relation, mingain, from, cuelimit, limit, steps, window, anchortop (see docs/retrieval.md#agentic-search; env ENGRAM_AGENT_RULES)")
}

// check parses and checks the flags, and loads WordNet when it is asked
// for; a bad value, or a WordNet database that cannot be read, is a usage
// error naming the flag.
func (f *searchFlags) check(cmd *Command) error {
	if *f.graph != "off" {
		walk, ok := retrieval.GraphWalk(*f.graph)
		if !ok {
			return cmdUsageErrorf(cmd, "--search-graph (env ENGRAM_SEARCH_GRAPH) %q is not spread, pagerank or off", *f.graph)
		}
		f.walk = walk
	}
	for _, w := range []struct {
		name string
		v    float64
	}{{"search-graph-weight (env ENGRAM_SEARCH_GRAPH_WEIGHT)", *f.graphWeight}, {"search-wordnet-weight (env ENGRAM_SEARCH_WORDNET_WEIGHT)", *f.wordnetWeight}} {
		if !(w.v > 0 && w.v <= maxChannelWeight) || math.IsInf(w.v, 0) {
			return cmdUsageErrorf(cmd, "--%s %g is not a weight above 0 and at most %d", w.name, w.v, maxChannelWeight)
		}
	}
	cfg, err := engine.ParseAgentConfig(*f.agent)
	if err != nil {
		return cmdUsageErrorf(cmd, "--agent-rules (env ENGRAM_AGENT_RULES): %s", engram.ErrorMessage(err))
	}
	f.agentCfg = cfg
	if *f.wordnet {
		dir := wordnet.DefaultDir()
		th, err := loadThesaurus(dir)
		if err != nil {
			return cmdUsageErrorf(cmd, "--search-wordnet (env ENGRAM_SEARCH_WORDNET): cannot read the WordNet database in %s (make wordnet installs it, ENGRAM_WORDNET_DIR moves it): %v", dir, err)
		}
		f.thesaurus = th
	}
	return nil
}

// loadThesaurus reads the WordNet database in dir, so a server asked to
// expand queries fails at start rather than expanding nothing.
func loadThesaurus(dir string) (*wordnet.Thesaurus, error) {
	db := wordnet.Open(dir)
	if err := db.Load(); err != nil {
		return nil, err
	}
	return &wordnet.Thesaurus{DB: db, Limits: wordnet.DefaultLimits}, nil
}

// tune adds the channels the flags turn on to o, and the agentic rules'
// weights (checked by check).
func (f *searchFlags) tune(o *engine.Options) {
	if f.walk != nil {
		o.AddChannel(retrieval.Graph{Walk: f.walk}, *f.graphWeight)
	}
	if f.thesaurus != nil {
		o.AddChannel(retrieval.Expansion{Thesaurus: f.thesaurus}, *f.wordnetWeight)
	}
	if f.agentCfg != engine.DefaultAgentConfig() {
		cfg := f.agentCfg
		o.Agent = &cfg
	}
}
