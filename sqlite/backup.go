package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/engramhq/engram"
)

// Backup writes a consistent copy of the database file src to dst, a file
// that must not exist yet, while other connections and processes (a
// running server) go on writing: VACUUM INTO reads one snapshot of the
// database in a read transaction, so every transaction committed before it
// began is in the copy and none that commits later is; writers are not
// stopped (WAL mode). The copy is a compact database of its own, without a
// WAL. It fails with EINVALID when src holds no database or dst exists,
// and with SQLite's error otherwise (dst is then removed).
func Backup(ctx context.Context, src, dst string) error {
	if _, err := os.Stat(src); errors.Is(err, fs.ErrNotExist) {
		return engram.Errorf(engram.EINVALID, "%s does not exist", src)
	}
	if _, err := os.Stat(dst); err == nil {
		return engram.Errorf(engram.EINVALID, "%s exists already; a backup writes a new file", dst)
	}
	abs, err := filepath.Abs(src)
	if err != nil {
		return err
	}
	db, err := sql.Open("sqlite", dsn(abs, "_pragma=busy_timeout("+strconv.FormatInt(busyTimeout.Milliseconds(), 10)+")"))
	if err != nil {
		return fmt.Errorf("open %s: %w", src, err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "VACUUM INTO ?", dst); err != nil {
		_ = os.Remove(dst)
		return fmt.Errorf("copy %s to %s: %w", src, dst, err)
	}
	return nil
}
