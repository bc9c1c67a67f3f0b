package sqlite_test

import (
	"database/sql"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/storeutil"
	"github.com/engramhq/engram/sqlite"
	"github.com/engramhq/engram/storetest"
)

// idKeyMigration is the first migration that keys ids per user instead of
// per tenant: 19 for episodes, 20 for audit entries and observations.
const idKeyMigration = 19

// oldRecords is what TestMigrationIDsPerUser writes in the old schema.
type oldRecords struct {
	episodes     []engram.Episode
	audit        []engram.AuditEntry
	observations []engram.Observation
}

// TestMigrationIDsPerUser builds a database with the migrations before
// idKeyMigration, whose episode, audit and observation ids were unique per
// tenant, fills it behind the store's back, and opens it: every record is
// kept, field for field, and another user may then hold the same ids while
// the same user may not.
func TestMigrationIDsPerUser(t *testing.T) {
	path := filepath.Join(t.TempDir(), "engram.db")
	raw, err := sql.Open("sqlite", (&url.URL{Scheme: "file", Path: path}).String())
	if err != nil {
		t.Fatal(err)
	}
	applyOldMigrations(t, raw, idKeyMigration)
	old := oldData()
	insertOld(t, raw, old)
	raw.Close()

	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatalf("open the old database: %v", err)
	}
	defer db.Close()
	if err := db.IntegrityCheck(ctx); err != nil {
		t.Fatalf("integrity after the migration: %v", err)
	}
	checkOldKept(t, db, old)

	theirs := old.episodes[0]
	theirs.Namespace = engram.Namespace{Org: "acme", Project: "app", User: "u2"}
	theirAudit := old.audit[0]
	theirAudit.Namespace = theirs.Namespace
	storetest.Put(t, db, &theirs, &theirAudit)
	twin := old.episodes[0]
	twin.Namespace.Session = "s2"
	err = db.Update(ctx, func(tx engram.Tx) error { return tx.InsertEpisode(ctx, &twin) })
	if engram.ErrorCode(err) != engram.ECONFLICT {
		t.Errorf("the same user's episode id again: %v, want ECONFLICT", err)
	}
	raw = rawDB(t, db)
	if n := count(t, raw, `SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name IN
		('episodes_by_user', 'episodes_by_session', 'audit_by_user', 'identity_observations_by_identity', 'identity_observations_by_user')`); n != 5 {
		t.Errorf("%d of the five indexes of the rebuilt tables after the migration", n)
	}
}

func oldData() oldRecords {
	at := time.Date(2025, 3, 1, 9, 30, 0, 123456000, time.UTC)
	u1 := engram.Namespace{Org: "acme", Project: "app", User: "u1", Agent: "a", Session: "s1"}
	globex := engram.Namespace{Org: "globex", Project: "app", User: "u1"}
	var old oldRecords
	old.episodes = []engram.Episode{
		{ID: engram.NewID(), Namespace: u1, Role: "user", Speaker: "Ana", Content: "Vivo en Sevilla.", Modality: engram.ModalityText,
			OccurredAt: at, ReceivedAt: at.Add(time.Second), Metadata: map[string]any{"canal": "móvil"}},
		{ID: engram.NewID(), Namespace: engram.Namespace{Org: "acme", Project: "app"},
			Role: "assistant", Content: "项目的记录", Modality: engram.ModalityText, OccurredAt: at, ReceivedAt: at},
	}
	// The first id again in another tenant, which the old key allowed.
	other := old.episodes[0]
	other.Namespace, other.Content, other.Metadata = globex, "Ich wohne in Köln.", nil
	old.episodes = append(old.episodes, other)
	old.audit = []engram.AuditEntry{
		{ID: engram.NewID(), Namespace: u1, Actor: "ana", Op: "episode.add", IDs: []string{old.episodes[0].ID}, Detail: "añadido", At: at},
		{ID: old.episodes[0].ID, Namespace: globex, Actor: "jo", Op: "memory.update", At: at},
	}
	owner := engram.Namespace{Org: "acme", Project: "app", User: "u1"}
	old.observations = []engram.Observation{
		{ID: engram.NewID(), Namespace: owner, Modality: "face", Embedding: []float32{1, 0, 0.25}, IdentityID: engram.NewID(),
			EpisodeID: old.episodes[0].ID, Span: &engram.MediaSpan{StartMS: 10, EndMS: 900}, At: at},
	}
	return old
}

// applyOldMigrations applies to raw, as the store would, the migrations
// before version before.
func applyOldMigrations(t *testing.T, raw *sql.DB, before int) {
	t.Helper()
	if _, err := raw.Exec(`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("migrations/*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("migrations: %v (%d found)", err, len(files))
	}
	slices.Sort(files)
	for _, f := range files {
		name := filepath.Base(f)
		v, err := strconv.Atoi(name[:4])
		if err != nil {
			t.Fatalf("migration %s: %v", name, err)
		}
		if v >= before {
			break
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := raw.Exec(string(b)); err != nil {
			t.Fatalf("migration %s: %v", name, err)
		}
		if _, err := raw.Exec("INSERT INTO schema_migrations VALUES (?, ?, 0)", v, strings.TrimSuffix(name, ".sql")); err != nil {
			t.Fatal(err)
		}
	}
}

// insertOld writes old as the store encodes it: times in unix
// microseconds, JSON text, embeddings as little-endian float32s.
func insertOld(t *testing.T, raw *sql.DB, old oldRecords) {
	t.Helper()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := raw.Exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, e := range old.episodes {
		var md any
		if e.Metadata != nil {
			md = asJSON(t, e.Metadata)
		}
		n := e.Namespace
		exec(`INSERT INTO episodes (org, project, user_id, agent, session, id, role, speaker, content, modality,
			occurred_at, received_at, metadata) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			n.Org, n.Project, n.User, n.Agent, n.Session, e.ID, e.Role, e.Speaker, e.Content, string(e.Modality),
			e.OccurredAt.UnixMicro(), e.ReceivedAt.UnixMicro(), md)
	}
	for _, a := range old.audit {
		var ids any
		if a.IDs != nil {
			ids = asJSON(t, a.IDs)
		}
		n := a.Namespace
		exec(`INSERT INTO audit (org, project, user_id, agent, session, id, actor, op, ids, detail, at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			n.Org, n.Project, n.User, n.Agent, n.Session, a.ID, a.Actor, a.Op, ids, a.Detail, a.At.UnixMicro())
	}
	for _, o := range old.observations {
		n := o.Namespace
		exec(`INSERT INTO identity_observations (org, project, user_id, id, identity_id, modality, embedding, episode_id,
			span_start, span_end, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			n.Org, n.Project, n.User, o.ID, o.IdentityID, o.Modality, storeutil.EncodeVec(o.Embedding), o.EpisodeID,
			o.Span.StartMS, o.Span.EndMS, o.At.UnixMicro())
	}
}

// checkOldKept reads every record of old back through the store.
func checkOldKept(t *testing.T, db *sqlite.DB, old oldRecords) {
	t.Helper()
	err := db.View(ctx, func(r engram.Reader) error {
		for _, want := range old.episodes {
			got, err := r.GetEpisode(ctx, engram.ScopeOf(want.Namespace), want.ID)
			if a, b := asJSON(t, got), asJSON(t, want); err != nil || a != b {
				t.Errorf("episode after the migration = %s, %v; want %s", a, err, b)
			}
		}
		for _, want := range old.audit {
			got, _, err := r.Audit(ctx, engram.ScopeOf(want.Namespace), engram.AuditFilter{})
			if a, b := asJSON(t, got), asJSON(t, []engram.AuditEntry{want}); err != nil || a != b {
				t.Errorf("audit after the migration = %s, %v; want %s", a, err, b)
			}
		}
		for _, want := range old.observations {
			got, err := r.ListObservations(ctx, engram.ScopeOf(want.Namespace), engram.ObservationFilter{IDs: []string{want.ID}})
			if a, b := asJSON(t, got), asJSON(t, []engram.Observation{want}); err != nil || a != b {
				t.Errorf("observations after the migration = %s, %v; want %s", a, err, b)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func asJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
