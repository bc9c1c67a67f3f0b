package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/engramhq/engram"
)

var exportCommand = &Command{
	Name:     "export",
	Synopsis: "write every record of a scope as JSONL",
	Usage: `
Usage: engram export [flags] [--out FILE]

Writes every record in the scope (episodes, then memories, then versions,
then audit entries) as one JSON object per line to stdout or to --out. The
output is what "engram import" reads; exporting, importing into an empty
data directory and exporting again gives the same bytes.

The scope is exact, as for every command: without --user only records that
belong to no user are exported, so export each user separately.

--out is written to a temporary file beside FILE and renamed into place only
when the export is complete, so a failed export never leaves a partial file.`,
	Run: runExport,
}

func runExport(ctx context.Context, m *Main, cmd *Command, args []string) error {
	fs := m.flagSet(cmd)
	var sf storeFlags
	sf.register(fs, m)
	out := fs.String("out", "", "write to this `file` instead of stdout")
	pos, err := m.parse(cmd, fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return cmdUsageErrorf(cmd, "export takes no arguments, got %q (use --out FILE)", pos[0])
	}
	return sf.withService(ctx, cmd, m, openRead, func(ctx context.Context, svc engram.Service) error {
		if *out == "" {
			_, err := exportTo(ctx, svc, sf.scope(), m.Stdout)
			return err
		}
		return exportFile(ctx, svc, sf.scope(), *out, m.Stderr)
	})
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

func exportFile(ctx context.Context, svc engram.Service, s engram.Scope, name string, stderr io.Writer) (err error) {
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
	counts, err := exportTo(ctx, svc, s, f)
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
	fmt.Fprintf(stderr, "exported %d episodes, %d memories, %d versions, %d audit entries to %s\n",
		counts[engram.RecordEpisode], counts[engram.RecordMemory], counts[engram.RecordVersion], counts[engram.RecordAudit], name)
	return nil
}
