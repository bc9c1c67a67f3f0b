package storecheck

import (
	"context"
	"time"

	"github.com/engramhq/engram"
)

// maintReads checks the reads of maintenance, which cross tenants: a scan
// of every memory, the memories that lapsed and the abandoned uploads.
type maintReads struct {
	engram.Dumper
	engram.Expirer
	engram.UploadSweeper
}

// ScanMemories: EINVALID for a limit that is not positive.
func (x maintReads) ScanMemories(ctx context.Context, after engram.MemoryKey, limit int) ([]engram.Memory, error) {
	if limit <= 0 {
		return nil, engram.Errorf(engram.EINVALID, "scan limit %d is not positive", limit)
	}
	return x.Dumper.ScanMemories(ctx, after, limit)
}

// Lapsed: EINVALID for a limit that is not positive.
func (x maintReads) Lapsed(ctx context.Context, at time.Time, limit int) ([]engram.Memory, error) {
	if limit <= 0 {
		return nil, engram.Errorf(engram.EINVALID, "lapsed limit %d is not positive", limit)
	}
	return x.Expirer.Lapsed(ctx, at, limit)
}

// AbandonedUploads: EINVALID for a limit below 1.
func (x maintReads) AbandonedUploads(ctx context.Context, before time.Time, limit int) ([]engram.Resource, error) {
	if limit < 1 {
		return nil, engram.Errorf(engram.EINVALID, "abandoned uploads: limit %d is below 1", limit)
	}
	return x.UploadSweeper.AbandonedUploads(ctx, before, limit)
}
