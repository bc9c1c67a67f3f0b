package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/finetune"
	"github.com/engramhq/engram/openai"
)

var exportCommand = &Command{
	Name:     "export",
	Synopsis: "write every record of a scope as JSONL",
	Usage: `
Usage: engram export [flags] [--format records|sft|dpo] [--out FILE]

Writes every record in the scope (episodes, then memories, then versions,
then audit entries) as one JSON object per line to stdout or to --out. The
output is what "engram import" reads; exporting, importing into an empty
data directory and exporting again gives the same bytes.

The scope is exact, as for every command: without --user only records that
belong to no user are exported, so export each user separately.

--format sft and --format dpo write training data for a personal model of
the --user instead (see
docs/integrations.md#training-data-for-a-personal-model): sft one
chat-format example {"messages": [system, user, assistant]} per question a
current memory answers, in the user's voice and the memory's language; dpo
one preference pair {"prompt", "chosen", "rejected"} per fact value or
profile a current one replaced. Deleted, superseded, expired and vault
memories are never taught as current. With --llm-url a chat model writes
the sft questions and answers (templates where its reply is unusable);
without it, templates do. The same store gives the same bytes.

--out is written to a temporary file beside FILE and renamed into place only
when the export is complete, so a failed export never leaves a partial file.`,
	Run: runExport,
}

func runExport(ctx context.Context, m *Main, cmd *Command, args []string) error {
	fs := m.flagSet(cmd)
	var sf storeFlags
	sf.register(fs, m)
	out := fs.String("out", "", "write to this `file` instead of stdout")
	format := fs.String("format", "records", "what to write: records (what import reads), sft or dpo (training data of --user)")
	var lf llmFlags
	lf.register(fs, m.Getenv)
	pos, err := m.parse(cmd, fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return cmdUsageErrorf(cmd, "export takes no arguments, got %q (use --out FILE)", pos[0])
	}
	write, err := exportWriter(cmd, m, &sf, &lf, *format)
	if err != nil {
		return err
	}
	return sf.withService(ctx, cmd, m, openRead, func(ctx context.Context, svc engram.Service) error {
		if *out == "" {
			_, err := write(ctx, svc, sf.scope(), m.Stdout)
			return err
		}
		return exportFile(ctx, svc, sf.scope(), *out, m.Stderr, write)
	})
}

// exportWriteFunc writes an export of s read through svc to w and counts
// what it wrote.
type exportWriteFunc func(ctx context.Context, svc engram.Service, s engram.Scope, w io.Writer) (exportCounts, error)

// exportWriter returns the writer of format, or a usage error for an
// unknown format, a training-data format without --user, or an unusable
// --llm-url.
func exportWriter(cmd *Command, m *Main, sf *storeFlags, lf *llmFlags, format string) (exportWriteFunc, error) {
	switch format {
	case "records":
		return exportTo, nil
	case string(finetune.SFT), string(finetune.DPO):
	default:
		return nil, cmdUsageErrorf(cmd, "--format %q is not one of records, sft, dpo", format)
	}
	if sf.scope().User == "" {
		return nil, cmdUsageErrorf(cmd, "--format %s exports the training data of one user: name it with --user", format)
	}
	logger := slog.New(slog.NewTextHandler(m.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	o := finetune.Options{Format: finetune.Format(format), Logger: logger}
	if lf.url != "" {
		if lf.model == "" {
			return nil, cmdUsageErrorf(cmd, "--llm-url needs --llm-model (env ENGRAM_LLM_MODEL)")
		}
		chat, err := openai.NewChat(openai.Config{BaseURL: lf.url, Model: lf.model, APIKey: lf.key, Logger: logger})
		if err != nil {
			return nil, cmdUsageErrorf(cmd, "--llm-url: %s", errorSentence(err))
		}
		o.Asker = finetune.NewLLM(chat)
	}
	return func(ctx context.Context, svc engram.Service, s engram.Scope, w io.Writer) (exportCounts, error) {
		c, err := finetune.Write(ctx, svc, s, o, w)
		if err != nil {
			return nil, fmt.Errorf("export %s: %w", format, err)
		}
		return exportCounts{"training": c.Records, "memories": c.Memories, "fallbacks": c.Fallbacks}, nil
	}, nil
}

// exportCounts says how many records of each type an export wrote.
type exportCounts map[string]int

// exportTo writes the scope's records to w, one JSON object per line.
func exportTo(ctx context.Context, svc engram.Service, s engram.Scope, w io.Writer) (exportCounts, error) {
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	counts := exportCounts{}
	err := svc.Export(ctx, s, func(r engram.Record) error {
		counts[r.Type]++
		return enc.Encode(r)
	})
	if err != nil {
		return counts, fmt.Errorf("export: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return counts, fmt.Errorf("write export: %w", err)
	}
	return counts, nil
}

func exportFile(ctx context.Context, svc engram.Service, s engram.Scope, name string, stderr io.Writer, write exportWriteFunc) (err error) {
	f, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".*.tmp")
	if err != nil {
		return fmt.Errorf("create export file: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	counts, err := write(ctx, svc, s, f)
	if err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("write export file: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write export file: %w", err)
	}
	if err := os.Rename(f.Name(), name); err != nil {
		return fmt.Errorf("write export file: %w", err)
	}
	if _, ok := counts["training"]; ok {
		fmt.Fprintf(stderr, "exported %d training records from %d memories (%d from templates after an unusable model reply) to %s\n",
			counts["training"], counts["memories"], counts["fallbacks"], name)
		return nil
	}
	fmt.Fprintf(stderr, "exported %d episodes, %d memories, %d versions, %d audit entries to %s\n",
		counts[engram.RecordEpisode], counts[engram.RecordMemory], counts[engram.RecordVersion], counts[engram.RecordAudit], name)
	return nil
}
