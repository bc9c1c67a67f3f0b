package main

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/bits"
	"path/filepath"
	"strings"

	"github.com/schollz/progressbar/v3"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/storeopen"
)

var migrateStoreCommand = &Command{
	Name:     "migrate-store",
	Synopsis: "copy every record from one store to another (SQLite <-> PostgreSQL)",
	Usage: `
Usage: engram migrate-store --from SRC --to DST [--progress] [--batch N]

Copies everything in the store SRC into the empty store DST: the episodes,
memories, versions and audit entries of every tenant, the stored vectors of
every embedder, store-wide settings such as which embedder made the
vectors, the resources, and every user's identities (modalities, persons,
identities, observations and identity events). Each of SRC and DST is either a data directory (the SQLite store
in DIR/engram.db) or a postgres:// URL. SRC must exist; a missing DST
directory is created, and a PostgreSQL DST gets its schema first.

DST must hold no record at all: the command refuses to mix two stores.
SRC is read from one snapshot, so servers may keep using it, but writes
made after the copy starts are not copied. DST is written in transactions
of --batch records (default 2000); if the copy fails part-way, empty DST
(or start from a new one) and run it again.

Afterwards both stores are read back and, for each kind of record, the
count and a checksum that does not depend on order (the sum of the SHA-256
of each record's JSON) are printed side by side. Any difference makes the
command fail with exit status 1.

A progress bar is shown on stderr when stderr is a terminal, or with
--progress. Give PostgreSQL URLs without the password (set PGPASSWORD) to
keep it out of process listings.`,
	Run: runMigrateStore,
}

// defaultCopyBatch is how many records one destination transaction takes:
// enough to amortise a commit, few enough to keep memory bounded.
const defaultCopyBatch = 2000

func runMigrateStore(ctx context.Context, m *Main, cmd *Command, args []string) error {
	fs := m.flagSet(cmd)
	from := fs.String("from", "", "source: a data `directory` or a postgres:// URL")
	to := fs.String("to", "", "destination: a data `directory` or a postgres:// URL")
	progress := fs.Bool("progress", false, "show a progress bar even when stderr is not a terminal")
	batch := fs.Int("batch", defaultCopyBatch, "most `records` written in one destination transaction")
	pos, err := m.parse(cmd, fs, args)
	if err != nil {
		return err
	}
	if err := checkMigrateStore(cmd, pos, *from, *to, *batch); err != nil {
		return err
	}
	// Only warnings: the SQLite store logs its migrations to the default.
	logger := slog.New(slog.NewTextHandler(m.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	slog.SetDefault(logger)
	src, err := openStore(ctx, "--from", *from, storeopen.Options{Logger: logger, MustExist: true})
	if err != nil {
		return fmt.Errorf("open the source: %w", err)
	}
	defer src.Close()
	dst, err := openStore(ctx, "--to", *to, storeopen.Options{Logger: logger})
	if err != nil {
		return fmt.Errorf("open the destination: %w", err)
	}
	defer dst.Close()

	if err := checkEmpty(ctx, dst); err != nil {
		return err
	}
	var bar *progressbar.ProgressBar
	if *progress || m.StderrIsTerminal {
		bar = newBar(m.Stderr, -1, "copying", false)
	}
	c, err := copyEverything(ctx, src, dst, *batch, bar)
	if err != nil {
		return err
	}
	if bar != nil {
		_ = bar.Finish()
		bar = newBar(m.Stderr, int64(c.sum.total()), "verifying", false)
	}
	v, err := verifyCopy(ctx, dst, c, bar)
	if err != nil {
		return err
	}
	if bar != nil {
		_ = bar.Finish()
	}
	return m.printCopy(c, v)
}

// checkMigrateStore refuses positional arguments, a missing --from or
// --to, a batch that is not positive, locations that are neither a
// directory nor a postgres:// URL, and copying a data directory onto
// itself.
func checkMigrateStore(cmd *Command, pos []string, from, to string, batch int) error {
	switch {
	case len(pos) > 0:
		return cmdUsageErrorf(cmd, "migrate-store takes no arguments, got %q", pos[0])
	case from == "":
		return cmdUsageErrorf(cmd, "--from is required: a data directory or a postgres:// URL")
	case to == "":
		return cmdUsageErrorf(cmd, "--to is required: a data directory or a postgres:// URL")
	case batch <= 0:
		return cmdUsageErrorf(cmd, "--batch must be positive")
	}
	if err := errors.Join(checkLocation("--from", from), checkLocation("--to", to)); err != nil {
		return err
	}
	if fromB, _ := storeopen.Backend(from); fromB == storeopen.SQLite && sameDir(from, to) {
		return cmdUsageErrorf(cmd, "--from and --to are the same data directory")
	}
	return nil
}

// storeCopy is what copyEverything copied: the source's summary of the
// dumped records and of the identities, and the counts of what is copied
// beside them.
type storeCopy struct {
	sum           summary
	ids           summary
	vaultKeys     int
	resources     int
	resourceBytes int64
}

// copyEverything copies the records, the vault's data keys, the resources
// and the identities of src into dst, in that order.
func copyEverything(ctx context.Context, src, dst engram.Store, batch int, bar *progressbar.ProgressBar) (storeCopy, error) {
	var c storeCopy
	var err error
	if c.sum, err = copyStore(ctx, src, dst, batch, bar); err != nil {
		return c, fmt.Errorf("copy: %w", err)
	}
	if c.vaultKeys, err = copyVaultKeys(ctx, src, dst); err != nil {
		return c, fmt.Errorf("copy the vault's data keys: %w", err)
	}
	if c.resources, c.resourceBytes, err = copyResources(ctx, src, dst); err != nil {
		return c, fmt.Errorf("copy the resources: %w", err)
	}
	if c.ids, err = copyIdentities(ctx, src, dst); err != nil {
		return c, fmt.Errorf("copy the identities: %w", err)
	}
	return c, nil
}

// storeCheck is the comparison of the copy with its source: the kinds of
// record compared and the summaries of both, identities included when
// either has some.
type storeCheck struct {
	kinds    []string
	src, dst summary
}

// verifyCopy reads dst back and lines its summary up with the source's.
func verifyCopy(ctx context.Context, dst engram.Store, c storeCopy, bar *progressbar.ProgressBar) (storeCheck, error) {
	dstSum, err := summarize(ctx, dst, bar)
	if err != nil {
		return storeCheck{}, fmt.Errorf("verify the destination: %w", err)
	}
	dstIDs, err := summarizeIdentities(ctx, dst)
	if err != nil {
		return storeCheck{}, fmt.Errorf("verify the destination's identities: %w", err)
	}
	v := storeCheck{kinds: dumpKinds, src: c.sum, dst: dstSum}
	if c.ids.total()+dstIDs.total() > 0 {
		v.kinds = append(append([]string{}, dumpKinds...), engram.IdentityRecords...)
		for k, t := range c.ids {
			v.src[k] = t
		}
		for k, t := range dstIDs {
			v.dst[k] = t
		}
	}
	return v, nil
}

// printCopy prints the counts and checksums of both stores side by side,
// then what else was copied; an error names the kinds that differ.
func (m *Main) printCopy(c storeCopy, v storeCheck) error {
	fmt.Fprintf(m.Stdout, "%-9s %10s %10s  %-16s  %-16s\n", "KIND", "SOURCE", "COPY", "SOURCE SHA", "COPY SHA")
	var bad []string
	for _, k := range v.kinds {
		s, d := v.src[k], v.dst[k]
		mark := ""
		if s != d {
			mark = "  MISMATCH"
			bad = append(bad, k)
		}
		fmt.Fprintf(m.Stdout, "%-9s %10d %10d  %-16s  %-16s%s\n", k, s.count, d.count, s.short(), d.short(), mark)
	}
	if len(bad) > 0 {
		return fmt.Errorf("the copy differs from the source in %s records", strings.Join(bad, ", "))
	}
	if c.vaultKeys > 0 {
		fmt.Fprintf(m.Stdout, "copied %d wrapped vault data keys (the same master key opens them)\n", c.vaultKeys)
	}
	if c.resources > 0 {
		fmt.Fprintf(m.Stdout, "copied %d resources (%d bytes); each copy's content matches its SHA-256\n", c.resources, c.resourceBytes)
	}
	fmt.Fprintf(m.Stdout, "copied %d records; counts and checksums match\n", v.src.total())
	return nil
}

// dumpKinds are the kinds of record Dumper.Dump returns, in its order.
var dumpKinds = []string{
	engram.RecordEpisode, engram.RecordMemory, engram.RecordVersion,
	engram.RecordAudit, engram.RecordVector, engram.RecordMeta,
}

func sameDir(a, b string) bool {
	a, errA := filepath.Abs(a)
	b, errB := filepath.Abs(b)
	return errA == nil && errB == nil && a == b
}

var errNotEmpty = errors.New("not empty")

// checkEmpty returns an error unless st holds no record of any kind.
func checkEmpty(ctx context.Context, st engram.Store) error {
	var first engram.DumpRecord
	err := st.View(ctx, func(r engram.Reader) error {
		return r.Dump(ctx, func(d engram.DumpRecord) error {
			first = d
			return errNotEmpty
		})
	})
	if errors.Is(err, errNotEmpty) {
		return engram.Errorf(engram.EINVALID, "the destination is not empty (it holds at least one %s record); migrate-store only copies into an empty store", first.Type)
	}
	if err != nil {
		return fmt.Errorf("read the destination: %w", err)
	}
	if rs, err := listResources(ctx, st); err != nil {
		return fmt.Errorf("read the destination: %w", err)
	} else if len(rs) > 0 {
		return engram.Errorf(engram.EINVALID, "the destination is not empty (it holds resources); migrate-store only copies into an empty store")
	}
	if owners, err := identityOwners(ctx, st); err != nil {
		return fmt.Errorf("read the destination: %w", err)
	} else if len(owners) > 0 {
		return engram.Errorf(engram.EINVALID, "the destination is not empty (it holds identities); migrate-store only copies into an empty store")
	}
	return nil
}

// copyStore copies every record of src into dst in transactions of about
// batch records, and returns the summary of what it read from src's
// snapshot. The fields of one memory's vectors by one embedder never
// straddle two transactions: PutVectors replaces them all at once.
func copyStore(ctx context.Context, src, dst engram.Store, batch int, bar *progressbar.ProgressBar) (summary, error) {
	sum := summary{}
	var buf []engram.DumpRecord
	flush := func() error {
		if len(buf) == 0 {
			return nil
		}
		if err := dst.Update(ctx, func(tx engram.Tx) error { return writeRecords(ctx, tx, buf) }); err != nil {
			return err
		}
		if bar != nil {
			_ = bar.Add(len(buf))
		}
		buf = buf[:0]
		return nil
	}
	err := src.View(ctx, func(r engram.Reader) error {
		return r.Dump(ctx, func(d engram.DumpRecord) error {
			if err := sum.add(d); err != nil {
				return err
			}
			if len(buf) >= batch && !sameVectorOwner(buf[len(buf)-1], d) {
				if err := flush(); err != nil {
					return err
				}
			}
			// The dump reuses nothing, so keeping d is safe.
			buf = append(buf, d)
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return sum, nil
}

func sameVectorOwner(a, b engram.DumpRecord) bool {
	if a.Type != engram.RecordVector || b.Type != engram.RecordVector {
		return false
	}
	x, y := a.Vector, b.Vector
	return x.Namespace.Org == y.Namespace.Org && x.Namespace.Project == y.Namespace.Project &&
		x.MemoryID == y.MemoryID && x.Embedder == y.Embedder
}

// writeRecords stores recs through tx, giving the consecutive vectors of
// one memory and embedder to one PutVectors call.
func writeRecords(ctx context.Context, tx engram.Tx, recs []engram.DumpRecord) error {
	for i := 0; i < len(recs); i++ {
		r := recs[i]
		var err error
		switch {
		case r.Type == engram.RecordEpisode && r.Episode != nil:
			err = tx.InsertEpisode(ctx, r.Episode)
		case r.Type == engram.RecordMemory && r.Memory != nil:
			err = tx.InsertMemory(ctx, r.Memory)
		case r.Type == engram.RecordVersion && r.Version != nil:
			err = tx.InsertVersion(ctx, r.Version)
		case r.Type == engram.RecordAudit && r.Audit != nil:
			err = tx.InsertAudit(ctx, r.Audit)
		case r.Type == engram.RecordVector && r.Vector != nil:
			v := r.Vector
			fvs := []engram.FieldVector{{Field: v.Field, Vec: v.Vec}}
			for i+1 < len(recs) && sameVectorOwner(r, recs[i+1]) {
				i++
				fvs = append(fvs, engram.FieldVector{Field: recs[i].Vector.Field, Vec: recs[i].Vector.Vec})
			}
			err = tx.PutVectors(ctx, v.Namespace, v.MemoryID, v.Embedder, fvs)
		case r.Type == engram.RecordMeta && r.Meta != nil && r.Meta.Key == engine.MetaIndexStore:
			// The copy is another store: saved vector indexes of the
			// source, numbered by its change log, must not match it.
		case r.Type == engram.RecordMeta && r.Meta != nil:
			err = tx.SetMeta(ctx, r.Meta.Key, r.Meta.Value)
		default:
			err = fmt.Errorf("a dump record of type %q does not match its payload", r.Type)
		}
		if err != nil {
			return fmt.Errorf("write %s record: %w", r.Type, err)
		}
	}
	return nil
}

// tally is the count of one kind of record and the sum, modulo 2^256, of
// the SHA-256 of each one's JSON: a sum does not depend on the order, and
// unlike XOR it does not cancel a record that appears twice.
type tally struct {
	count int
	sum   [4]uint64 // big-endian limbs
}

func (t tally) short() string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], t.sum[0])
	return hex.EncodeToString(b[:])
}

// summary is the tally of each kind of record of a store.
type summary map[string]tally

func (s summary) add(d engram.DumpRecord) error {
	if d.Type == engram.RecordMeta && d.Meta != nil && d.Meta.Key == engine.MetaIndexStore {
		return nil // not copied, see copyStore
	}
	b, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("encode %s record: %w", d.Type, err)
	}
	h := sha256.Sum256(b)
	t := s[d.Type]
	t.count++
	var carry uint64
	for i := 3; i >= 0; i-- {
		t.sum[i], carry = bits.Add64(t.sum[i], binary.BigEndian.Uint64(h[i*8:]), carry)
	}
	s[d.Type] = t
	return nil
}

func (s summary) total() int {
	n := 0
	for _, t := range s {
		n += t.count
	}
	return n
}

// summarize reads every record of st and tallies them.
func summarize(ctx context.Context, st engram.Store, bar *progressbar.ProgressBar) (summary, error) {
	sum := summary{}
	err := st.View(ctx, func(r engram.Reader) error {
		return r.Dump(ctx, func(d engram.DumpRecord) error {
			if bar != nil {
				_ = bar.Add(1)
			}
			return sum.add(d)
		})
	})
	return sum, err
}
