package postgres

import (
	"context"

	"github.com/engramhq/engram"
)

// PutRelations implements engram.RelationsWriter: every relation is
// checked first, so a bad one stores nothing, then each is put as
// PutRelation does. (One statement per table, as the embedded store
// does, is left for when the server's round trips show in a profile.)
func (t *graphTx) PutRelations(ctx context.Context, rs []*engram.Relation) error {
	if err := t.writable(); err != nil {
		return err
	}
	for _, r := range rs {
		if err := t.PutRelation(ctx, r); err != nil {
			return err
		}
	}
	return nil
}
