package embedcache

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/engramhq/engram"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// chunk is how many keys one lookup statement names; well under SQLite's
// limit on bound parameters.
const chunk = 500

// schema is an ordinary rowid table: in a WITHOUT ROWID table, rows of a
// kilobyte or more (every vector of 256 dimensions and up) spill into
// overflow pages, which made writes three times slower. A file made before
// partitions (no tenant column) is emptied: its entries were shared by
// every tenant.
const schema = `CREATE TABLE IF NOT EXISTS embeddings (
	key    BLOB PRIMARY KEY,  -- see keyOf: the partition, the model name and the text
	tenant BLOB NOT NULL,     -- see tenantKey; empty for the shared partition
	dim    INTEGER NOT NULL,
	vec    BLOB NOT NULL      -- dim float32 values, little-endian
);
CREATE INDEX IF NOT EXISTS embeddings_by_tenant ON embeddings (tenant)`

// disk is the SQLite store of a Cache.
type disk struct {
	db       *sql.DB
	writeMu  sync.Mutex // one writer at a time in this process
	fullStmt string     // lookup of exactly chunk keys
}

func openDisk(path string) (*disk, error) {
	if strings.ContainsAny(path, "?#") || path == ":memory:" || strings.HasPrefix(path, "file:") {
		return nil, engram.Errorf(engram.EINVALID, "embedcache: Path %q must be a plain file name without '?' or '#'", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, engram.Errorf(engram.EUNAVAILABLE, "embedcache: cannot create the directory of %s: %v", path, err)
	}
	// WAL lets lookups run while a batch is written; NORMAL sync can lose
	// the last writes on power loss, which a cache can afford; mmap saves a
	// read system call per page on lookups; secure_delete zeroes the bytes
	// of forgotten entries instead of leaving them in free space.
	dsn := path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=mmap_size(268435456)&_pragma=secure_delete(1)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, engram.Errorf(engram.EUNAVAILABLE, "embedcache: open %s: %v", path, err)
	}
	if err := dropUnpartitioned(db); err != nil {
		db.Close()
		return nil, engram.Errorf(engram.EUNAVAILABLE, "embedcache: %s is not usable as a cache database: %v", path, err)
	}
	if _, err := db.Exec(schema); err != nil {
		db.Close()
		return nil, engram.Errorf(engram.EUNAVAILABLE, "embedcache: %s is not usable as a cache database: %v", path, err)
	}
	return &disk{db: db, fullStmt: lookupSQL(chunk)}, nil
}

// dropUnpartitioned drops an embeddings table without a tenant column.
func dropUnpartitioned(db *sql.DB) error {
	var n int
	if err := db.QueryRow("SELECT count(*) FROM pragma_table_info('embeddings')").Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	if err := db.QueryRow("SELECT count(*) FROM pragma_table_info('embeddings') WHERE name = 'tenant'").Scan(&n); err != nil || n > 0 {
		return err
	}
	_, err := db.Exec("DROP TABLE embeddings")
	return err
}

func lookupSQL(n int) string {
	return "SELECT key, dim, vec FROM embeddings WHERE key IN (?" + strings.Repeat(",?", n-1) + ")"
}

func (d *disk) close() error { return d.db.Close() }

// get returns the stored vectors for keys, and how many stored entries were
// unusable (wrong length, a dim other than want when want is known, or
// non-finite values); those count as absent.
func (d *disk) get(ctx context.Context, keys []key, want int) (map[key][]float32, int, error) {
	found := make(map[key][]float32, len(keys))
	bad := 0
	args := make([]any, 0, chunk)
	for start := 0; start < len(keys); start += chunk {
		part := keys[start:min(start+chunk, len(keys))]
		args = args[:0]
		for i := range part {
			args = append(args, part[i][:])
		}
		q := d.fullStmt
		if len(part) < chunk {
			q = lookupSQL(len(part))
		}
		rows, err := d.db.QueryContext(ctx, q, args...)
		if err != nil {
			return nil, bad, fmt.Errorf("lookup: %w", err)
		}
		for rows.Next() {
			// RawBytes avoids copying each blob before decoding it; they
			// stay valid until the next call to Next.
			var kb, vb sql.RawBytes
			var dim int
			if err := rows.Scan(&kb, &dim, &vb); err != nil {
				rows.Close()
				return nil, bad, fmt.Errorf("lookup: %w", err)
			}
			var k key
			if len(kb) != len(k) {
				continue
			}
			copy(k[:], kb)
			v, ok := decode(vb, dim, want)
			if !ok {
				bad++
				continue
			}
			found[k] = v
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, bad, fmt.Errorf("lookup: %w", err)
		}
	}
	return found, bad, nil
}

func decode(b []byte, dim, want int) ([]float32, bool) {
	if dim <= 0 || len(b) != 4*dim || (want > 0 && dim != want) {
		return nil, false
	}
	v := make([]float32, dim)
	for i := range v {
		x := math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return nil, false
		}
		v[i] = x
	}
	return v, true
}

func encode(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// put stores vecs under keys in one transaction, replacing what is there
// (which is how damaged entries get overwritten).
func (d *disk) put(ctx context.Context, tenant key, keys []key, vecs [][]float32) error {
	d.writeMu.Lock()
	defer d.writeMu.Unlock()
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback()
	stmt, err := tx.PrepareContext(ctx, "INSERT OR REPLACE INTO embeddings (key, tenant, dim, vec) VALUES (?, ?, ?, ?)")
	if err != nil {
		return fmt.Errorf("prepare insert: %w", err)
	}
	defer stmt.Close()
	for i, k := range keys {
		if _, err := stmt.ExecContext(ctx, k[:], tenantBlob(tenant), len(vecs[i]), encode(vecs[i])); err != nil {
			return fmt.Errorf("insert: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

func tenantBlob(t key) []byte {
	if t == (key{}) {
		return []byte{}
	}
	return t[:]
}

// deleteKeys removes the entries of keys and checkpoints.
func (d *disk) deleteKeys(ctx context.Context, keys []key) error {
	return d.deleteWhere(ctx, func(tx *sql.Tx) error {
		for start := 0; start < len(keys); start += chunk {
			part := keys[start:min(start+chunk, len(keys))]
			args := make([]any, len(part))
			for i := range part {
				args[i] = part[i][:]
			}
			q := "DELETE FROM embeddings WHERE key IN (?" + strings.Repeat(",?", len(part)-1) + ")"
			if _, err := tx.ExecContext(ctx, q, args...); err != nil {
				return err
			}
		}
		return nil
	})
}

// deleteTenant removes every entry of the tenant and checkpoints.
func (d *disk) deleteTenant(ctx context.Context, t key) error {
	return d.deleteWhere(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "DELETE FROM embeddings WHERE tenant = ?", t[:])
		return err
	})
}

// deleteWhere runs del in one transaction, then moves the write-ahead log
// into the file and truncates it, so that the deleted entries are neither
// in the log nor (secure_delete) in the file's free space.
func (d *disk) deleteWhere(ctx context.Context, del func(tx *sql.Tx) error) error {
	d.writeMu.Lock()
	defer d.writeMu.Unlock()
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback()
	if err := del(tx); err != nil {
		return fmt.Errorf("delete: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	if _, err := d.db.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}
