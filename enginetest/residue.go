package enginetest

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/embedcache"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/vector"
)

// Files lists every file that holds a store's data, after making sure
// that what the store committed has reached them (a checkpoint).
type Files func(t *testing.T) []string

// DirFiles returns every regular file under dir.
func DirFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) {
				return nil // removed while walking (a temporary file)
			}
			return err
		}
		if d.Type().IsRegular() {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("list %s: %v", dir, err)
	}
	return out
}

// annFilesOf returns the index files (vector and text) under cacheDir.
func annFilesOf(t *testing.T, cacheDir string) []string {
	return DirFiles(t, filepath.Join(cacheDir, "ann"))
}

// marker returns a random lower-case word no store holds by chance.
func marker(t *testing.T) string {
	b := make([]byte, 20)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	for i := range b {
		b[i] = 'a' + b[i]%26
	}
	return "zq" + string(b)
}

// distinctMarkers returns n markers whose memories' vectors all differ.
// BagEmbedder hashes words into 64 buckets, so two random markers share
// one about once in 64 draws; a deleted marker sharing the kept one's
// bucket has the kept memory's vector, byte for byte, and the scan would
// find it in the kept user's index file.
func distinctMarkers(t *testing.T, n int) []string {
	t.Helper()
	var out []string
	seen := map[string]bool{}
	for len(out) < n {
		m := marker(t)
		vs := embedded(t, m)
		if slices.ContainsFunc(vs, func(v []byte) bool { return seen[string(v)] }) {
			continue
		}
		for _, v := range vs {
			seen[string(v)] = true
		}
		out = append(out, m)
	}
	return out
}

// grep returns the files holding marker or its last 12 bytes (full-text
// indexes store a word behind the prefix it shares with the word before).
func grep(t *testing.T, files []string, marker string) []string {
	t.Helper()
	return grepAny(t, files, [][]byte{[]byte(marker), []byte(marker[len(marker)-12:])})
}

// embedded returns the bytes, as stored (little-endian float32), of the
// vectors of the texts write gives each marker's memory.
func embedded(t *testing.T, markers ...string) [][]byte {
	t.Helper()
	var texts []string
	for _, m := range markers {
		texts = append(texts, "Der Wert ist jetzt "+m+" 新的", "abstraction of "+m)
	}
	vs, err := (&BagEmbedder{}).Embed(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, v := range vs {
		b := make([]byte, 0, 4*len(v))
		for _, x := range v {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
		}
		out = append(out, b)
	}
	return out
}

// grepAny returns the files holding any of pats.
func grepAny(t *testing.T, files []string, pats [][]byte) []string {
	t.Helper()
	var hits []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatalf("read %s: %v", f, err)
		}
		for _, p := range pats {
			if bytes.Contains(b, p) {
				hits = append(hits, f)
				break
			}
		}
	}
	return hits
}

// RunResidue writes unique markers into every text field of memories and
// episodes, hard-deletes one user's and purges another's, and scans every
// file of the store (files) and of the embedding cache for the markers'
// bytes: after the engine's delete returns, none may be found. A third
// marker that is not deleted must still be found, so the scan is not blind.
func RunResidue(t *testing.T, st engram.Store, files Files) {
	cacheDir := t.TempDir()
	cache, err := embedcache.New(&BagEmbedder{}, embedcache.Options{Path: filepath.Join(cacheDir, "embeddings-cache.db")})
	if err != nil {
		t.Fatal(err)
	}
	// Every index switches to a graph at once, so each user's is saved to
	// a file under the cache directory the scan covers.
	e, err := engine.New(ctx, st, engine.Options{
		Embedder: cache, IndexDir: filepath.Join(cacheDir, "ann"),
		NewIndex: func(dim int) vector.Index { return vector.NewAuto(dim, vector.AutoConfig{Threshold: 1}) },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(); cache.Close(); st.Close() })
	scan := func() []string { return append(files(t), DirFiles(t, cacheDir)...) }

	ms := distinctMarkers(t, 3)
	hard, purged, kept := ms[0], ms[1], ms[2]
	noForm := false
	var identityIDs []string
	write := func(ns engram.Namespace, m string) (memID, epID string, resIDs []string) {
		t.Helper()
		eps, err := e.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: ns, Form: &noForm, Episodes: []engram.EpisodeInput{
			{Role: "user", Content: "Ich habe " + m + " gesagt", Metadata: map[string]any{"note": "meta " + m}},
		}})
		if err != nil {
			t.Fatal(err)
		}
		ms, err := e.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: ns, Memories: []engram.Memory{{
			Kind: engram.KindSemantic, Value: "El valor es " + m, Abstraction: "abstraction of " + m,
			Cues: []string{"cue " + m, "Zora Quint"}, Metadata: map[string]any{"secret": "value " + m},
		}}})
		if err != nil {
			t.Fatal(err)
		}
		v := "Der Wert ist jetzt " + m + " 新的"
		if _, err := e.UpdateMemory(ctx, engram.Scope{Org: ns.Org, Project: ns.Project, User: ns.User}, ms[0].ID, engram.MemoryPatch{Value: &v, Reason: "corrected " + m}); err != nil {
			t.Fatal(err)
		}
		ids := addResidueIdentity(t, e, ns, m, eps.Episodes[0].ID)
		if m == hard {
			identityIDs = ids
		}
		resIDs = addResidueResource(t, e, ns, m)
		return ms[0].ID, eps.Episodes[0].ID, append(resIDs, addResidueMedia(t, e, ns, m, resIDs[1]))
	}
	memID, epID, resIDs := write(nsA, hard)
	mediaEp := resIDs[2]
	resIDs = resIDs[:2]
	purgedID, _, _ := write(nsB, purged)
	keptNS := engram.Namespace{Org: "acme", Project: "p", User: "carol"}
	keptID, _, _ := write(keptNS, kept)
	saveIndexes := func() {
		t.Helper()
		for _, ns := range []engram.Namespace{nsA, nsB, keptNS} {
			// dense loads the vector index, bm25 the text index.
			for _, ch := range []string{"dense", "bm25"} {
				if _, err := e.Search(ctx, engram.SearchRequest{Scope: engram.ScopeOf(ns), Query: "wert", Channels: []string{ch}}); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := e.SaveIndexes(ctx); err != nil {
			t.Fatal(err)
		}
	}
	saveIndexes()
	for _, id := range []string{memID, purgedID, keptID} {
		if len(grep(t, DirFiles(t, filepath.Join(cacheDir, "ann")), id)) == 0 {
			t.Fatalf("memory %s is in no saved index before the delete: the scan cannot see the index files", id)
		}
	}
	textFiles := func() []string {
		var out []string
		for _, f := range annFilesOf(t, cacheDir) {
			if strings.HasSuffix(f, ".bm25") {
				out = append(out, f)
			}
		}
		return out
	}
	for _, m := range []string{hard, purged, kept} {
		if len(grep(t, textFiles(), m)) == 0 {
			t.Fatalf("marker %s is in no saved text index before the delete: the scan cannot see them", m)
		}
	}
	deletedVecs := embedded(t, hard, purged)
	deletedObs := [][]byte{residueEmbedding(hard), residueEmbedding(purged)}
	if len(grepAny(t, scan(), deletedObs)) == 0 || len(grepAny(t, scan(), [][]byte{residueEmbedding(kept)})) == 0 {
		t.Fatalf("an observation's embedding is in no file before the delete: the scan cannot see identities")
	}

	// Each marker's cue is also an entity's name: the graph must go too.
	for _, c := range []struct {
		s engram.Scope
		m string
	}{{scA, hard}, {scB, purged}, {engram.ScopeOf(keptNS), kept}} {
		if p, err := e.ListEntities(ctx, c.s, engram.EntityFilter{Prefix: "cue " + c.m}); err != nil || len(p.Entities) != 1 {
			t.Fatalf("the cue of %s made entities %+v (%v), want one: the scan cannot see the graph", c.m, p, err)
		}
	}
	// Two cues make two entities and a community whose summary quotes
	// the memory (the media memories may make another).
	for _, c := range []struct {
		s engram.Scope
		m string
	}{{scA, hard}, {scB, purged}, {engram.ScopeOf(keptNS), kept}} {
		if _, err := e.RefreshCommunities(ctx, c.s, false); err != nil {
			t.Fatal(err)
		}
		l, err := e.ListCommunities(ctx, c.s)
		if err != nil || !slices.ContainsFunc(l.Communities, func(cm engram.Community) bool { return strings.Contains(cm.Summary, c.m) }) {
			t.Fatalf("communities of %s = %+v (%v), want one quoting it: the scan cannot see the summaries", c.m, l, err)
		}
	}
	for _, m := range []string{hard, purged, kept} {
		if len(grep(t, scan(), m)) == 0 {
			t.Fatalf("marker %s is in no file before the delete: the scan cannot see the store's data", m)
		}
	}

	if err := e.DeleteMemory(ctx, scA, memID, engram.DeleteOptions{Hard: true}); err != nil {
		t.Fatal(err)
	}
	for _, id := range resIDs {
		if err := e.DeleteResource(ctx, scA, id); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{epID, mediaEp} {
		if _, err := e.DeleteEpisode(ctx, scA, id); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range identityIDs {
		if err := e.DeleteIdentity(ctx, scA, id); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.DeleteScope(ctx, scB); err != nil {
		t.Fatal(err)
	}

	files2 := scan()
	annFiles := func() []string { return DirFiles(t, filepath.Join(cacheDir, "ann")) }
	// Ids are no secret (the audit log keeps them), but an index file
	// holding one still holds the memory's vector.
	for what, id := range map[string]string{"hard-deleted": memID, "purged": purgedID} {
		if hits := grep(t, annFiles(), id); len(hits) > 0 {
			t.Errorf("the id of the %s memory is still in %s", what, strings.Join(hits, ", "))
		}
	}
	// The store's own files are the backend's business (PostgreSQL only
	// vacuums its vector table in place); the index files and the
	// embedding cache beside them must not keep a deleted vector.
	if hits := grepAny(t, DirFiles(t, cacheDir), deletedVecs); len(hits) > 0 {
		t.Errorf("a deleted memory's vector is still in %s", strings.Join(hits, ", "))
	}
	for what, m := range map[string]string{"hard-deleted": hard, "purged": purged} {
		if hits := grep(t, textFiles(), m); len(hits) > 0 {
			t.Errorf("the %s marker is still in the text index %s", what, strings.Join(hits, ", "))
		}
	}
	saveIndexes() // the periodic save writes the indexes again
	files2 = scan()
	if hits := grepAny(t, DirFiles(t, cacheDir), deletedVecs); len(hits) > 0 {
		t.Errorf("after saving the indexes again a deleted memory's vector is in %s", strings.Join(hits, ", "))
	}
	if hits := grepAny(t, annFiles(), [][]byte{[]byte(memID), []byte(purgedID)}); len(hits) > 0 {
		t.Errorf("after saving the indexes again a deleted memory's id is in %s", strings.Join(hits, ", "))
	}
	for what, m := range map[string]string{"hard-deleted": hard, "purged": purged} {
		if hits := grep(t, textFiles(), m); len(hits) > 0 {
			t.Errorf("after saving the indexes again the %s marker is in the text index %s", what, strings.Join(hits, ", "))
		}
	}
	if len(grep(t, textFiles(), kept)) == 0 {
		t.Errorf("the marker not deleted is in no saved text index: the scan of the text index files went blind")
	}
	if len(grep(t, annFiles(), keptID)) == 0 {
		t.Errorf("the memory not deleted is in no file: the scan of the index files went blind")
	}
	if hits := grepAny(t, files2, deletedObs); len(hits) > 0 {
		t.Errorf("a deleted observation's embedding is still in %s", strings.Join(hits, ", "))
	}
	for what, m := range map[string]string{"hard-deleted": hard, "purged": purged} {
		if hits := grep(t, files2, m); len(hits) > 0 {
			t.Errorf("the %s marker is still in %s", what, strings.Join(hits, ", "))
		}
	}
	if len(grep(t, files2, kept)) == 0 {
		t.Errorf("the marker of data not deleted is in no file: the scan went blind")
	}

	// A purge keeps that it happened, when and by whom.
	page, err := e.Audit(ctx, scB, engram.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, a := range page.Entries {
		found = found || (a.Op == "scope.delete" && a.Actor == "test" && !a.At.IsZero())
		if strings.Contains(a.Detail, purged) {
			t.Errorf("audit entry %s %s still holds the purged text: %q", a.ID, a.Op, a.Detail)
		}
	}
	if !found {
		t.Errorf("the audit log lost the purge itself: %+v", page.Entries)
	}
}

// addResidueMedia adds an episode in ns whose media (resource res) carry
// marker m in a caption, a transcript segment and its speaker, formed into
// memories that cite res, and returns the episode's id.
func addResidueMedia(t *testing.T, e *engine.Engine, ns engram.Namespace, m, res string) string {
	t.Helper()
	start, end := 0.0, 9.5
	out, err := e.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: ns, Episodes: []engram.EpisodeInput{{
		Role: "user", Content: "Media note",
		Media: []engram.Media{
			{ResourceID: res, Kind: engram.MediaVideo, Start: &start, End: &end, Caption: "Bild von " + m + " am Strand",
				Segments: []engram.TranscriptSegment{{Start: 1, End: 2, Speaker: "Sprecher " + m, Text: "Sie sagte " + m + " laut"}}},
		},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	ms, err := e.ListMemories(ctx, engram.ScopeOf(ns), engram.MemoryFilter{Metadata: map[string]any{engram.MetaResourceID: res}})
	if err != nil || len(ms.Memories) != 2 {
		t.Fatalf("the media made memories %+v (%v), want 2", ms, err)
	}
	return out.Episodes[0].ID
}

// addResidueResource uploads a Markdown resource whose name, source and
// content carry marker m (split into a few memories), and a binary one of
// more than a chunk with m at both ends, so more than one chunk row holds
// it. The binary one makes no memories: the store's statistics stay those
// of a small table, as in the rest of this test.
func addResidueResource(t *testing.T, e *engine.Engine, ns engram.Namespace, m string) []string {
	t.Helper()
	doc := "# Kapitel " + m + "\n\nDer Absatz nennt " + m + ".\n\nEnde " + m + "\n"
	r, err := e.AddResource(ctx, engram.Resource{Namespace: ns, Name: "notes " + m + ".md", MIMEType: "text/markdown", Source: "src " + m}, strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	if r.Memories != 2 {
		t.Fatalf("the document made %d memories, want 2", r.Memories)
	}
	blob := m + strings.Repeat("\x00", engram.ResourceChunkBytes) + m
	b, err := e.AddResource(ctx, engram.Resource{Namespace: ns, Name: "blob " + m, MIMEType: "application/octet-stream"}, strings.NewReader(blob))
	if err != nil {
		t.Fatal(err)
	}
	if b.Size <= engram.ResourceChunkBytes || b.Memories != 0 {
		t.Fatalf("blob resource = %+v", b)
	}
	return []string{r.ID, b.ID}
}

// residueEmbedding returns the stored bytes (little-endian float32) of
// the embedding addResidueIdentity observes for marker m: 16 values
// made from its letters, no two markers alike.
func residueEmbedding(m string) []byte {
	var b []byte
	for _, x := range residueVector(m) {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

func residueVector(m string) []float32 {
	v := make([]float32, 16)
	for i := range v {
		v[i] = float32(m[2+i]-'a'+1) / 7
	}
	return v
}

// addResidueIdentity observes a face in episode ep of ns, with an
// embedding made from marker m, and links it to a person named after m;
// it returns the identities made.
func addResidueIdentity(t *testing.T, e *engine.Engine, ns engram.Namespace, m, ep string) []string {
	t.Helper()
	res, err := e.AddObservations(ctx, engram.AddObservationsRequest{Namespace: ns, Observations: []engram.ObservationInput{
		{Modality: "face", Embedding: residueVector(m), EpisodeID: ep}}})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Observations[0].IdentityID
	if _, err := e.LinkIdentities(ctx, engram.ScopeOf(ns), engram.LinkRequest{Identities: []string{id}, Name: "Person " + m}); err != nil {
		t.Fatal(err)
	}
	return []string{id}
}
