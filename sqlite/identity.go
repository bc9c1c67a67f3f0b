package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/storeutil"
)

// identityOwner returns the (org, project, user) args every identity read
// starts with.
func identityOwner(s engram.Scope) []any {
	return []any{s.Org, s.Project, s.User}
}

const ownerWhere = "org = ? AND project = ? AND user_id = ?"

// Modalities returns the modalities declared in s's tenant and user.
func (t *identityTx) Modalities(ctx context.Context, s engram.Scope) ([]engram.EmbeddingModality, error) {
	args := identityOwner(s)
	var out []engram.EmbeddingModality
	err := t.each(ctx, "list modalities", "SELECT org, project, user_id, name, dim, created_at FROM identity_modalities WHERE "+ownerWhere+" ORDER BY name", args,
		func(sc scanner) error {
			var m engram.EmbeddingModality
			var at int64
			if err := sc.Scan(&m.Namespace.Org, &m.Namespace.Project, &m.Namespace.User, &m.Name, &m.Dim, &at); err != nil {
				return err
			}
			m.CreatedAt = fromMicros(at)
			out = append(out, m)
			return nil
		})
	return out, err
}

const identityCols = "org, project, user_id, id, modality, label, centroid, count, person_id, created_at, updated_at"

func scanIdentity(sc scanner) (engram.Identity, error) {
	var i engram.Identity
	var blob []byte
	var c, u int64
	if err := sc.Scan(&i.Namespace.Org, &i.Namespace.Project, &i.Namespace.User, &i.ID, &i.Modality, &i.Label, &blob, &i.Count, &i.PersonID, &c, &u); err != nil {
		return i, err
	}
	var err error
	i.Centroid, err = storeutil.DecodeVec(blob, len(blob)/4)
	i.CreatedAt, i.UpdatedAt = fromMicros(c), fromMicros(u)
	return i, err
}

// ListIdentities returns s's identities matching f, oldest first.
func (t *identityTx) ListIdentities(ctx context.Context, s engram.Scope, f engram.IdentityFilter) ([]engram.Identity, error) {
	args := identityOwner(s)
	q := "SELECT " + identityCols + " FROM identities WHERE " + ownerWhere
	if f.Modality != "" {
		q += " AND modality = ?"
		args = append(args, f.Modality)
	}
	if f.PersonID != "" {
		q += " AND person_id = ?"
		args = append(args, f.PersonID)
	}
	var out []engram.Identity
	err := t.each(ctx, "list identities", q+" ORDER BY id LIMIT ?", append(args, engram.MaxLimit), func(sc scanner) error {
		i, err := scanIdentity(sc)
		out = append(out, i)
		return err
	})
	return out, err
}

// GetIdentity returns an identity of s or ENOTFOUND.
func (t *identityTx) GetIdentity(ctx context.Context, s engram.Scope, id string) (*engram.Identity, error) {
	args := identityOwner(s)
	i, err := scanIdentity(t.queryRow(ctx, "SELECT "+identityCols+" FROM identities WHERE "+ownerWhere+" AND id = ?", append(args, id)...))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, engram.Errorf(engram.ENOTFOUND, "identity %s not found", id)
	} else if err != nil {
		return nil, mapErr(ctx, "get identity", err)
	}
	return &i, nil
}

// ListObservations returns the observations f selects, newest first.
func (t *identityTx) ListObservations(ctx context.Context, s engram.Scope, f engram.ObservationFilter) ([]engram.Observation, error) {
	args := identityOwner(s)
	limit := f.Limit // made 1 to MaxIdentityMembers in front of the store
	q := "SELECT " + observationCols + " FROM identity_observations WHERE " + ownerWhere
	if len(f.IdentityIDs) > 0 {
		q += " AND identity_id IN (SELECT value FROM json_each(?))"
		j, _ := json.Marshal(f.IdentityIDs)
		args = append(args, string(j))
	}
	if len(f.IDs) > 0 {
		q += " AND id IN (SELECT value FROM json_each(?))"
		j, _ := json.Marshal(f.IDs)
		args = append(args, string(j))
	}
	var out []engram.Observation
	err := t.each(ctx, "list observations", q+" ORDER BY at DESC, id DESC LIMIT ?", append(args, limit), func(sc scanner) error {
		o, err := scanObservation(sc)
		out = append(out, o)
		return err
	})
	return out, err
}

const observationCols = "org, project, user_id, id, identity_id, modality, embedding, episode_id, span_start, span_end, at"

func scanObservation(sc scanner) (engram.Observation, error) {
	var o engram.Observation
	var blob []byte
	var start, end sql.NullInt64
	var at int64
	if err := sc.Scan(&o.Namespace.Org, &o.Namespace.Project, &o.Namespace.User, &o.ID, &o.IdentityID, &o.Modality, &blob, &o.EpisodeID, &start, &end, &at); err != nil {
		return o, err
	}
	if start.Valid {
		o.Span = &engram.MediaSpan{StartMS: start.Int64, EndMS: end.Int64}
	}
	o.At = fromMicros(at)
	var err error
	o.Embedding, err = storeutil.DecodeVec(blob, len(blob)/4)
	return o, err
}

const personCols = "org, project, user_id, id, name, aliases, entity_id, source, episode_id, created_at, updated_at"

func scanPerson(sc scanner) (engram.Person, error) {
	var p engram.Person
	var aliases sql.NullString
	var c, u int64
	if err := sc.Scan(&p.Namespace.Org, &p.Namespace.Project, &p.Namespace.User, &p.ID, &p.Name, &aliases, &p.EntityID, &p.Source, &p.EpisodeID, &c, &u); err != nil {
		return p, err
	}
	p.CreatedAt, p.UpdatedAt = fromMicros(c), fromMicros(u)
	if aliases.Valid && aliases.String != "" {
		if err := json.Unmarshal([]byte(aliases.String), &p.Aliases); err != nil {
			return p, err
		}
	}
	return p, nil
}

// ListPersons returns s's persons, oldest first.
func (t *identityTx) ListPersons(ctx context.Context, s engram.Scope) ([]engram.Person, error) {
	args := identityOwner(s)
	var out []engram.Person
	err := t.each(ctx, "list persons", "SELECT "+personCols+" FROM persons WHERE "+ownerWhere+" ORDER BY id LIMIT ?", append(args, engram.MaxLimit), func(sc scanner) error {
		p, err := scanPerson(sc)
		out = append(out, p)
		return err
	})
	return out, err
}

// GetPerson returns a person of s or ENOTFOUND.
func (t *identityTx) GetPerson(ctx context.Context, s engram.Scope, id string) (*engram.Person, error) {
	args := identityOwner(s)
	p, err := scanPerson(t.queryRow(ctx, "SELECT "+personCols+" FROM persons WHERE "+ownerWhere+" AND id = ?", append(args, id)...))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, engram.Errorf(engram.ENOTFOUND, "person %s not found", id)
	} else if err != nil {
		return nil, mapErr(ctx, "get person", err)
	}
	return &p, nil
}

// IdentityHistory returns the events of s naming id, oldest first.
func (t *identityTx) IdentityHistory(ctx context.Context, s engram.Scope, id string) ([]engram.IdentityEvent, error) {
	args := identityOwner(s)
	var out []engram.IdentityEvent
	err := t.each(ctx, "identity history", "SELECT "+eventCols+`
		FROM identity_events WHERE `+ownerWhere+` AND EXISTS (SELECT 1 FROM json_each(subjects) WHERE value = ?) ORDER BY at, id`,
		append(args, id), func(sc scanner) error {
			ev, err := scanEvent(sc)
			out = append(out, ev)
			return err
		})
	return out, err
}

const eventCols = "org, project, user_id, id, op, identities, observations, person_id, source, episode_id, actor, at"

func scanEvent(sc scanner) (engram.IdentityEvent, error) {
	var ev engram.IdentityEvent
	var ids, obs sql.NullString
	var at int64
	if err := sc.Scan(&ev.Namespace.Org, &ev.Namespace.Project, &ev.Namespace.User, &ev.ID, &ev.Op, &ids, &obs, &ev.PersonID, &ev.Source, &ev.EpisodeID, &ev.Actor, &at); err != nil {
		return ev, err
	}
	ev.At = fromMicros(at)
	if ids.Valid {
		if err := json.Unmarshal([]byte(ids.String), &ev.Identities); err != nil {
			return ev, err
		}
	}
	if obs.Valid {
		if err := json.Unmarshal([]byte(obs.String), &ev.Observations); err != nil {
			return ev, err
		}
	}
	return ev, nil
}

// PutModality declares a modality; ECONFLICT if it is declared.
func (t *identityTx) PutModality(ctx context.Context, m *engram.EmbeddingModality) error {
	if err := t.writable(); err != nil {
		return err
	}
	n := m.Namespace
	_, err := t.exec(ctx, "INSERT INTO identity_modalities (org, project, user_id, name, dim, created_at) VALUES (?, ?, ?, ?, ?, ?)",
		n.Org, n.Project, n.User, m.Name, m.Dim, micros(m.CreatedAt))
	if isConstraint(err) {
		return engram.Errorf(engram.ECONFLICT, "modality %s is already declared", m.Name)
	}
	return mapErr(ctx, "put modality", err)
}

// ownedByOther reports whether the row of table with n's tenant and id
// belongs to another user.
func (t *identityTx) ownedByOther(ctx context.Context, table string, n engram.Namespace, id string) (bool, error) {
	var user string
	err := t.queryRow(ctx, "SELECT user_id FROM "+table+" WHERE org = ? AND project = ? AND id = ?", n.Org, n.Project, id).Scan(&user)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	} else if err != nil {
		return false, mapErr(ctx, "read owner", err)
	}
	return user != n.User, nil
}

// PutIdentity stores or replaces an identity.
func (t *identityTx) PutIdentity(ctx context.Context, i *engram.Identity) error {
	if err := t.writable(); err != nil {
		return err
	}
	n := i.Namespace
	if other, err := t.ownedByOther(ctx, "identities", n, i.ID); err != nil {
		return err
	} else if other {
		return engram.Errorf(engram.ECONFLICT, "identity %s belongs to another user", i.ID)
	}
	_, err := t.exec(ctx, "INSERT OR REPLACE INTO identities ("+identityCols+") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
		n.Org, n.Project, n.User, i.ID, i.Modality, i.Label, storeutil.EncodeVec(i.Centroid), i.Count, i.PersonID, micros(i.CreatedAt), micros(i.UpdatedAt))
	return mapErr(ctx, "put identity", err)
}

// DeleteIdentity removes an identity with its observations.
func (t *identityTx) DeleteIdentity(ctx context.Context, n engram.Namespace, id string) error {
	if err := t.writable(); err != nil {
		return err
	}
	if _, err := t.exec(ctx, "DELETE FROM identity_observations WHERE "+ownerWhere+" AND identity_id = ?", n.Org, n.Project, n.User, id); err != nil {
		return mapErr(ctx, "delete identity", err)
	}
	_, err := t.exec(ctx, "DELETE FROM identities WHERE "+ownerWhere+" AND id = ?", n.Org, n.Project, n.User, id)
	return mapErr(ctx, "delete identity", err)
}

// InsertObservation stores an observation; ECONFLICT if its user has one
// with its id in the tenant (another user's is no conflict).
func (t *identityTx) InsertObservation(ctx context.Context, o *engram.Observation) error {
	if err := t.writable(); err != nil {
		return err
	}
	n := o.Namespace
	var start, end any
	if o.Span != nil {
		start, end = o.Span.StartMS, o.Span.EndMS
	}
	_, err := t.exec(ctx, `INSERT INTO identity_observations (org, project, user_id, id, identity_id, modality, embedding, episode_id, span_start, span_end, at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		n.Org, n.Project, n.User, o.ID, o.IdentityID, o.Modality, storeutil.EncodeVec(o.Embedding), o.EpisodeID, start, end, micros(o.At))
	if isConstraint(err) {
		return engram.Errorf(engram.ECONFLICT, "observation %s already exists", o.ID)
	}
	return mapErr(ctx, "insert observation", err)
}

// MoveObservations gives the listed observations of n another identity.
func (t *identityTx) MoveObservations(ctx context.Context, n engram.Namespace, ids []string, identityID string) error {
	if err := t.writable(); err != nil {
		return err
	}
	j, err := json.Marshal(ids)
	if err != nil {
		return err
	}
	_, err = t.exec(ctx, "UPDATE identity_observations SET identity_id = ? WHERE "+ownerWhere+" AND id IN (SELECT value FROM json_each(?))",
		identityID, n.Org, n.Project, n.User, string(j))
	return mapErr(ctx, "move observations", err)
}

// PutPerson stores or replaces a person.
func (t *identityTx) PutPerson(ctx context.Context, p *engram.Person) error {
	if err := t.writable(); err != nil {
		return err
	}
	n := p.Namespace
	if other, err := t.ownedByOther(ctx, "persons", n, p.ID); err != nil {
		return err
	} else if other {
		return engram.Errorf(engram.ECONFLICT, "person %s belongs to another user", p.ID)
	}
	aliases, err := stringsJSON(p.Aliases)
	if err != nil {
		return err
	}
	_, err = t.exec(ctx, "INSERT OR REPLACE INTO persons ("+personCols+") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
		n.Org, n.Project, n.User, p.ID, p.Name, aliases, p.EntityID, p.Source, p.EpisodeID, micros(p.CreatedAt), micros(p.UpdatedAt))
	return mapErr(ctx, "put person", err)
}

// DeletePerson removes a person.
func (t *identityTx) DeletePerson(ctx context.Context, n engram.Namespace, id string) error {
	if err := t.writable(); err != nil {
		return err
	}
	_, err := t.exec(ctx, "DELETE FROM persons WHERE "+ownerWhere+" AND id = ?", n.Org, n.Project, n.User, id)
	return mapErr(ctx, "delete person", err)
}

// InsertIdentityEvent appends an event to the history.
func (t *identityTx) InsertIdentityEvent(ctx context.Context, ev *engram.IdentityEvent) error {
	if err := t.writable(); err != nil {
		return err
	}
	n := ev.Namespace
	ids, err := stringsJSON(ev.Identities)
	if err != nil {
		return err
	}
	obs, err := stringsJSON(ev.Observations)
	if err != nil {
		return err
	}
	subj, err := json.Marshal(ev.Subjects())
	if err != nil {
		return err
	}
	_, err = t.exec(ctx, `INSERT INTO identity_events (org, project, user_id, id, op, identities, observations, person_id, source, episode_id, actor, subjects, at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		n.Org, n.Project, n.User, ev.ID, ev.Op, ids, obs, ev.PersonID, ev.Source, ev.EpisodeID, ev.Actor, string(subj), micros(ev.At))
	if isConstraint(err) {
		return engram.Errorf(engram.ECONFLICT, "identity event %s already exists", ev.ID)
	}
	return mapErr(ctx, "insert identity event", err)
}

// purgeIdentities removes every identity record of s's user when s names
// the whole user (no agent or session): identities belong to a user.
func (t *base) purgeIdentities(ctx context.Context, s engram.Scope) error {
	if s.User == "" || !s.AllAgents() || s.Session != "" {
		return nil
	}
	for _, table := range identityTables {
		if _, err := t.exec(ctx, "DELETE FROM "+table+" WHERE "+ownerWhere, s.Org, s.Project, s.User); err != nil {
			return mapErr(ctx, "purge identities", err)
		}
	}
	return nil
}

var identityTables = strings.Fields("identity_observations identities persons identity_events identity_modalities")
