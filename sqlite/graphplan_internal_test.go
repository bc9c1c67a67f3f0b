package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/engramhq/engram"
)

// tenantWide matches a plan step that reads a table over a whole tenant:
// a scan, or a search keyed by the tenant's columns only.
var tenantWide = regexp.MustCompile(`(?m)^(SCAN (e|m|r|k|x|ev|em)$|SEARCH \w+ USING .*\(org=\? AND project=\?\)$|SEARCH \w+ USING .*\(org=\? AND project=\? AND user_id=\?\)$)`)

// TestGraphQueryPlans pins that the graph's reads, which every write of a
// memory runs, are driven by the ids or keys they are given: a plan that
// walks a tenant's entities, mentions or relations makes every write cost
// grow with the graph (it once made ingest several times slower).
func TestGraphQueryPlans(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "plans.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	plan := func(q string, args ...any) string {
		t.Helper()
		return queryPlan(t, db, q, args...)
	}
	ids := `["a","b","c"]`
	for _, s := range []engram.Scope{{Org: "o", Project: "p", User: "u"}, {Org: "o", Project: "p", User: "u", IncludeShared: true}} {
		type check struct {
			name, q string
			args    []any
		}
		var checks []check
		for _, kind := range []string{"n", "t"} {
			q, args := entitiesByKeySQL(s, kind, ids, 64)
			checks = append(checks, check{"entities by key " + kind, q, args})
		}
		for _, col := range []string{"memory_id", "entity_id"} {
			q, args := mentionsSQL(s, col, ids, 10)
			checks = append(checks, check{"mentions by " + col, q, args})
		}
		for name, f := range map[string]engram.RelationFilter{
			"within": {Within: true, Label: "l", NoEvidence: true},
			"with":   {With: "x", Label: "l"},
			"any":    {Label: "l"},
		} {
			q, args, err := relationsSQL(s, []string{"a", "b"}, f, 10)
			if err != nil {
				t.Fatal(err)
			}
			checks = append(checks, check{"relations " + name, q, args})
		}
		// The writes of every memory's graph, keyed by the ids they write.
		for name, q := range map[string]string{"put relation": putRelationSQL, "put relations": putRelationsSQL,
			"relation check": relationCheckSQL, "put mention": putMentionSQL, "add evidence": addEvidenceSQL,
			"insert evidences": insertEvidencesSQL, "delete evidences": deleteEvidencesSQL} {
			var args []any
			switch q {
			case putRelationsSQL:
				args = []any{"o", "p", "u", `[["a","b","c","l",1,null,2,null]]`}
			case insertEvidencesSQL:
				args = []any{"o", "p", "u", `[["a","b",1]]`}
			case deleteEvidencesSQL:
				args = []any{"o", "p", ids}
			case putRelationSQL:
				args = []any{"o", "p", "u", "a", "b", "c", "l", 1, nil, 2, nil}
			default: // ?1..?6
				args = []any{"o", "p", "u", "a", "b", "c"}
			}
			checks = append(checks, check{name, q, args})
		}
		for _, c := range checks {
			p := plan(c.q, c.args...)
			if m := tenantWide.FindString(p); m != "" {
				t.Errorf("%s %s: plan\n%s\nreads the whole tenant at %q", c.name, fmt.Sprint(s), p, m)
			}
		}
	}
}
