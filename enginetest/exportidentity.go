package enginetest

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/retrieval"
)

// identityFixture is a user with episodes in four languages, the faces and
// voices observed in them, a person "Alicia Gómez" with aliases linking a
// face and a voice, a deleted identity (whose events stay), and, when
// crowd is set, more observations than one identity read returns.
type identityFixture struct {
	e       *engine.Engine
	ns      engram.Namespace
	sc      engram.Scope
	seen    []string // the episodes Alicia was observed in, sorted
	deleted string   // the deleted identity
}

func newIdentityFixture(t *testing.T, open Open, org string, crowd bool) *identityFixture {
	t.Helper()
	f := &identityFixture{e: newEngine(t, open, engine.Options{}), ns: engram.Namespace{Org: org, Project: "p", User: "alice"}}
	f.sc = engram.ScopeOf(f.ns)
	r := rand.New(rand.NewPCG(13, 17))
	eps := mustAddEpisodes(t, f.e, f.ns, "The kayak tipped over near the pier.", "Wir haben am Abend Pizza gegessen.", "今天下午一直在下雨。", "La impresora no tiene tóner.")
	f.seen = []string{eps.Episodes[0].ID, eps.Episodes[1].ID, eps.Episodes[2].ID}
	add := func(in []engram.ObservationInput) []string {
		t.Helper()
		res, err := f.e.AddObservations(ctx, engram.AddObservationsRequest{Namespace: f.ns, Observations: in})
		if err != nil {
			t.Fatal(err)
		}
		return identitiesOf(res)
	}
	face := add(noisy(r, "face", 16, 0, 4, f.seen[:2]))
	voice := add(noisy(r, "voice", 24, 0, 3, f.seen[1:]))
	other := add(noisy(r, "face", 16, 1, 3, []string{eps.Episodes[3].ID}))
	// A crowd of faces without episodes: more observations than
	// MaxIdentityMembers, in several batches.
	for n := 0; crowd && n <= engram.MaxIdentityMembers; n += engram.MaxObservations {
		add(noisy(r, "face", 16, 2, engram.MaxObservations, nil))
	}
	if _, err := f.e.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: f.ns, Memories: []engram.Memory{
		{Value: "Alicia Gómez fährt gern Kajak.", Cues: []string{"Alicia Gómez"}}}}); err != nil {
		t.Fatal(err)
	}
	ids := append(append([]string{}, face...), voice...)
	for _, name := range []string{"Alicia Gómez", "Ali", "爱丽丝"} {
		if _, err := f.e.LinkIdentities(ctx, f.sc, engram.LinkRequest{Identities: ids, Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	f.deleted = other[0]
	if err := f.e.DeleteIdentity(ctx, f.sc, f.deleted); err != nil {
		t.Fatal(err)
	}
	slices.Sort(f.seen)
	return f
}

// identityEpisodes returns the episodes whose memories the identity
// channel finds for q in s, sorted.
func identityEpisodes(t *testing.T, e *engine.Engine, s engram.Scope, q string) []string {
	t.Helper()
	res, err := e.Search(ctx, engram.SearchRequest{Scope: s, Query: q, K: 20, Channels: []string{retrieval.ChannelIdentity}})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, h := range res.Hits {
		for _, src := range h.Memory.Sources {
			if !slices.Contains(out, src) {
				out = append(out, src)
			}
		}
	}
	slices.Sort(out)
	return out
}

// countTypes returns how many records of each type recs holds.
func countTypes(recs []engram.Record) map[string]int {
	out := map[string]int{}
	for _, r := range recs {
		out[r.Type]++
	}
	return out
}

// dropEntities clears the persons' entity ids, which name the graph's
// entities (rebuilt on import under new ids), and reports those it cleared.
func dropEntities(recs []engram.Record) []string {
	var out []string
	for _, r := range recs {
		if r.Person != nil {
			out = append(out, r.Person.EntityID)
			r.Person.EntityID = ""
		}
	}
	return out
}

var aliasQueries = []string{"What did Alicia Gómez do?", "Was hat Ali gemacht?", "¿Qué hizo Ali ayer?", "爱丽丝"}

// testExportImportIdentities: an export of a user ends with their
// modalities, person, identities, every observation (more than one read
// returns) and the events, those of a deleted identity too; importing it
// into an empty store and exporting again gives the same records (the
// person names the rebuilt graph's entity of her name); a second import
// stores nothing; a search by any alias finds her episodes there.
func testExportImportIdentities(t *testing.T, open Open) {
	f := newIdentityFixture(t, open, "exportid", true)
	first, recs := exportJSONL(t, f.e, f.sc)
	n := countTypes(recs)
	if n[engram.RecordModality] != 2 || n[engram.RecordPerson] != 1 || n[engram.RecordObservation] <= engram.MaxIdentityMembers || n[engram.RecordIdentity] < 3 {
		t.Fatalf("export holds %v, want 2 modalities, 1 person, 3 identities or more and more than %d observations", n, engram.MaxIdentityMembers)
	}
	namesDeleted := false
	for _, r := range recs {
		if r.IdentityEvent != nil && slices.Contains(r.IdentityEvent.Identities, f.deleted) {
			namesDeleted = true
		}
		if r.Identity != nil && r.Identity.ID == f.deleted {
			t.Errorf("the deleted identity %s was exported", f.deleted)
		}
	}
	if !namesDeleted {
		t.Errorf("no exported event names the deleted identity %s", f.deleted)
	}
	idRecs := n[engram.RecordModality] + n[engram.RecordPerson] + n[engram.RecordIdentity] + n[engram.RecordObservation] + n[engram.RecordIdentityEvent]

	dst := newEngine(t, open, engine.Options{})
	res, err := dst.Import(ctx, f.sc, decodeJSONL(t, first))
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	if res.IdentityRecords != idRecs || res.Skipped != 0 || len(res.Renamed) != 0 {
		t.Errorf("import = identity records %d, skipped %d, renamed %v; want %d stored", res.IdentityRecords, res.Skipped, res.Renamed, idRecs)
	}
	second, got := exportJSONL(t, dst, f.sc)
	ents := dropEntities(got)
	if len(ents) != 1 || ents[0] == "" {
		t.Errorf("the imported person names entities %v, want the rebuilt entity of her name", ents)
	} else if ent, err := dst.GetEntity(ctx, f.sc, ents[0]); err != nil || engram.NormalizeName(ent.Entity.Name) != engram.NormalizeName("Alicia Gómez") {
		t.Errorf("the imported person's entity %s is %+v (%v), want Alicia Gómez", ents[0], ent, err)
	}
	dropEntities(recs)
	compareRoundTrip(t, recs, got, first, second)

	res, err = dst.Import(ctx, f.sc, decodeJSONL(t, first))
	if err != nil {
		t.Fatal(err)
	}
	if res.IdentityRecords != 0 || res.Memories != 0 || res.Episodes != 0 {
		t.Errorf("re-import = %+v, want everything skipped", res)
	}
	for _, q := range aliasQueries {
		if got := identityEpisodes(t, dst, f.sc, q); !slices.Equal(got, f.seen) {
			t.Errorf("after the round trip %q found the episodes %v, want %v", q, got, f.seen)
		}
	}
}

// testImportIdentitiesElsewhere: a user's export imported into another
// tenant, and into another user of the same tenant (whose identity ids are
// taken, so those get fresh ids and the references follow; episode ids are
// unique per user, so the episodes keep theirs), lands there only: the
// source's export is unchanged, a second import stores nothing, and the
// alias search finds the copies of her episodes there.
func testImportIdentitiesElsewhere(t *testing.T, open Open) {
	f := newIdentityFixture(t, open, "exportidelse", false)
	data, recs := exportJSONL(t, f.e, f.sc)
	n := countTypes(recs)
	idRecs := n[engram.RecordModality] + n[engram.RecordPerson] + n[engram.RecordIdentity] + n[engram.RecordObservation] + n[engram.RecordIdentityEvent]
	for _, c := range []struct {
		name  string
		to    engram.Namespace
		chunk int // records per Import call; 0 for one call
	}{
		{"another tenant", engram.Namespace{Org: "exportidelse2", Project: "p", User: "alice"}, 0},
		{"another user", engram.Namespace{Org: "exportidelse", Project: "p", User: "bob"}, 0},
		// As engram import sends a large file: the references of a
		// chunk's records reach records an earlier call renamed.
		{"another user in chunks", engram.Namespace{Org: "exportidelse", Project: "p", User: "carol"}, 7},
	} {
		to := engram.ScopeOf(c.to)
		retargeted := func() []engram.Record {
			return retarget(t, data, func(engram.Namespace) engram.Namespace { return c.to })
		}
		res, err := importChunks(f.e, to, retargeted(), c.chunk)
		if err != nil {
			t.Fatalf("%s: import: %v", c.name, err)
		}
		if res.IdentityRecords != idRecs {
			t.Errorf("%s: %d identity records stored, want %d", c.name, res.IdentityRecords, idRecs)
		}
		if again, _ := exportJSONL(t, f.e, f.sc); string(again) != string(data) {
			t.Errorf("%s: the source's export changed", c.name)
		}
		want := make([]string, len(f.seen))
		for i, id := range f.seen {
			want[i] = id
			if n, ok := res.Renamed[id]; ok {
				want[i] = n
			}
		}
		slices.Sort(want)
		renamedIDs := 0
		for _, r := range recs {
			if r.Identity != nil {
				if _, ok := res.Renamed[r.Identity.ID]; ok {
					renamedIDs++
				}
			}
		}
		if c.to.Org == f.ns.Org && renamedIDs != n[engram.RecordIdentity] {
			t.Errorf("%s: ids taken by alice were not renamed: %d of %d identities", c.name, renamedIDs, n[engram.RecordIdentity])
		}
		if !slices.Equal(want, f.seen) {
			t.Errorf("%s: the episodes were renamed to %v, want their ids %v", c.name, want, f.seen)
		}
		// A second import before any search (a search counts accesses,
		// which makes the memories differ from the export's).
		again, err := importChunks(f.e, to, retargeted(), c.chunk)
		if err != nil {
			t.Fatalf("%s: second import: %v", c.name, err)
		}
		if again.IdentityRecords != 0 || again.Episodes != 0 {
			t.Errorf("%s: second import = %+v, want everything skipped", c.name, again)
		}
		for _, q := range aliasQueries {
			if got := identityEpisodes(t, f.e, to, q); !slices.Equal(got, want) {
				t.Errorf("%s: %q found the episodes %v, want %v", c.name, q, got, want)
			}
		}
	}
	if got := identityEpisodes(t, f.e, f.sc, "Was hat Ali gemacht?"); !slices.Equal(got, f.seen) {
		t.Errorf("the source's alias search finds %v after the imports, want %v", got, f.seen)
	}
}

// importChunks imports recs into s in calls of chunk records (all in one
// call when chunk is 0) and sums the results.
func importChunks(e *engine.Engine, s engram.Scope, recs []engram.Record, chunk int) (*engram.ImportResult, error) {
	if chunk == 0 {
		chunk = len(recs)
	}
	sum := &engram.ImportResult{Renamed: map[string]string{}}
	for len(recs) > 0 {
		n := min(chunk, len(recs))
		res, err := e.Import(ctx, s, recs[:n])
		if err != nil {
			return nil, err
		}
		recs = recs[n:]
		sum.Episodes += res.Episodes
		sum.Memories += res.Memories
		sum.IdentityRecords += res.IdentityRecords
		sum.Skipped += res.Skipped
		for k, v := range res.Renamed {
			sum.Renamed[k] = v
		}
	}
	return sum, nil
}
