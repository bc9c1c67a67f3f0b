package finetune

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/engramhq/engram"
)

// Format is the kind of training data Write produces.
type Format string

// Formats.
const (
	// SFT is chat-format supervised data: one {"messages": [system, user,
	// assistant]} object per line, the form most fine-tuning tools read.
	SFT Format = "sft"
	// DPO is preference data in TRL's conversational preference form with
	// an explicit prompt: {"prompt": [system, user], "chosen": [assistant],
	// "rejected": [assistant]} per line.
	DPO Format = "dpo"
)

// Message is one chat message of a record.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// SFTRecord is one line of an SFT export.
type SFTRecord struct {
	Messages []Message `json:"messages"`
}

// DPORecord is one line of a DPO export.
type DPORecord struct {
	Prompt   []Message `json:"prompt"`
	Chosen   []Message `json:"chosen"`
	Rejected []Message `json:"rejected"`
}

// Pair is one question a memory answers and the user's answer.
type Pair struct {
	Question string `json:"question"`
	Answer   string `json:"answer"`
}

// Asker writes the question/answer pairs of one memory; *LLM is one. An
// error makes Write use the templates for that memory instead.
type Asker interface {
	Pairs(ctx context.Context, m *engram.Memory) ([]Pair, error)
}

// Options configure Write.
type Options struct {
	Format Format
	// Asker, when set, writes the SFT pairs of every memory but the
	// profile (whose traits and states are their own answer); nil uses
	// templates only.
	// Preference pairs always come from templates, so that chosen and
	// rejected differ only in the value.
	Asker Asker
	// Now decides which memories are current (TTL, validity); zero means
	// the clock.
	Now    time.Time
	Logger *slog.Logger
}

// Exporter is what Write reads through: engram.ScopeService's Export,
// which *engine.Engine and *http.Client implement. Its errors are
// Write's.
type Exporter interface {
	// Export calls fn for every record in the scope; see
	// engram.ScopeService.
	Export(ctx context.Context, s engram.Scope, fn func(engram.Record) error) error
}

// Counts says what Write read and wrote.
type Counts struct {
	Records   int `json:"records"`   // lines written
	Memories  int `json:"memories"`  // memories taught (SFT) or preferred (DPO)
	Fallbacks int `json:"fallbacks"` // memories the Asker failed on, written from templates
}

// Write reads the memories of s, which must name one user, through svc
// and writes the training data of o.Format to w as JSON lines, in a stable
// order: the same store gives the same bytes (with an Asker, as far as the
// model answers the same). It fails with EINVALID for an unknown format or
// a scope without a user, with svc's errors, and with w's.
func Write(ctx context.Context, svc Exporter, s engram.Scope, o Options, w io.Writer) (Counts, error) {
	if err := o.check(&s); err != nil {
		return Counts{}, err
	}
	snap, err := read(ctx, svc, s)
	if err != nil {
		return Counts{}, err
	}
	b := builder{o: o, user: s.User, snap: snap}
	if b.o.Now.IsZero() {
		b.o.Now = time.Now()
	}
	if b.o.Logger == nil {
		b.o.Logger = slog.New(slog.DiscardHandler)
	}
	var recs []any
	if o.Format == SFT {
		recs = b.sft(ctx)
	} else {
		recs = b.dpo()
	}
	if err := writeLines(w, recs); err != nil {
		return Counts{}, err
	}
	b.counts.Records = len(recs)
	return b.counts, nil
}

// check validates the options and the scope, which it narrows to the
// user's own records (never the project's shared ones).
func (o *Options) check(s *engram.Scope) error {
	if o.Format != SFT && o.Format != DPO {
		return engram.Errorf(engram.EINVALID, "format %q is not one of sft, dpo", o.Format)
	}
	if err := s.Validate(); err != nil {
		return err
	}
	if s.User == "" {
		return engram.Errorf(engram.EINVALID, "user: a training-data export is of one user; name the user")
	}
	s.IncludeShared = false
	return nil
}

// snapshot is what Write reads: the scope's memories but vault ones, by
// id, and their versions, oldest first.
type snapshot struct {
	memories []engram.Memory
	byID     map[string]*engram.Memory
	versions map[string][]engram.Version
	// factTurns holds the sources (sourceKey) of every fact memory,
	// whatever its status.
	factTurns map[string]bool
}

// read collects the scope's memories and versions from svc's export,
// leaving out vault memories and their versions whatever ctx allows.
func read(ctx context.Context, svc Exporter, s engram.Scope) (*snapshot, error) {
	snap := &snapshot{byID: map[string]*engram.Memory{}, versions: map[string][]engram.Version{}}
	var vers []engram.Version
	err := svc.Export(ctx, s, func(r engram.Record) error {
		switch {
		case r.Type == engram.RecordMemory && r.Memory != nil && r.Memory.Kind != engram.KindVault:
			snap.memories = append(snap.memories, *r.Memory)
		case r.Type == engram.RecordVersion && r.Version != nil:
			vers = append(vers, *r.Version)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("finetune: read the scope: %w", err)
	}
	slices.SortFunc(snap.memories, func(a, b engram.Memory) int { return strings.Compare(a.ID, b.ID) })
	snap.factTurns = map[string]bool{}
	for i := range snap.memories {
		m := &snap.memories[i]
		snap.byID[m.ID] = m
		if m.Metadata[engram.MetaFactAttribute] != nil && len(m.Sources) > 0 {
			snap.factTurns[sourceKey(m)] = true
		}
	}
	slices.SortFunc(vers, func(a, b engram.Version) int {
		if c := strings.Compare(a.MemoryID, b.MemoryID); c != 0 {
			return c
		}
		return a.Version - b.Version
	})
	for _, v := range vers {
		if snap.byID[v.MemoryID] != nil && !vaultVersion(v) {
			snap.versions[v.MemoryID] = append(snap.versions[v.MemoryID], v)
		}
	}
	return snap, nil
}

func vaultVersion(v engram.Version) bool {
	return (v.Old != nil && v.Old.Kind == engram.KindVault) || (v.New != nil && v.New.Kind == engram.KindVault)
}

// writeLines encodes each record as one line of JSON.
func writeLines(w io.Writer, recs []any) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for _, r := range recs {
		if err := enc.Encode(r); err != nil {
			return fmt.Errorf("finetune: write: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("finetune: write: %w", err)
	}
	return nil
}
