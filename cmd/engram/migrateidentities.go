package main

import (
	"context"
	"fmt"

	"github.com/engramhq/engram"
)

// identityOwners returns the tenant and user of every owner of identity
// records in st.
func identityOwners(ctx context.Context, st engram.Store) ([]engram.Namespace, error) {
	var out []engram.Namespace
	err := st.View(ctx, func(r engram.Reader) error {
		return r.IdentityOwners(ctx, func(n engram.Namespace) error {
			out = append(out, n)
			return nil
		})
	})
	return out, err
}

// identityCopyPage is how many identity records one read of the source
// and one write of the destination take.
const identityCopyPage = 500

// eachIdentityPage calls fn with every identity record of every owner in
// st, a page of one kind of one owner at a time, each read in its own
// transaction.
func eachIdentityPage(ctx context.Context, st engram.Store, fn func([]engram.Record) error) error {
	owners, err := identityOwners(ctx, st)
	if err != nil {
		return err
	}
	for _, n := range owners {
		s := engram.ScopeOf(n)
		for _, kind := range engram.IdentityRecords {
			for after := ""; ; {
				var page []engram.Record
				var next string
				err := st.View(ctx, func(r engram.Reader) error {
					var err error
					page, next, err = r.IdentityExportPage(ctx, s, kind, after, identityCopyPage)
					return err
				})
				if err != nil {
					return fmt.Errorf("read the %s records of %s user %q: %w", kind, n.Tenant(), n.User, err)
				}
				if err := fn(page); err != nil {
					return err
				}
				if next == "" {
					break
				}
				after = next
			}
		}
	}
	return nil
}

// copyIdentities copies every identity record of src into dst under the
// same ids, a page per destination transaction (each kind after the kinds
// it refers to), and returns the summary of what it read.
func copyIdentities(ctx context.Context, src, dst engram.Store) (summary, error) {
	sum := summary{}
	err := eachIdentityPage(ctx, src, func(page []engram.Record) error {
		for _, r := range page {
			if err := sum.add(engram.DumpRecord{Record: r}); err != nil {
				return err
			}
		}
		return dst.Update(ctx, func(tx engram.Tx) error {
			for _, r := range page {
				if err := writeIdentityRecord(ctx, tx, r); err != nil {
					return fmt.Errorf("write %s record: %w", r.Type, err)
				}
			}
			return nil
		})
	})
	return sum, err
}

// writeIdentityRecord stores one identity record as it is.
func writeIdentityRecord(ctx context.Context, w engram.IdentityWriter, r engram.Record) error {
	switch {
	case r.Modality != nil:
		return w.PutModality(ctx, r.Modality)
	case r.Person != nil:
		return w.PutPerson(ctx, r.Person)
	case r.Identity != nil:
		return w.PutIdentity(ctx, r.Identity)
	case r.Observation != nil:
		return w.InsertObservation(ctx, r.Observation)
	case r.IdentityEvent != nil:
		return w.InsertIdentityEvent(ctx, r.IdentityEvent)
	}
	return fmt.Errorf("an identity record of type %q does not match its payload", r.Type)
}

// summarizeIdentities reads every identity record of st and tallies them.
func summarizeIdentities(ctx context.Context, st engram.Store) (summary, error) {
	sum := summary{}
	err := eachIdentityPage(ctx, st, func(page []engram.Record) error {
		for _, r := range page {
			if err := sum.add(engram.DumpRecord{Record: r}); err != nil {
				return err
			}
		}
		return nil
	})
	return sum, err
}
