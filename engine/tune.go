package engine

import (
	"maps"
	"math"
	"strconv"
	"strings"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/retrieval"
)

// AddChannel adds c to the channels o's engine runs after the built-in
// ones, weighed weight in fusion: it sets c's weight in a copy of
// o.Retrieval (retrieval.DefaultConfig when nil), so a configuration
// shared with other options is left alone.
func (o *Options) AddChannel(c retrieval.Channel, weight float64) {
	cfg := retrieval.DefaultConfig()
	if o.Retrieval != nil {
		cfg = *o.Retrieval
	}
	cfg.Weights = maps.Clone(cfg.Weights)
	if cfg.Weights == nil {
		cfg.Weights = map[string]float64{}
	}
	cfg.Weights[c.Name()] = weight
	o.Retrieval = &cfg
	o.Channels = append(o.Channels, c)
}

// agentShares are the keys of an agent spec that set a weight or share,
// with where each goes; each lies in [0, maxAgentShare].
func agentShares(c *AgentConfig) map[string]*float64 {
	return map[string]*float64{
		"parts": &c.PartWeight, "anchors": &c.AnchorWeight, "neighbour": &c.NeighbourShare,
		"cue": &c.CueShare, "entity": &c.EntityShare, "relation": &c.RelationShare,
	}
}

// agentCounts are the keys of an agent spec that set a count, with where
// each goes and its least and greatest value.
func agentCounts(c *AgentConfig) map[string]struct {
	p        *int
	min, max int
} {
	type count = struct {
		p        *int
		min, max int
	}
	return map[string]count{
		"from": {&c.ExpandFrom, 1, 50}, "cuelimit": {&c.CueLimit, 0, 50}, "limit": {&c.EntityLimit, 0, 50},
		"steps": {&c.ExpandSteps, 0, engram.MaxSteps}, "window": {&c.Window, 1, engram.MaxK},
		"anchortop": {&c.AnchorTop, 1, 50},
	}
}

// maxAgentShare bounds the weights and shares of an agent spec: a
// ranking weighed far above the first search's would replace it.
const maxAgentShare = 10

// ParseAgentConfig returns DefaultAgentConfig with the fields spec names
// set. spec is "key=value,..." (an empty spec changes nothing); the keys
// are parts and anchors (PartWeight, AnchorWeight), neighbour, cue,
// entity and relation (the shares), mingain (MinGain, 0 to 1), and the
// counts from (ExpandFrom), cuelimit, limit (EntityLimit), steps
// (ExpandSteps), window and anchortop. An unknown key, a value that is not
// a number or one out of its range is EINVALID naming the key.
func ParseAgentConfig(spec string) (AgentConfig, error) {
	cfg := DefaultAgentConfig()
	shares, counts := agentShares(&cfg), agentCounts(&cfg)
	for kv := range strings.SplitSeq(spec, ",") {
		if strings.TrimSpace(kv) == "" {
			continue
		}
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok {
			return AgentConfig{}, engram.Errorf(engram.EINVALID, "agent: %q is not key=value", kv)
		}
		switch c, isCount := counts[k]; {
		case shares[k] != nil || k == "mingain":
			limit := float64(maxAgentShare)
			if k == "mingain" {
				limit = 1
			}
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || math.IsNaN(f) || f < 0 || f > limit {
				return AgentConfig{}, engram.Errorf(engram.EINVALID, "agent: %s %q is not a number from 0 to %g", k, v, limit)
			}
			if k == "mingain" {
				cfg.MinGain = f
			} else {
				*shares[k] = f
			}
		case isCount:
			n, err := strconv.Atoi(v)
			if err != nil || n < c.min || n > c.max {
				return AgentConfig{}, engram.Errorf(engram.EINVALID, "agent: %s %q is not a whole number from %d to %d", k, v, c.min, c.max)
			}
			*c.p = n
		default:
			return AgentConfig{}, engram.Errorf(engram.EINVALID, "agent: unknown key %q (known: parts, anchors, neighbour, cue, entity, relation, mingain, from, cuelimit, limit, steps, window, anchortop)", k)
		}
	}
	return cfg, nil
}
