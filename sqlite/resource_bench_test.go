package sqlite_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/sqlite"
)

// BenchmarkResourceStorage compares the two places the embedded store
// could keep a resource's bytes: chunk rows in the database (what it
// does: one write transaction per 1 MiB chunk, as the engine uploads)
// and a file in a blob directory beside it (written, fsynced and renamed
// into place, as a blob store would). Each is written and then read back
// whole, for a 1 MB and a 50 MB file. Run:
//
//	go test -run '^$' -bench BenchmarkResourceStorage -benchtime 3x ./sqlite/
func BenchmarkResourceStorage(b *testing.B) {
	for _, size := range []int{1 << 20, 50 << 20} {
		data := make([]byte, size)
		for i := range data {
			data[i] = byte(i * 131)
		}
		b.Run(fmt.Sprintf("db/%dMB", size>>20), func(b *testing.B) { benchDBResource(b, data) })
		b.Run(fmt.Sprintf("dir/%dMB", size>>20), func(b *testing.B) { benchDirResource(b, data) })
	}
}

func benchDBResource(b *testing.B, data []byte) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ns := engram.Namespace{Org: "o", Project: "p", User: "u"}
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for range b.N {
		r := &engram.Resource{ID: engram.NewID(), Namespace: ns, Name: "f", MIMEType: "application/octet-stream"}
		if err := db.Update(ctx, func(tx engram.Tx) error { return tx.InsertResource(ctx, r) }); err != nil {
			b.Fatal(err)
		}
		for seq := 0; seq*engram.ResourceChunkBytes < len(data); seq++ {
			chunk := data[seq*engram.ResourceChunkBytes : min(len(data), (seq+1)*engram.ResourceChunkBytes)]
			if err := db.Update(ctx, func(tx engram.Tx) error {
				return tx.PutResourceChunk(ctx, ns, r.ID, seq, chunk)
			}); err != nil {
				b.Fatal(err)
			}
		}
		n := 0
		for seq := 0; n < len(data); seq++ {
			if err := db.View(ctx, func(rd engram.Reader) error {
				c, err := rd.ResourceChunk(ctx, ns, r.ID, seq)
				n += len(c)
				return err
			}); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func benchDirResource(b *testing.B, data []byte) {
	dir := b.TempDir()
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := range b.N {
		tmp := filepath.Join(dir, fmt.Sprintf("tmp-%d", i))
		f, err := os.Create(tmp)
		if err != nil {
			b.Fatal(err)
		}
		for off := 0; off < len(data); off += engram.ResourceChunkBytes {
			if _, err := f.Write(data[off:min(len(data), off+engram.ResourceChunkBytes)]); err != nil {
				b.Fatal(err)
			}
		}
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
		f.Close()
		final := filepath.Join(dir, fmt.Sprintf("blob-%d", i))
		if err := os.Rename(tmp, final); err != nil {
			b.Fatal(err)
		}
		if d, err := os.Open(dir); err == nil {
			d.Sync()
			d.Close()
		}
		rf, err := os.Open(final)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, rf); err != nil {
			b.Fatal(err)
		}
		rf.Close()
	}
}
