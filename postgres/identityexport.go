package postgres

import (
	"context"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/storeutil"
)

type rowScanner = interface{ Scan(...any) error }

// userRow scans a row whose first column is the user before the columns
// the wrapped scan asks for.
type userRow struct {
	sc   rowScanner
	user *string
}

func (u userRow) Scan(dest ...any) error { return u.sc.Scan(append([]any{u.user}, dest...)...) }

// identityExports gives, for each identity record type, its table, its
// columns, the column it is keyed by within a user, and how to scan a row
// (user first) into a record of scope s's tenant.
var identityExports = map[string]struct {
	table, cols, key string
	scan             func(s engram.Scope, sc rowScanner) (engram.Record, error)
}{
	engram.RecordModality: {"identity_modalities", "name, dim, created_at", "name", func(s engram.Scope, sc rowScanner) (engram.Record, error) {
		m := engram.EmbeddingModality{Namespace: engram.IdentityOwner(s.Namespace())}
		err := sc.Scan(&m.Namespace.User, &m.Name, &m.Dim, &m.CreatedAt)
		m.CreatedAt = m.CreatedAt.UTC()
		return engram.Record{Type: engram.RecordModality, Modality: &m}, err
	}},
	engram.RecordPerson: {"persons", personCols, "id", func(s engram.Scope, sc rowScanner) (engram.Record, error) {
		var user string
		p, err := scanPerson(s, userRow{sc, &user})
		p.Namespace.User = user
		return engram.Record{Type: engram.RecordPerson, Person: &p}, err
	}},
	engram.RecordIdentity: {"identities", identityCols, "id", func(s engram.Scope, sc rowScanner) (engram.Record, error) {
		var user string
		i, err := scanIdentity(s, userRow{sc, &user})
		i.Namespace.User = user
		return engram.Record{Type: engram.RecordIdentity, Identity: &i}, err
	}},
	engram.RecordObservation: {"identity_observations", "id, identity_id, modality, embedding, episode_id, span_start, span_end, at", "id", func(s engram.Scope, sc rowScanner) (engram.Record, error) {
		o := engram.Observation{Namespace: engram.IdentityOwner(s.Namespace())}
		var blob []byte
		var start, end *int64
		if err := sc.Scan(&o.Namespace.User, &o.ID, &o.IdentityID, &o.Modality, &blob, &o.EpisodeID, &start, &end, &o.At); err != nil {
			return engram.Record{}, err
		}
		o.At = o.At.UTC()
		if start != nil && end != nil {
			o.Span = &engram.MediaSpan{StartMS: *start, EndMS: *end}
		}
		var err error
		o.Embedding, err = storeutil.DecodeVec(blob, len(blob)/4)
		return engram.Record{Type: engram.RecordObservation, Observation: &o}, err
	}},
	engram.RecordIdentityEvent: {"identity_events", "id, op, identities, observations, person_id, source, episode_id, actor, at", "id", func(s engram.Scope, sc rowScanner) (engram.Record, error) {
		ev := engram.IdentityEvent{Namespace: engram.IdentityOwner(s.Namespace())}
		err := sc.Scan(&ev.Namespace.User, &ev.ID, &ev.Op, &ev.Identities, &ev.Observations, &ev.PersonID, &ev.Source, &ev.EpisodeID, &ev.Actor, &ev.At)
		ev.At = ev.At.UTC()
		return engram.Record{Type: engram.RecordIdentityEvent, IdentityEvent: &ev}, err
	}},
}

// IdentityExportPage implements engram.IdentityExporter.
func (t *identityTx) IdentityExportPage(ctx context.Context, s engram.Scope, kind, after string, limit int) ([]engram.Record, string, error) {
	return storeutil.IdentityExportPage(s, kind, after, limit, func(user, key string, n int) ([]engram.Record, error) {
		if storable("scope", s.Tenant()+s.User+user+key) != nil {
			return nil, nil // no row can match
		}
		x := identityExports[kind]
		q := "SELECT user_id, " + x.cols + " FROM " + x.table + " WHERE tenant = $1 AND user_id = $2"
		args := []any{s.Tenant(), s.User}
		if after != "" {
			args = append(args, user, key)
			q += " AND (user_id, " + x.key + ") > ($" + itoa(len(args)-1) + ", $" + itoa(len(args)) + ")"
		}
		args = append(args, n)
		var out []engram.Record
		err := t.each(ctx, "identity export", q+" ORDER BY user_id, "+x.key+" LIMIT $"+itoa(len(args)), args, func(row pgx.Row) error {
			r, err := x.scan(s, row)
			out = append(out, r)
			return err
		})
		return out, err
	})
}

// IdentityOwners implements engram.IdentityExporter.
func (t *identityTx) IdentityOwners(ctx context.Context, fn func(engram.Namespace) error) error {
	var q []string
	for _, table := range strings.Fields(identityTables) {
		q = append(q, "SELECT tenant, user_id FROM "+table)
	}
	var owners []engram.Namespace
	err := t.each(ctx, "identity owners", strings.Join(q, " UNION ")+" ORDER BY 1, 2", nil, func(row pgx.Row) error {
		var tenant, user string
		if err := row.Scan(&tenant, &user); err != nil {
			return err
		}
		org, project, _ := strings.Cut(tenant, "/")
		owners = append(owners, engram.Namespace{Org: org, Project: project, User: user})
		return nil
	})
	if err != nil {
		return err
	}
	return storeutil.CallEach(owners, fn)
}
