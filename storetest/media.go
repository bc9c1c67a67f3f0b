package storetest

import (
	"testing"

	"github.com/engramhq/engram"
)

// MediaEpisode returns an episode in ns that carries an image with a
// caption and an embedding and an audio with a span and a transcript in
// German and Chinese segments; the resource ids need not exist (stores
// keep references, the engine checks them).
func MediaEpisode(ns engram.Namespace) *engram.Episode {
	e := Episode(ns, "sent a photo and a voice note")
	start, end := 1.5, 12.25
	e.Modality = engram.ModalityAudio
	e.Media = []engram.Media{
		{ResourceID: engram.NewID(), Kind: engram.MediaImage, Caption: "A red bicycle leaning on a fence",
			Embedding: []float32{0.25, -0.5, 1e-3}},
		{ResourceID: engram.NewID(), Kind: engram.MediaAudio, Start: &start, End: &end,
			Transcript: "Ich fahre morgen nach Berlin. 我明天去北京。",
			Segments: []engram.TranscriptSegment{
				{Start: 1.5, End: 4, Speaker: "Jonas", Text: "Ich fahre morgen nach Berlin."},
				{Start: 4, End: 12.25, Speaker: "李雷", Text: "我明天去北京。"},
			}},
	}
	return e
}

// testEpisodeMedia checks that an episode's media are kept whole through
// GetEpisode, ListEpisodes and Dump, that an episode without media reads
// back without, and that purging the episode removes them.
func testEpisodeMedia(t *testing.T, open Opener) {
	st := open(t)
	withMedia, plain := MediaEpisode(nsU1), Episode(nsU1, "no media")
	Put(t, st, withMedia, plain)

	got, err := getEpisode(t, st, scU1, withMedia.ID)
	if err != nil {
		t.Fatalf("GetEpisode: %v", err)
	}
	sameJSON(t, "episode with media", got, withMedia)
	if got, _ := getEpisode(t, st, scU1, plain.ID); got == nil || got.Media != nil {
		t.Errorf("episode without media read back as %+v, want Media nil", got)
	}
	listed := listEpisodes(t, st, scU1, engram.EpisodeFilter{})
	found := false
	for _, e := range listed {
		if e.ID == withMedia.ID {
			found = true
			sameJSON(t, "listed episode with media", e, withMedia)
		}
	}
	if !found {
		t.Errorf("ListEpisodes did not list the episode with media")
	}
	for _, d := range dumpAll(t, st) {
		if d.Type == engram.RecordEpisode && d.Episode.ID == withMedia.ID {
			sameJSON(t, "dumped episode with media", d.Episode, withMedia)
		}
	}

	update(t, st, func(tx engram.Tx) error { return tx.PurgeEpisode(ctx, nsU1, withMedia.ID) })
	if _, err := getEpisode(t, st, scU1, withMedia.ID); engram.ErrorCode(err) != engram.ENOTFOUND {
		t.Errorf("GetEpisode after PurgeEpisode = %v, want ENOTFOUND", err)
	}
}
