package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/engramhq/engram"
)

var searchCommand = &Command{
	Name:     "search",
	Synopsis: "find the memories that best answer a query",
	Usage: `
Usage: engram search [flags] QUERY...

Prints the best memories for QUERY (several arguments are joined with
spaces), best first: score, id, kind, status, version and a summary. With
--explain each hit is followed by how every retrieval channel ranked it.
With --mode agentic the search takes up to --steps more steps, each
refining the query, expanding from the best hits or stopping; --explain
then prints the trace of steps first.`,
	Run: runSearch,
}

func runSearch(ctx context.Context, m *Main, cmd *Command, args []string) error {
	fs := m.flagSet(cmd)
	var sf storeFlags
	sf.register(fs, m)
	asJSON := fs.Bool("json", false, "print the result as JSON")
	k := fs.Int("k", 0, "number of hits (default 10, at most 200)")
	explain := fs.Bool("explain", false, "show each retrieval channel's rank and score")
	asVault := fs.Bool("vault", false, "search the vault instead (see docs/security.md#vault): needs ENGRAM_VAULT_KEY, or an admin key with --server; audited")
	var now timeFlag
	fs.Var(&now, "now", "the `time` the question is asked at, for \"last week\" and recency (default: the present)")
	mode := fs.String("mode", "", "search mode: oneshot (default) or agentic")
	steps := fs.Int("steps", 0, "agentic: most steps after the first search (default 3, at most 8)")
	llmCalls := fs.Int("llm-calls", 0, "agentic: most calls to the server's chat model (default one per step)")
	llmTokens := fs.Int("llm-tokens", 0, "agentic: most chat-model tokens to spend (default 8000)")
	decay := fs.Bool("decay", true, "rank with the signals that change with time (recency, decayed access counts); --decay=false turns them off")
	var ff memoryFilterFlags
	ff.register(fs)
	pos, err := m.parse(cmd, fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return cmdUsageErrorf(cmd, "search needs a QUERY")
	}
	req := engram.SearchRequest{
		Scope:     sf.scope(),
		Query:     strings.Join(pos, " "),
		K:         *k,
		Filter:    ff.filter(),
		Explain:   *explain,
		Now:       now.t,
		Vault:     *asVault,
		Mode:      *mode,
		Steps:     *steps,
		LLMCalls:  *llmCalls,
		LLMTokens: *llmTokens,
	}
	if !*decay {
		req.Decay = decay
	}
	if err := req.ValidateMode(); err != nil {
		return cmdUsageErrorf(cmd, "%s", engram.ErrorMessage(err))
	}
	return sf.withService(ctx, cmd, m, openRead, func(ctx context.Context, svc engram.Service) error {
		res, err := svc.Search(vaultContext(ctx, *asVault), req)
		if err != nil {
			return err
		}
		if len(res.Hits) == 0 {
			m.noMatch("memory matched", req.Scope, res.EmptyScope)
		}
		if *asJSON {
			return writeJSON(m.Stdout, res)
		}
		if *explain {
			printTrace(m, res)
		}
		for i := range res.Hits {
			h := &res.Hits[i]
			fmt.Fprintf(m.Stdout, "%8.4f  %s\n", h.Score, memoryLine(&h.Memory))
			for _, c := range h.Explain {
				fmt.Fprintf(m.Stdout, "          %-8s rank %d score %.4f\n", c.Channel, c.Rank, c.Score)
			}
		}
		return nil
	})
}

// memoryFilterFlags are the flags that build a MemoryFilter; search and
// list share them.
type memoryFilterFlags struct {
	kinds    stringList
	statuses stringList
	contains string
	meta     metaFlag
	validAt  timeFlag
}

func (f *memoryFilterFlags) register(fs *flag.FlagSet) {
	fs.Var(&f.kinds, "kind", "only memories of this `kind` (repeatable)")
	fs.Var(&f.statuses, "status", "only memories in this `status` (repeatable; default active)")
	fs.StringVar(&f.contains, "contains", "", "only memories whose value, abstraction or a cue contains this `text`")
	fs.Var(&f.meta, "meta", "only memories whose metadata has `key=value` (repeatable)")
	fs.Var(&f.validAt, "valid-at", "only memories valid at this event `time` (RFC 3339)")
}

func (f *memoryFilterFlags) filter() engram.MemoryFilter {
	var mf engram.MemoryFilter
	for _, k := range f.kinds {
		mf.Kinds = append(mf.Kinds, engram.Kind(k))
	}
	for _, s := range f.statuses {
		mf.Statuses = append(mf.Statuses, engram.Status(s))
	}
	mf.Contains = f.contains
	mf.Metadata = f.meta
	mf.ValidAt = f.validAt.t
	return mf
}

// printTrace prints the steps of an agentic search, one per line, with
// the queries each searched and the new hits it brought to the first
// places.
func printTrace(m *Main, res *engram.SearchResult) {
	for i, st := range res.Trace {
		fmt.Fprintf(m.Stdout, "step %d  %-6s by %-5s gain %.3f  %s\n", i+1, st.Action, st.By, st.Gain, st.Reason)
		for _, q := range st.Queries {
			fmt.Fprintf(m.Stdout, "          query %q\n", q)
		}
		if len(st.New) > 0 {
			fmt.Fprintf(m.Stdout, "          new   %s\n", strings.Join(st.New, " "))
		}
	}
	if res.LLMCalls > 0 {
		fmt.Fprintf(m.Stdout, "llm: %d calls, %d tokens\n", res.LLMCalls, res.LLMTokens)
	}
	if len(res.Trace) > 0 {
		fmt.Fprintln(m.Stdout)
	}
}
