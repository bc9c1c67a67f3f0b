package storeutil_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/storeutil"
)

func TestNextPage(t *testing.T) {
	cursor := func(last int) string { return fmt.Sprint("after ", last) }
	if page, next := storeutil.NextPage([]int{1, 2, 3}, 3, cursor); len(page) != 3 || next != "" {
		t.Errorf("a last page = %v, %q; want all three and no cursor", page, next)
	}
	if page, next := storeutil.NextPage([]int{1, 2, 3}, 2, cursor); !slices.Equal(page, []int{1, 2}) || next != "after 2" {
		t.Errorf("a full page = %v, %q; want [1 2] and the cursor after 2", page, next)
	}
}

func TestExportPageChecksFirst(t *testing.T) {
	read := func(n int) ([]engram.Record, error) {
		t.Fatalf("read called for a bad request (n=%d)", n)
		return nil, nil
	}
	s := engram.ScopeOf(engram.Namespace{Org: "o", Project: "p"})
	if _, _, err := storeutil.ExportPage(s, "nonsense", 10, read); engram.ErrorCode(err) != engram.EINVALID {
		t.Errorf("unknown kind: %v, want EINVALID", err)
	}
	if _, _, err := storeutil.ExportPage(s, engram.RecordMemory, 0, read); engram.ErrorCode(err) != engram.EINVALID {
		t.Errorf("limit 0: %v, want EINVALID", err)
	}
	asked := 0
	out, next, err := storeutil.ExportPage(s, engram.RecordMemory, 2, func(n int) ([]engram.Record, error) {
		asked = n
		return nil, nil
	})
	if err != nil || out != nil || next != "" || asked != 3 {
		t.Errorf("empty page = %v, %q, %v (asked %d); want nothing, asked for limit+1", out, next, err, asked)
	}
}

func TestCollectAndRowError(t *testing.T) {
	each := func(rows []int) func(emit func(int) error) error {
		return func(emit func(int) error) error {
			for _, r := range rows {
				if err := emit(r); err != nil {
					return storeutil.RowError(err, func(err error) error { return fmt.Errorf("mapped: %w", err) })
				}
			}
			return nil
		}
	}
	double := func(r int) (int, error) { return 2 * r, nil }
	if got, err := storeutil.Collect(each([]int{1, 2}), double); err != nil || !slices.Equal(got, []int{2, 4}) {
		t.Errorf("Collect = %v, %v; want [2 4]", got, err)
	}
	bad := errors.New("bad row")
	_, err := storeutil.Collect(each([]int{1}), func(int) (int, error) { return 0, bad })
	if !errors.Is(err, bad) || err.Error() != "mapped: bad row" {
		t.Errorf("a scan error = %v, want it mapped", err)
	}
	mine := errors.New("the caller's")
	_, err = storeutil.Collect(each([]int{1}), func(int) (int, error) { return 0, storeutil.FnError{Err: mine} })
	if err != mine {
		t.Errorf("a caller's error = %v, want it unwrapped and unmapped", err)
	}
}

func TestValidIDs(t *testing.T) {
	got := storeutil.ValidIDs([]string{id1, "nope", id1, ""})
	if !slices.Equal(got, []string{id1}) {
		t.Errorf("ValidIDs = %q, want [%s]", got, id1)
	}
}

func TestIsCoded(t *testing.T) {
	if !storeutil.IsCoded(nil) || !storeutil.IsCoded(fmt.Errorf("x: %w", engram.Errorf(engram.EINVALID, "y"))) || storeutil.IsCoded(errors.New("z")) {
		t.Error("IsCoded: want true for nil and a coded error, false for a plain one")
	}
}

func TestCheckKeyAndRelations(t *testing.T) {
	if err := storeutil.CheckKey(&engram.APIKey{ID: "k", Role: "admin"}); engram.ErrorCode(err) != engram.EINVALID {
		t.Errorf("a key without a hash: %v, want EINVALID", err)
	}
	if err := storeutil.CheckRelations(nil); err != nil {
		t.Errorf("no relations: %v", err)
	}
}
