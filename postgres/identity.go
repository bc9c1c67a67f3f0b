package postgres

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/storeutil"
)

// identityTx is the identity capability of a transaction: modalities,
// identities, observations, persons and their events
// (engram.IdentityReader, IdentityWriter and IdentityExporter).
type identityTx struct{ *base }

// identityOwner returns the (tenant, user) args every identity read
// starts with; ok is false for a scope no row can match.
func identityOwner(s engram.Scope) ([]any, bool) {
	return []any{s.Tenant(), s.User}, storable("scope", s.Tenant()+s.User) == nil
}

// Modalities returns the modalities declared in s's tenant and user.
func (t *identityTx) Modalities(ctx context.Context, s engram.Scope) ([]engram.EmbeddingModality, error) {
	args, ok := identityOwner(s)
	if !ok {
		return nil, nil
	}
	rows, err := t.ptx.Query(ctx, "SELECT name, dim, created_at FROM identity_modalities WHERE tenant = $1 AND user_id = $2 ORDER BY name", args...)
	if err != nil {
		return nil, t.mapErr(ctx, "list modalities", err)
	}
	var out []engram.EmbeddingModality
	var m engram.EmbeddingModality
	_, err = pgx.ForEachRow(rows, []any{&m.Name, &m.Dim, &m.CreatedAt}, func() error {
		m.Namespace = engram.Namespace{Org: s.Org, Project: s.Project, User: s.User}
		m.CreatedAt = m.CreatedAt.UTC()
		out = append(out, m)
		return nil
	})
	return out, t.mapErr(ctx, "list modalities", err)
}

const identityCols = "id, modality, label, centroid, count, person_id, created_at, updated_at"

func scanIdentity(s engram.Scope, sc interface{ Scan(...any) error }) (engram.Identity, error) {
	var i engram.Identity
	var blob []byte
	if err := sc.Scan(&i.ID, &i.Modality, &i.Label, &blob, &i.Count, &i.PersonID, &i.CreatedAt, &i.UpdatedAt); err != nil {
		return i, err
	}
	i.Namespace = engram.Namespace{Org: s.Org, Project: s.Project, User: s.User}
	i.CreatedAt, i.UpdatedAt = i.CreatedAt.UTC(), i.UpdatedAt.UTC()
	var err error
	i.Centroid, err = storeutil.DecodeVec(blob, len(blob)/4)
	return i, err
}

// ListIdentities returns s's identities matching f, oldest first.
func (t *identityTx) ListIdentities(ctx context.Context, s engram.Scope, f engram.IdentityFilter) ([]engram.Identity, error) {
	args, ok := identityOwner(s)
	if !ok {
		return nil, nil
	}
	q := "SELECT " + identityCols + " FROM identities WHERE tenant = $1 AND user_id = $2"
	if f.Modality != "" {
		args = append(args, f.Modality)
		q += " AND modality = $3"
	}
	if f.PersonID != "" {
		args = append(args, f.PersonID)
		q += " AND person_id = $" + itoa(len(args))
	}
	args = append(args, engram.MaxLimit)
	rows, err := t.ptx.Query(ctx, q+" ORDER BY id LIMIT $"+itoa(len(args)), args...)
	if err != nil {
		return nil, t.mapErr(ctx, "list identities", err)
	}
	defer rows.Close()
	var out []engram.Identity
	for rows.Next() {
		i, err := scanIdentity(s, rows)
		if err != nil {
			return nil, t.mapErr(ctx, "list identities", err)
		}
		out = append(out, i)
	}
	return out, t.mapErr(ctx, "list identities", rows.Err())
}

// GetIdentity returns an identity of s or ENOTFOUND.
func (t *identityTx) GetIdentity(ctx context.Context, s engram.Scope, id string) (*engram.Identity, error) {
	args, ok := identityOwner(s)
	none := engram.Errorf(engram.ENOTFOUND, "identity %s not found", id)
	if !ok {
		return nil, none
	}
	i, err := scanIdentity(s, t.ptx.QueryRow(ctx, "SELECT "+identityCols+" FROM identities WHERE tenant = $1 AND user_id = $2 AND id = $3", append(args, id)...))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, none
	} else if err != nil {
		return nil, t.mapErr(ctx, "get identity", err)
	}
	return &i, nil
}

// ListObservations returns the observations f selects, newest first.
func (t *identityTx) ListObservations(ctx context.Context, s engram.Scope, f engram.ObservationFilter) ([]engram.Observation, error) {
	args, ok := identityOwner(s)
	if !ok {
		return nil, nil
	}
	limit := f.Limit // made 1 to MaxIdentityMembers in front of the store
	q := "SELECT id, identity_id, modality, embedding, episode_id, span_start, span_end, at FROM identity_observations WHERE tenant = $1 AND user_id = $2"
	if len(f.IdentityIDs) > 0 {
		args = append(args, f.IdentityIDs)
		q += " AND identity_id = ANY($" + itoa(len(args)) + ")"
	}
	if len(f.IDs) > 0 {
		args = append(args, f.IDs)
		q += " AND id = ANY($" + itoa(len(args)) + ")"
	}
	args = append(args, limit)
	rows, err := t.ptx.Query(ctx, q+" ORDER BY at DESC, id DESC LIMIT $"+itoa(len(args)), args...)
	if err != nil {
		return nil, t.mapErr(ctx, "list observations", err)
	}
	var out []engram.Observation
	var (
		o          engram.Observation
		blob       []byte
		start, end *int64
	)
	_, err = pgx.ForEachRow(rows, []any{&o.ID, &o.IdentityID, &o.Modality, &blob, &o.EpisodeID, &start, &end, &o.At}, func() error {
		x := o
		x.Namespace = engram.Namespace{Org: s.Org, Project: s.Project, User: s.User}
		x.At = x.At.UTC()
		if start != nil && end != nil {
			x.Span = &engram.MediaSpan{StartMS: *start, EndMS: *end}
		}
		var err error
		x.Embedding, err = storeutil.DecodeVec(blob, len(blob)/4)
		out = append(out, x)
		return err
	})
	return out, t.mapErr(ctx, "list observations", err)
}

const personCols = "id, name, aliases, entity_id, source, episode_id, created_at, updated_at"

func scanPerson(s engram.Scope, sc interface{ Scan(...any) error }) (engram.Person, error) {
	var p engram.Person
	err := sc.Scan(&p.ID, &p.Name, &p.Aliases, &p.EntityID, &p.Source, &p.EpisodeID, &p.CreatedAt, &p.UpdatedAt)
	p.Namespace = engram.Namespace{Org: s.Org, Project: s.Project, User: s.User}
	p.CreatedAt, p.UpdatedAt = p.CreatedAt.UTC(), p.UpdatedAt.UTC()
	return p, err
}

// ListPersons returns s's persons, oldest first.
func (t *identityTx) ListPersons(ctx context.Context, s engram.Scope) ([]engram.Person, error) {
	args, ok := identityOwner(s)
	if !ok {
		return nil, nil
	}
	rows, err := t.ptx.Query(ctx, "SELECT "+personCols+" FROM persons WHERE tenant = $1 AND user_id = $2 ORDER BY id LIMIT $3", append(args, engram.MaxLimit)...)
	if err != nil {
		return nil, t.mapErr(ctx, "list persons", err)
	}
	defer rows.Close()
	var out []engram.Person
	for rows.Next() {
		p, err := scanPerson(s, rows)
		if err != nil {
			return nil, t.mapErr(ctx, "list persons", err)
		}
		out = append(out, p)
	}
	return out, t.mapErr(ctx, "list persons", rows.Err())
}

// GetPerson returns a person of s or ENOTFOUND.
func (t *identityTx) GetPerson(ctx context.Context, s engram.Scope, id string) (*engram.Person, error) {
	args, ok := identityOwner(s)
	none := engram.Errorf(engram.ENOTFOUND, "person %s not found", id)
	if !ok {
		return nil, none
	}
	p, err := scanPerson(s, t.ptx.QueryRow(ctx, "SELECT "+personCols+" FROM persons WHERE tenant = $1 AND user_id = $2 AND id = $3", append(args, id)...))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, none
	} else if err != nil {
		return nil, t.mapErr(ctx, "get person", err)
	}
	return &p, nil
}

// IdentityHistory returns the events of s naming id, oldest first.
func (t *identityTx) IdentityHistory(ctx context.Context, s engram.Scope, id string) ([]engram.IdentityEvent, error) {
	args, ok := identityOwner(s)
	if !ok {
		return nil, nil
	}
	rows, err := t.ptx.Query(ctx, `SELECT id, op, identities, observations, person_id, source, episode_id, actor, at
		FROM identity_events WHERE tenant = $1 AND user_id = $2 AND $3 = ANY(subjects) ORDER BY at, id`, append(args, id)...)
	if err != nil {
		return nil, t.mapErr(ctx, "identity history", err)
	}
	var out []engram.IdentityEvent
	var ev engram.IdentityEvent
	_, err = pgx.ForEachRow(rows, []any{&ev.ID, &ev.Op, &ev.Identities, &ev.Observations, &ev.PersonID, &ev.Source, &ev.EpisodeID, &ev.Actor, &ev.At}, func() error {
		x := ev
		x.Namespace = engram.Namespace{Org: s.Org, Project: s.Project, User: s.User}
		x.At = x.At.UTC()
		out = append(out, x)
		return nil
	})
	return out, t.mapErr(ctx, "identity history", err)
}

// PutModality declares a modality; ECONFLICT if it is declared.
func (t *identityTx) PutModality(ctx context.Context, m *engram.EmbeddingModality) error {
	if err := t.writable(); err != nil {
		return err
	}
	n := m.Namespace
	tag, err := t.ptx.Exec(ctx, "INSERT INTO identity_modalities (tenant, user_id, name, dim, created_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
		n.Tenant(), n.User, m.Name, m.Dim, m.CreatedAt)
	if err != nil {
		return t.mapErr(ctx, "put modality", err)
	}
	if tag.RowsAffected() == 0 {
		return engram.Errorf(engram.ECONFLICT, "modality %s is already declared", m.Name)
	}
	return nil
}

// PutIdentity stores or replaces an identity; ECONFLICT when its id
// belongs to another user.
func (t *identityTx) PutIdentity(ctx context.Context, i *engram.Identity) error {
	if err := t.writable(); err != nil {
		return err
	}
	if err := storable("identity: label", i.Label); err != nil {
		return err
	}
	n := i.Namespace
	tag, err := t.ptx.Exec(ctx, `INSERT INTO identities (tenant, user_id, `+identityCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
		ON CONFLICT (tenant, id) DO UPDATE SET modality = excluded.modality, label = excluded.label, centroid = excluded.centroid,
		count = excluded.count, person_id = excluded.person_id, updated_at = excluded.updated_at WHERE identities.user_id = excluded.user_id`,
		n.Tenant(), n.User, i.ID, i.Modality, i.Label, storeutil.EncodeVec(i.Centroid), i.Count, i.PersonID, i.CreatedAt, i.UpdatedAt)
	if err != nil {
		return t.mapErr(ctx, "put identity", err)
	}
	if tag.RowsAffected() == 0 {
		return engram.Errorf(engram.ECONFLICT, "identity %s belongs to another user", i.ID)
	}
	return nil
}

// DeleteIdentity removes an identity with its observations.
func (t *identityTx) DeleteIdentity(ctx context.Context, n engram.Namespace, id string) error {
	if err := t.writable(); err != nil {
		return err
	}
	if _, err := t.ptx.Exec(ctx, "DELETE FROM identity_observations WHERE tenant = $1 AND user_id = $2 AND identity_id = $3", n.Tenant(), n.User, id); err != nil {
		return t.mapErr(ctx, "delete identity", err)
	}
	_, err := t.ptx.Exec(ctx, "DELETE FROM identities WHERE tenant = $1 AND user_id = $2 AND id = $3", n.Tenant(), n.User, id)
	return t.mapErr(ctx, "delete identity", err)
}

// InsertObservation stores an observation; ECONFLICT if its user has one
// with its id in the tenant (another user's is no conflict).
func (t *identityTx) InsertObservation(ctx context.Context, o *engram.Observation) error {
	if err := t.writable(); err != nil {
		return err
	}
	n := o.Namespace
	var start, end *int64
	if o.Span != nil {
		start, end = &o.Span.StartMS, &o.Span.EndMS
	}
	tag, err := t.ptx.Exec(ctx, `INSERT INTO identity_observations (tenant, user_id, id, identity_id, modality, embedding, episode_id, span_start, span_end, at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT DO NOTHING`,
		n.Tenant(), n.User, o.ID, o.IdentityID, o.Modality, storeutil.EncodeVec(o.Embedding), o.EpisodeID, start, end, o.At)
	if err != nil {
		return t.mapErr(ctx, "insert observation", err)
	}
	if tag.RowsAffected() == 0 {
		return engram.Errorf(engram.ECONFLICT, "observation %s already exists", o.ID)
	}
	return nil
}

// MoveObservations gives the listed observations of n another identity.
func (t *identityTx) MoveObservations(ctx context.Context, n engram.Namespace, ids []string, identityID string) error {
	if err := t.writable(); err != nil {
		return err
	}
	_, err := t.ptx.Exec(ctx, "UPDATE identity_observations SET identity_id = $1 WHERE tenant = $2 AND user_id = $3 AND id = ANY($4)",
		identityID, n.Tenant(), n.User, ids)
	return t.mapErr(ctx, "move observations", err)
}

// PutPerson stores or replaces a person; ECONFLICT when its id belongs to
// another user.
func (t *identityTx) PutPerson(ctx context.Context, p *engram.Person) error {
	if err := t.writable(); err != nil {
		return err
	}
	if err := storable("person: name", p.Name+strings.Join(p.Aliases, "")); err != nil {
		return err
	}
	n := p.Namespace
	tag, err := t.ptx.Exec(ctx, `INSERT INTO persons (tenant, user_id, `+personCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
		ON CONFLICT (tenant, id) DO UPDATE SET name = excluded.name, aliases = excluded.aliases, entity_id = excluded.entity_id,
		source = excluded.source, episode_id = excluded.episode_id, updated_at = excluded.updated_at WHERE persons.user_id = excluded.user_id`,
		n.Tenant(), n.User, p.ID, p.Name, nilIfEmpty(p.Aliases), p.EntityID, p.Source, p.EpisodeID, p.CreatedAt, p.UpdatedAt)
	if err != nil {
		return t.mapErr(ctx, "put person", err)
	}
	if tag.RowsAffected() == 0 {
		return engram.Errorf(engram.ECONFLICT, "person %s belongs to another user", p.ID)
	}
	return nil
}

// DeletePerson removes a person.
func (t *identityTx) DeletePerson(ctx context.Context, n engram.Namespace, id string) error {
	if err := t.writable(); err != nil {
		return err
	}
	_, err := t.ptx.Exec(ctx, "DELETE FROM persons WHERE tenant = $1 AND user_id = $2 AND id = $3", n.Tenant(), n.User, id)
	return t.mapErr(ctx, "delete person", err)
}

// InsertIdentityEvent appends an event to the history.
func (t *identityTx) InsertIdentityEvent(ctx context.Context, ev *engram.IdentityEvent) error {
	if err := t.writable(); err != nil {
		return err
	}
	n := ev.Namespace
	tag, err := t.ptx.Exec(ctx, `INSERT INTO identity_events (tenant, user_id, id, op, identities, observations, person_id, source, episode_id, actor, subjects, at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) ON CONFLICT DO NOTHING`,
		n.Tenant(), n.User, ev.ID, ev.Op, nilIfEmpty(ev.Identities), nilIfEmpty(ev.Observations), ev.PersonID, ev.Source, ev.EpisodeID, ev.Actor, ev.Subjects(), ev.At)
	if err != nil {
		return t.mapErr(ctx, "insert identity event", err)
	}
	if tag.RowsAffected() == 0 {
		return engram.Errorf(engram.ECONFLICT, "identity event %s already exists", ev.ID)
	}
	return nil
}

const identityTables = "identity_observations identities persons identity_events identity_modalities"

func itoa(n int) string { return strconv.Itoa(n) }
