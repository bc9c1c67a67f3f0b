package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/sqlite"
	"github.com/engramhq/engram/storeopen"
)

var backupCommand = &Command{
	Name:     "backup",
	Synopsis: "write a consistent copy of a data directory, while it serves",
	Usage: `
Usage: engram backup [--data DIR] --out DIR|FILE.tar

Writes a consistent copy of the SQLite store of the data directory into
the new directory --out (or, for a name ending in .tar, into a new tar file
of the same content), while a server may go on writing to it: every
write acknowledged before the backup began is in the copy. The copy holds
the database (one snapshot, made with SQLite's VACUUM INTO, without a
WAL), the saved index files of the data directory's ann/ (copied before the
snapshot, so a restored server catches them up from the store's change
log) and MANIFEST.json with the size and SHA-256 of each file. Vault
memories stay sealed: the master key (ENGRAM_VAULT_KEY, --vault-key-file)
is not in the backup; keep it apart, the restored store needs it. API keys
are in the database. The embedding cache is not copied (it refills).

Bring it back with engram restore --backup DIR --data DIR. For PostgreSQL
use pg_dump and pg_restore (docs/operations.md#backup-and-restore).`,
	Run: runBackup,
}

// backupManifest is MANIFEST.json of a backup directory.
type backupManifest struct {
	Format    int               `json:"format"`
	CreatedAt time.Time         `json:"created_at"`
	Version   string            `json:"engram_version"`
	Files     map[string]string `json:"files"` // path in the backup -> sha256
}

const (
	manifestFile   = "MANIFEST.json"
	backupFormat   = 1
	indexDirInData = "ann"
)

func runBackup(ctx context.Context, m *Main, cmd *Command, args []string) error {
	fs := m.flagSet(cmd)
	data := fs.String("data", envOr(m.Getenv, "ENGRAM_DATA", defaultDataDir(m.Getenv)), "data `directory` to copy (env ENGRAM_DATA)")
	out := fs.String("out", "", "new `directory` to write the backup into, or a new FILE.tar (required; a directory must not exist or be empty)")
	pos, err := m.parse(cmd, fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) > 0:
		return cmdUsageErrorf(cmd, "backup takes no arguments, got %q", pos[0])
	case *out == "":
		return cmdUsageErrorf(cmd, "backup needs --out DIR")
	}
	if _, err := os.Stat(storeopen.File(*data)); err != nil {
		return cmdUsageErrorf(cmd, "--data %s holds no %s", *data, storeopen.DBFile)
	}
	dir := *out
	if isTarName(*out) {
		if _, err := os.Stat(*out); err == nil {
			return cmdUsageErrorf(cmd, "--out: %s exists already", *out)
		}
		tmp, err := os.MkdirTemp(filepath.Dir(*out), ".backup-*")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	} else if err := emptyDir(*out); err != nil {
		return cmdUsageErrorf(cmd, "--out: %v", err)
	}
	man, err := writeBackup(ctx, *data, dir)
	if err != nil {
		return err
	}
	if dir != *out {
		if err := tarDir(dir, *out); err != nil {
			return fmt.Errorf("write %s: %w", *out, err)
		}
	}
	fmt.Fprintf(m.Stdout, "backed up %s to %s (%d files)\n", *data, *out, len(man.Files))
	return nil
}

// writeBackup copies the index files, then the database snapshot, then
// writes the manifest last: a backup without MANIFEST.json is unfinished.
func writeBackup(ctx context.Context, data, out string) (*backupManifest, error) {
	if err := os.MkdirAll(out, 0o700); err != nil {
		return nil, err
	}
	if err := copyTree(filepath.Join(data, indexDirInData), filepath.Join(out, indexDirInData)); err != nil {
		return nil, fmt.Errorf("copy the index files: %w", err)
	}
	if err := sqlite.Backup(ctx, storeopen.File(data), filepath.Join(out, storeopen.DBFile)); err != nil {
		return nil, err
	}
	man := &backupManifest{Format: backupFormat, CreatedAt: time.Now().UTC(), Version: buildVersion().Version, Files: map[string]string{}}
	if err := hashTree(out, man.Files); err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(man, "", "  ")
	if err != nil {
		return nil, err
	}
	return man, writeSynced(filepath.Join(out, manifestFile), b)
}

// emptyDir returns an error when dir exists and holds anything.
func emptyDir(dir string) error {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	if len(ents) > 0 {
		return fmt.Errorf("%s is not empty", dir)
	}
	return nil
}

// copyTree copies the regular files under src into dst, skipping the
// temporary files of a save in progress; a missing src copies nothing.
// The engine replaces an index file by renaming a complete one over it,
// so each copy is a whole file of some moment.
func copyTree(src, dst string) error {
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o700)
		}
		if !d.Type().IsRegular() || isTempName(d.Name()) {
			return nil
		}
		err = copyFile(path, filepath.Join(dst, rel))
		if errors.Is(err, fs.ErrNotExist) {
			return nil // removed since listed (a purge dropped its index)
		}
		return err
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

func isTempName(name string) bool {
	return strings.HasPrefix(name, ".tmp-") || strings.HasPrefix(name, ".probe-")
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	return writeNew(dst, in)
}

// writeNew writes what r holds into the new file dst (an existing one is
// an error), synced to disk before it returns.
func writeNew(dst string, r io.Reader) error {
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, r); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func writeSynced(name string, b []byte) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// hashTree records the SHA-256 of every file under dir but the manifest,
// by its slash-separated path in dir.
func hashTree(dir string, into map[string]string) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if rel == manifestFile {
			return nil
		}
		sum, err := fileSHA256(path)
		if err != nil {
			return err
		}
		into[filepath.ToSlash(rel)] = sum
		return nil
	})
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// restoreBackup checks the backup in dir (a directory, or a .tar file
// unpacked into a temporary one) against its manifest and copies
// it into the data directory data, which must hold no store unless force
// (then its store files and index files are replaced; the server must be
// stopped). It opens the restored store once, which checks and migrates
// it, and returns how many files it restored.
func restoreBackup(ctx context.Context, dir, data string, force bool) (int, error) {
	if isTarName(dir) {
		tmp, err := os.MkdirTemp("", "engram-restore-*")
		if err != nil {
			return 0, err
		}
		defer os.RemoveAll(tmp)
		if err := untar(dir, tmp); err != nil {
			return 0, err
		}
		dir = tmp
	}
	var man backupManifest
	b, err := os.ReadFile(filepath.Join(dir, manifestFile))
	if err != nil {
		return 0, engram.Errorf(engram.EINVALID, "%s is not a finished backup (no %s): %v", dir, manifestFile, err)
	}
	if err := json.Unmarshal(b, &man); err != nil || man.Format != backupFormat {
		return 0, engram.Errorf(engram.EINVALID, "%s/%s is not a backup manifest of format %d", dir, manifestFile, backupFormat)
	}
	got := map[string]string{}
	if err := hashTree(dir, got); err != nil {
		return 0, err
	}
	for name, sum := range man.Files {
		if got[name] != sum {
			return 0, engram.Errorf(engram.EINVALID, "backup file %s is missing or changed since the backup (SHA-256 differs)", name)
		}
	}
	if err := clearForRestore(data, force); err != nil {
		return 0, err
	}
	if err := copyTree(dir, data); err != nil {
		return 0, fmt.Errorf("copy the backup: %w", err)
	}
	_ = os.Remove(filepath.Join(data, manifestFile))
	st, err := storeopen.Open(ctx, data, storeopen.Options{MustExist: true})
	if err != nil {
		return 0, fmt.Errorf("open the restored store: %w", err)
	}
	return len(man.Files), st.Close()
}

// clearForRestore makes sure data can take a backup: missing or empty, or
// with force its store files and index files removed.
func clearForRestore(data string, force bool) error {
	if err := emptyDir(data); err == nil {
		return nil
	} else if !force {
		return engram.Errorf(engram.EINVALID, "--data %s: %v; restore into an empty directory, or with --force replace its store (stop its server first)", data, err)
	}
	db := storeopen.File(data)
	for _, f := range []string{db, db + "-wal", db + "-shm"} {
		if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return os.RemoveAll(filepath.Join(data, indexDirInData))
}
