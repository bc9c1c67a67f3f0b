package sqlite

import (
	"context"
	"strings"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/storeutil"
)

// identityExports gives, for each identity record type, its table, its
// columns, the column it is keyed by within a user, and how to scan a row
// into a record.
var identityExports = map[string]struct {
	table, cols, key string
	scan             func(scanner) (engram.Record, error)
}{
	engram.RecordModality: {"identity_modalities", "org, project, user_id, name, dim, created_at", "name", func(sc scanner) (engram.Record, error) {
		var m engram.EmbeddingModality
		var at int64
		err := sc.Scan(&m.Namespace.Org, &m.Namespace.Project, &m.Namespace.User, &m.Name, &m.Dim, &at)
		m.CreatedAt = fromMicros(at)
		return engram.Record{Type: engram.RecordModality, Modality: &m}, err
	}},
	engram.RecordPerson: {"persons", personCols, "id", func(sc scanner) (engram.Record, error) {
		p, err := scanPerson(sc)
		return engram.Record{Type: engram.RecordPerson, Person: &p}, err
	}},
	engram.RecordIdentity: {"identities", identityCols, "id", func(sc scanner) (engram.Record, error) {
		i, err := scanIdentity(sc)
		return engram.Record{Type: engram.RecordIdentity, Identity: &i}, err
	}},
	engram.RecordObservation: {"identity_observations", observationCols, "id", func(sc scanner) (engram.Record, error) {
		o, err := scanObservation(sc)
		return engram.Record{Type: engram.RecordObservation, Observation: &o}, err
	}},
	engram.RecordIdentityEvent: {"identity_events", eventCols, "id", func(sc scanner) (engram.Record, error) {
		ev, err := scanEvent(sc)
		return engram.Record{Type: engram.RecordIdentityEvent, IdentityEvent: &ev}, err
	}},
}

// IdentityExportPage implements engram.IdentityExporter.
func (t *identityTx) IdentityExportPage(ctx context.Context, s engram.Scope, kind, after string, limit int) ([]engram.Record, string, error) {
	return storeutil.IdentityExportPage(s, kind, after, limit, func(user, key string, n int) ([]engram.Record, error) {
		x := identityExports[kind]
		q := "SELECT " + x.cols + " FROM " + x.table + " WHERE " + ownerWhere
		args := []any{s.Org, s.Project, s.User}
		if after != "" {
			q += " AND (user_id, " + x.key + ") > (?, ?)"
			args = append(args, user, key)
		}
		var out []engram.Record
		err := t.each(ctx, "identity export", q+" ORDER BY user_id, "+x.key+" LIMIT ?", append(args, n), func(sc scanner) error {
			r, err := x.scan(sc)
			out = append(out, r)
			return err
		})
		return out, err
	})
}

// IdentityOwners implements engram.IdentityExporter.
func (t *identityTx) IdentityOwners(ctx context.Context, fn func(engram.Namespace) error) error {
	var q []string
	for _, table := range identityTables {
		q = append(q, "SELECT org, project, user_id FROM "+table)
	}
	var owners []engram.Namespace
	err := t.each(ctx, "identity owners", strings.Join(q, " UNION ")+" ORDER BY 1, 2, 3", nil, func(sc scanner) error {
		var n engram.Namespace
		err := sc.Scan(&n.Org, &n.Project, &n.User)
		owners = append(owners, n)
		return err
	})
	if err != nil {
		return err
	}
	return storeutil.CallEach(owners, fn)
}
