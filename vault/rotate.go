package vault

import (
	"context"

	"github.com/engramhq/engram"
)

// Rotate rewraps every tenant's data key, unwrapped with the master key
// old, under the master key next, in one transaction, and says how many it
// rewrapped. Sealed memories are untouched: their data keys stay the same.
// If old does not open every key, nothing is changed and the error names
// the tenant; other errors are the store's.
func Rotate(ctx context.Context, st engram.Store, old, next []byte) (int, error) {
	from, err := New(old)
	if err != nil {
		return 0, err
	}
	to, err := New(next)
	if err != nil {
		return 0, err
	}
	n := 0
	err = st.Update(ctx, func(tx engram.Tx) error {
		keys, err := tx.VaultKeys(ctx)
		if err != nil {
			return err
		}
		for i := range keys {
			t := tenant{keys[i].Org, keys[i].Project}
			dk, err := open(from.master, keys[i].Wrapped, wrapAD(t))
			if err != nil {
				return engram.Errorf(engram.EINVALID, "the old master key does not open the data key of tenant %s/%s; nothing was changed", t.org, t.project)
			}
			keys[i].Wrapped = seal(to.master, dk, wrapAD(t))
			if err := tx.ReplaceVaultKey(ctx, &keys[i]); err != nil {
				return err
			}
		}
		n = len(keys)
		return nil
	})
	return n, err
}
