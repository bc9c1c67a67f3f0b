package main

import (
	"context"
	"fmt"
	"io"

	"github.com/schollz/progressbar/v3"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
)

var importCommand = &Command{
	Name:     "import",
	Synopsis: "store records from an export",
	Usage: `
Usage: engram import [flags] FILE
       engram import [flags] --file FILE
       engram export ... | engram import [flags] -

Reads the JSONL written by "engram export" ("-" for stdin) and stores the
records losslessly, with their ids, times and history. Every record must
lie inside the scope given by --org, --project, --user, --agent and
--session. Records already stored identically are skipped, so an import can
be repeated; a record that differs from a stored one with the same id is a
conflict.

The whole file is checked before anything is sent, and is stored in ONE
transaction when its JSON is at most --chunk-bytes (default 64 MiB) and it
has at most 100000 records: then either every record is stored or none is.
A larger file is sent in chunks within those limits, in file order, each its own transaction; if one fails,
the chunks before it stay stored, and running the same import again
finishes the job because the stored records are skipped. A resource is
never split: it goes in one chunk with all its content records.

A progress bar is shown on stderr when stderr is a terminal, or with
--progress.`,
	Run: runImport,
}

// defaultChunkBytes is the most JSON one Import call carries by default: big
// enough that ordinary exports go in one transaction, and well under the
// HTTP server's default import body limit (256 MiB). A chunk also never
// holds more than engine.MaxImport records, the most one call takes.
const defaultChunkBytes = 64 << 20

func runImport(ctx context.Context, m *Main, cmd *Command, args []string) error {
	fs := m.flagSet(cmd)
	var sf storeFlags
	sf.register(fs, m)
	asJSON := fs.Bool("json", false, "print the counts as JSON")
	file := fs.String("file", "", "read this `file` (\"-\" for stdin)")
	progress := fs.Bool("progress", false, "show a progress bar even when stderr is not a terminal")
	chunkBytes := fs.Int("chunk-bytes", defaultChunkBytes, "most `bytes` of JSON stored in one transaction")
	pos, err := m.parse(cmd, fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) > 1:
		return cmdUsageErrorf(cmd, "import takes one FILE, got %d arguments", len(pos))
	case len(pos) == 1 && *file != "":
		return cmdUsageErrorf(cmd, "give FILE or --file, not both")
	case len(pos) == 1:
		*file = pos[0]
	case *file == "":
		return cmdUsageErrorf(cmd, "import needs a FILE (\"-\" for stdin)")
	}
	if *chunkBytes <= 0 {
		return cmdUsageErrorf(cmd, "--chunk-bytes must be positive")
	}
	showBar := *progress || m.StderrIsTerminal

	chunks, total, err := m.readImport(*file, *chunkBytes, showBar)
	if err != nil {
		return err
	}

	return sf.withService(ctx, cmd, m, openWrite, func(ctx context.Context, svc engram.Service) error {
		var bar *progressbar.ProgressBar
		if showBar {
			bar = newBar(m.Stderr, int64(total), "importing", false)
		}
		var sum engram.ImportResult
		done := 0
		for i, chunk := range chunks {
			res, err := svc.Import(ctx, sf.scope(), chunk)
			if err != nil {
				if len(chunks) > 1 {
					return fmt.Errorf("chunk %d of %d (records %d to %d; the %d before are stored): %w",
						i+1, len(chunks), done+1, done+len(chunk), done, err)
				}
				return err
			}
			sum.Episodes += res.Episodes
			sum.Memories += res.Memories
			sum.Versions += res.Versions
			sum.Audit += res.Audit
			sum.Resources += res.Resources
			sum.Skipped += res.Skipped
			done += len(chunk)
			if bar != nil {
				_ = bar.Add(len(chunk))
			}
		}
		if bar != nil {
			_ = bar.Finish()
		}
		if *asJSON {
			return writeJSON(m.Stdout, sum)
		}
		fmt.Fprintf(m.Stdout, "imported %d episodes, %d memories, %d versions, %d audit entries, %d resources; %d already stored\n",
			sum.Episodes, sum.Memories, sum.Versions, sum.Audit, sum.Resources, sum.Skipped)
		return nil
	})
}

// readImport reads and checks every record of the file and splits them into
// chunks of at most chunkBytes of JSON (a single larger record gets a chunk
// of its own). It returns the chunks and the number of records.
func (m *Main) readImport(name string, chunkBytes int, showBar bool) ([][]engram.Record, int, error) {
	r, size, err := m.openInput(name)
	if err != nil {
		return nil, 0, err
	}
	defer r.Close()
	var src io.Reader = r
	var bar *progressbar.ProgressBar
	if showBar {
		bar = newBar(m.Stderr, size, "reading", true)
		src = io.TeeReader(r, bar)
	}
	var (
		chunks [][]engram.Record
		cur    []engram.Record
		bytes  int
		total  int
	)
	err = readJSONL(src, inputName(name), func(rec *engram.Record, n int) error {
		if _, err := rec.Namespace(); err != nil {
			return engram.Errorf(engram.EINVALID, "%s record %d: %s", inputName(name), total+1, engram.ErrorMessage(err))
		}
		// A resource's chunks are imported in the same call as the resource.
		if len(cur) > 0 && rec.Type != engram.RecordResourceChunk && (bytes+n > chunkBytes || len(cur) == engine.MaxImport) {
			chunks, cur, bytes = append(chunks, cur), nil, 0
		}
		cur = append(cur, *rec)
		bytes += n
		total++
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	if len(cur) > 0 {
		chunks = append(chunks, cur)
	}
	if bar != nil {
		_ = bar.Finish()
	}
	return chunks, total, nil
}

// newBar returns a progress bar drawn on w. max -1 means unknown.
func newBar(w io.Writer, max int64, desc string, bytes bool) *progressbar.ProgressBar {
	return progressbar.NewOptions64(max,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionShowBytes(bytes),
		progressbar.OptionShowCount(),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100e6),
		progressbar.OptionSetRenderBlankState(true),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) }),
	)
}
