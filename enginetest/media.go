package enginetest

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/openai"
	"github.com/engramhq/engram/openai/openaitest"
)

// Media bytes: engram never decodes them, so any bytes do.
var (
	pngBytes = []byte("\x89PNG\r\n\x1a\n a picture of a bicycle")
	mp3Bytes = []byte("ID3\x04 a voice note")
)

// mediaNS returns alice's namespace and scope and bob's scope in an org
// of the test's own.
func mediaNS(org string) (engram.Namespace, engram.Scope, engram.Scope) {
	return engram.Namespace{Org: org, Project: "p", User: "alice", Session: "s1"},
		engram.Scope{Org: org, Project: "p", User: "alice"}, engram.Scope{Org: org, Project: "p", User: "bob"}
}

func addMediaEpisode(t *testing.T, e *engine.Engine, ns engram.Namespace, media ...engram.Media) (*engram.AddEpisodesResult, error) {
	t.Helper()
	at := t0
	return e.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: ns, Episodes: []engram.EpisodeInput{{
		Role: "user", Speaker: "Alice", Content: "Alice sent a photo and a voice note", OccurredAt: &at, Media: media}}})
}

// mediaHit searches one channel of s and returns the first hit, failing
// when there is none.
func mediaHit(t *testing.T, e *engine.Engine, s engram.Scope, channel, q string) engram.Memory {
	t.Helper()
	res, err := e.Search(ctx, engram.SearchRequest{Scope: s, Query: q, Channels: []string{channel}})
	if err != nil {
		t.Fatalf("%s search %q: %v", channel, q, err)
	}
	if len(res.Hits) == 0 {
		t.Fatalf("%s search %q found nothing", channel, q)
	}
	return res.Hits[0].Memory
}

// checkMediaCite checks that m was formed from the media of episode ep and
// cites resource id with the part (and, for a segment, the speaker and
// span) given.
func checkMediaCite(t *testing.T, m engram.Memory, ep, id, part, speaker string, start, end float64) {
	t.Helper()
	cite, _ := m.Metadata[engram.MetaMedia].(map[string]any)
	if m.Metadata[engram.MetaResourceID] != id || cite == nil || cite["resource_id"] != id || cite["part"] != part || cite["episode"] != ep {
		t.Fatalf("memory %q: metadata %v, want it to cite the %s of resource %s in episode %s", m.Value, m.Metadata, part, id, ep)
	}
	if len(m.Sources) != 1 || m.Sources[0] != ep {
		t.Errorf("memory %q cites episodes %v, want [%s]", m.Value, m.Sources, ep)
	}
	if speaker != "" && m.Speaker() != speaker {
		t.Errorf("memory %q: speaker %q, want %q", m.Value, m.Speaker(), speaker)
	}
	if end > 0 && (toFloat(cite["start"]) != start || toFloat(cite["end"]) != end) {
		t.Errorf("memory %q: span %v to %v, want %v to %v", m.Value, cite["start"], cite["end"], start, end)
	}
}

func toFloat(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case interface{ Float64() (float64, error) }:
		f, _ := x.Float64()
		return f
	}
	return -1
}

// testMediaForms: an episode with an image and its English caption and an
// audio with German and Chinese transcript segments stores its media;
// the caption and each segment become memories, found by full text and
// by the dense channel, that keep the speaker and time of their segment
// and cite the episode, the resource and the span; deleting a resource
// deletes the memories made from it.
func testMediaForms(t *testing.T, open Open) {
	nsA, scA, scB := mediaNS("mediaforms")
	e := newEngine(t, open, engine.Options{Embedder: &BagEmbedder{}})
	img := addResource(t, e, nsA, "bike.png", "image/png", pngBytes)
	voice := addResource(t, e, nsA, "note.mp3", "audio/mpeg", mp3Bytes)
	start, end := 1.5, 12.25
	media := []engram.Media{
		{ResourceID: img.ID, Kind: engram.MediaImage, Caption: "A red bicycle leaning on the garden fence.", Embedding: []float32{0.5, -0.25}},
		{ResourceID: voice.ID, Kind: engram.MediaAudio, Start: &start, End: &end, Segments: []engram.TranscriptSegment{
			{Start: 1.5, End: 4, Speaker: "Jonas", Text: "Ich fahre morgen mit dem Zug nach Hamburg."},
			{Start: 4, End: 12.25, Speaker: "李雷", Text: "我下周去上海开会。"},
		}},
	}
	res, err := addMediaEpisode(t, e, nsA, media...)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Unformed) != 0 {
		t.Errorf("unformed = %v, want none", res.Unformed)
	}
	ep := res.Episodes[0].ID
	got, err := e.GetEpisode(ctx, scA, ep)
	if err != nil || len(got.Media) != 2 || got.Media[1].Segments[1].Speaker != "李雷" || *got.Media[1].End != 12.25 || got.Media[0].Embedding[1] != -0.25 {
		t.Fatalf("GetEpisode = %+v, %v", got, err)
	}

	checkMediaCite(t, mediaHit(t, e, scA, "bm25", "bicycle garden fence"), ep, img.ID, "caption", "", 0, 0)
	checkMediaCite(t, mediaHit(t, e, scA, "bm25", "Zug nach Hamburg"), ep, voice.ID, "segment", "Jonas", 1.5, 4)
	checkMediaCite(t, mediaHit(t, e, scA, "bm25", "上海开会"), ep, voice.ID, "segment", "李雷", 4, 12.25)
	checkMediaCite(t, mediaHit(t, e, scA, "dense", "Zug Hamburg morgen"), ep, voice.ID, "segment", "Jonas", 1.5, 4)
	if ids := searchIDs(t, e, scB, "Zug nach Hamburg"); len(ids) != 0 {
		t.Errorf("bob finds alice's transcript: %v", ids)
	}

	if err := e.DeleteResource(ctx, scA, voice.ID); err != nil {
		t.Fatal(err)
	}
	left, err := e.ListMemories(ctx, scA, engram.MemoryFilter{Metadata: map[string]any{engram.MetaResourceID: voice.ID},
		Statuses: []engram.Status{engram.StatusActive, engram.StatusDeleted, engram.StatusSuperseded, engram.StatusExpired}})
	if err != nil || len(left.Memories) != 0 {
		t.Errorf("the transcript's memories outlive their resource: %+v %v", left, err)
	}
	if res, err := e.Search(ctx, engram.SearchRequest{Scope: scA, Query: "Zug nach Hamburg", Channels: []string{"bm25"}}); err != nil || len(res.Hits) != 0 {
		t.Errorf("full text finds the deleted transcript: %+v %v", res, err)
	}
	mediaHit(t, e, scA, "bm25", "bicycle garden fence")
}

// testMediaBadInput: media referring to no resource, to another user's or
// another tenant's resource, with a bad kind or time span, are refused
// with EINVALID naming the field, and nothing is stored.
func testMediaBadInput(t *testing.T, open Open) {
	nsA, scA, _ := mediaNS("mediabad")
	nsB := engram.Namespace{Org: "mediabad", Project: "p", User: "bob"}
	e := newEngine(t, open, engine.Options{})
	mine := addResource(t, e, nsA, "a.mp3", "audio/mpeg", mp3Bytes)
	bobs := addResource(t, e, nsB, "b.mp3", "audio/mpeg", mp3Bytes)
	other := addResource(t, e, engram.Namespace{Org: "mediabad2", Project: "p", User: "alice"}, "c.mp3", "audio/mpeg", mp3Bytes)
	f := func(v float64) *float64 { return &v }
	for _, c := range []struct {
		name  string
		media engram.Media
		want  string
	}{
		{"no such resource", engram.Media{ResourceID: engram.NewID(), Kind: engram.MediaAudio}, "media[0].resource_id"},
		{"another user's", engram.Media{ResourceID: bobs.ID, Kind: engram.MediaAudio}, "media[0].resource_id"},
		{"another tenant's", engram.Media{ResourceID: other.ID, Kind: engram.MediaAudio}, "media[0].resource_id"},
		{"bad id", engram.Media{ResourceID: "../x", Kind: engram.MediaAudio}, "media[0].resource_id"},
		{"bad kind", engram.Media{ResourceID: mine.ID, Kind: "smell"}, "media[0].kind"},
		{"empty span", engram.Media{ResourceID: mine.ID, Kind: engram.MediaAudio, Start: f(5), End: f(5)}, "media[0]: the time span"},
		{"negative start", engram.Media{ResourceID: mine.ID, Kind: engram.MediaAudio, Start: f(-1), End: f(5)}, "media[0]: the time span"},
		{"half a span", engram.Media{ResourceID: mine.ID, Kind: engram.MediaAudio, Start: f(1)}, "both start and end"},
		{"image span", engram.Media{ResourceID: mine.ID, Kind: engram.MediaImage, Start: f(0), End: f(1)}, "an image has no time span"},
		{"segment span", engram.Media{ResourceID: mine.ID, Kind: engram.MediaAudio, Segments: []engram.TranscriptSegment{{Start: 3, End: 2, Text: "x"}}}, "segments[0]"},
	} {
		_, err := addMediaEpisode(t, e, nsA, c.media)
		if code(err) != engram.EINVALID || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want EINVALID naming %q", c.name, err, c.want)
		}
	}
	if n := countEpisodes(t, e, scA); n != 0 {
		t.Errorf("%d episodes stored by refused adds", n)
	}
	if n := countMemories(t, e, scA); n != 0 {
		t.Errorf("%d memories stored by refused adds", n)
	}
}

// testMediaUnformed: without a model endpoint, media without a caption or
// transcript are stored and not formed, and the answer says so.
func testMediaUnformed(t *testing.T, open Open) {
	nsA, scA, _ := mediaNS("mediaunformed")
	e := newEngine(t, open, engine.Options{})
	img := addResource(t, e, nsA, "bike.png", "image/png", pngBytes)
	res, err := addMediaEpisode(t, e, nsA, engram.Media{ResourceID: img.ID, Kind: engram.MediaImage})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Unformed) != 1 || !strings.Contains(res.Unformed[0], "episodes[0].media[0]") || !strings.Contains(res.Unformed[0], "not formed") {
		t.Errorf("unformed = %q, want a note on episodes[0].media[0]", res.Unformed)
	}
	if got, err := e.GetEpisode(ctx, scA, res.Episodes[0].ID); err != nil || len(got.Media) != 1 {
		t.Errorf("the episode: %+v %v", got, err)
	}
	ms, err := e.ListMemories(ctx, scA, engram.MemoryFilter{Metadata: map[string]any{engram.MetaResourceID: img.ID}})
	if err != nil || len(ms.Memories) != 0 {
		t.Errorf("memories of the undescribed image: %+v %v", ms, err)
	}
}

// testMediaDescribed: with a model endpoint (the fake OpenAI server),
// media without a caption or transcript are described in the background
// job the add enqueues: the image by chat completions with the picture,
// the audio by the transcription endpoint, and the texts become memories
// marked generated. While the endpoint fails, the episode stays stored
// and the job records the error and runs again.
func testMediaDescribed(t *testing.T, open Open) {
	srv := openaitest.NewServer(t, openaitest.Options{
		Chat: func(r openaitest.ChatRequest) string {
			if len(r.Messages) == 1 && len(r.Messages[0].Images) == 1 && strings.HasPrefix(r.Messages[0].Images[0], "data:image/png;base64,") {
				return "Ein rotes Fahrrad lehnt am Gartenzaun."
			}
			return "no image came"
		},
		Transcribe: func(r openaitest.TranscriptionRequest) openaitest.Transcription {
			if !bytes.Equal(r.File, mp3Bytes) {
				return openaitest.Transcription{Text: "wrong file"}
			}
			return openaitest.Transcription{Text: "我下周去上海开会。", Segments: []openaitest.TranscriptionSegment{{Start: 0, End: 3, Text: "我下周去上海开会。", Speaker: "李雷"}}}
		},
	})
	d, err := openai.NewDescriber(openai.Config{BaseURL: srv.URL(), Model: "vision", MaxRetries: -1}, "whisper")
	if err != nil {
		t.Fatal(err)
	}
	nsA, scA, _ := mediaNS("mediadescribed")
	c := &clock{t: t0}
	e := newEngine(t, open, engine.Options{Describer: d, Now: c.now, JobBackoff: time.Minute})
	img := addResource(t, e, nsA, "bike.png", "image/png", pngBytes)
	voice := addResource(t, e, nsA, "note.mp3", "audio/mpeg", mp3Bytes)

	srv.FailNext(1, openaitest.Fault{Status: 400, Message: "model overloaded with pictures"})
	res, err := addMediaEpisode(t, e, nsA, engram.Media{ResourceID: img.ID, Kind: engram.MediaImage}, engram.Media{ResourceID: voice.ID, Kind: engram.MediaAudio})
	if err != nil {
		t.Fatal(err)
	}
	if res.Job == nil || len(res.Memories) != 0 || len(res.Unformed) != 0 {
		t.Fatalf("add = job %v, %d memories, unformed %v; want a job and nothing else", res.Job, len(res.Memories), res.Unformed)
	}
	if n := runJobs(t, e); n != 1 {
		t.Fatalf("ran %d jobs, want 1", n)
	}
	j := mustJob(t, e, scA, res.Job.ID)
	if j.State != engram.JobRetrying || !strings.Contains(j.LastError, "model overloaded") {
		t.Fatalf("after a failing model: job %+v, want retrying with the model's error", j)
	}
	if _, err := e.GetEpisode(ctx, scA, res.Episodes[0].ID); err != nil {
		t.Fatalf("the episode is gone after a failing model: %v", err)
	}
	c.add(time.Minute)
	if n := runJobs(t, e); n != 1 {
		t.Fatalf("ran %d jobs on the retry, want 1", n)
	}
	if j := mustJob(t, e, scA, res.Job.ID); j.State != engram.JobDone {
		t.Fatalf("job %+v, want done", j)
	}
	ep := res.Episodes[0].ID
	capt := mediaHit(t, e, scA, "bm25", "Fahrrad Gartenzaun")
	checkMediaCite(t, capt, ep, img.ID, "caption", "", 0, 0)
	seg := mediaHit(t, e, scA, "bm25", "上海开会")
	checkMediaCite(t, seg, ep, voice.ID, "segment", "李雷", 0, 3)
	for _, m := range []engram.Memory{capt, seg} {
		if cite, _ := m.Metadata[engram.MetaMedia].(map[string]any); cite["generated"] != true {
			t.Errorf("memory %q is not marked generated: %v", m.Value, cite)
		}
	}
	var paths []string
	for _, r := range srv.Requests() {
		paths = append(paths, r.Path)
	}
	if want := "/v1/chat/completions /v1/chat/completions /v1/audio/transcriptions"; strings.Join(paths, " ") != want {
		t.Errorf("requests %v, want %s", paths, want)
	}
}

// testMediaExportImport: an export carries an episode's media (references,
// spans, transcript segments, embedding) and the memories formed from
// them, and an import into another store gives them back unchanged. The
// resources' files are not part of an export (engram migrate-store copies
// them).
func testMediaExportImport(t *testing.T, open Open) {
	nsA, scA, _ := mediaNS("mediaexport")
	src := newEngine(t, open, engine.Options{})
	voice := addResource(t, src, nsA, "note.mp3", "audio/mpeg", mp3Bytes)
	start, end := 0.5, 7.0
	res, err := addMediaEpisode(t, src, nsA, engram.Media{ResourceID: voice.ID, Kind: engram.MediaAudio, Start: &start, End: &end,
		Embedding: []float32{1, 0.5}, Segments: []engram.TranscriptSegment{
			{Start: 0.5, End: 3, Speaker: "Jonas", Text: "Der Zug hat zehn Minuten Verspätung."},
			{Start: 3, End: 7, Speaker: "周敏", Text: "我在站台等你。"},
		}})
	if err != nil {
		t.Fatal(err)
	}
	data, recs := exportJSONL(t, src, scA)
	dst := newEngine(t, open, engine.Options{})
	if _, err := dst.Import(ctx, scA, decodeJSONL(t, data)); err != nil {
		t.Fatalf("import: %v", err)
	}
	got, err := dst.GetEpisode(ctx, scA, res.Episodes[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if x, y := mustJSON(t, got.Media), mustJSON(t, res.Episodes[0].Media); x != y {
		t.Errorf("imported media = %s, want %s", x, y)
	}
	n := 0
	for _, r := range recs {
		if r.Type == engram.RecordMemory && r.Memory.Metadata[engram.MetaResourceID] == voice.ID {
			n++
		}
	}
	if n != 2 {
		t.Errorf("the export holds %d memories citing the recording, want 2 (one per segment)", n)
	}
	checkMediaCite(t, mediaHit(t, dst, scA, "bm25", "站台等你"), res.Episodes[0].ID, voice.ID, "segment", "周敏", 3, 7)
}
