package engine

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/sqlite"
)

// noDescriber is a media describer that is never asked here.
type noDescriber struct{}

func (noDescriber) Caption(context.Context, string, []byte) (string, error) { return "", nil }
func (noDescriber) Transcribe(context.Context, string, string, []byte) (string, []engram.TranscriptSegment, error) {
	return "", nil, nil
}

// An add's plan settles its mode once, from the request and the engine:
// form false stores only, async (asked, or the engine's default, or a
// medium the model must describe) forms in a job with the provisional
// former at once, anything else forms inline with the engine's former;
// async with form false is refused naming async.
func TestPlanAdd(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "engram.db"))
	if err != nil {
		t.Fatal(err)
	}
	prov := EpisodeFormer{}
	e, err := New(ctx, db, Options{Logger: slog.New(slog.DiscardHandler), Provisional: prov})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(); db.Close() })
	yes, no := true, false
	text := []engram.Episode{{Content: "hi"}}
	image := []engram.Episode{{Content: "look", Media: []engram.Media{{Kind: engram.MediaImage, ResourceID: engram.NewID()}}}}
	for _, c := range []struct {
		name        string
		form, async *bool
		byDefault   bool
		describer   bool
		eps         []engram.Episode
		mode        addMode
		provisional bool // formed at once by the provisional former, else by the engine's
		err         string
	}{
		{name: "default", eps: text, mode: addInline},
		{name: "form false", form: &no, eps: text, mode: addUnformed},
		{name: "async", async: &yes, eps: text, mode: addJob, provisional: true},
		{name: "async by default", byDefault: true, eps: text, mode: addJob, provisional: true},
		{name: "async false over the default", async: &no, byDefault: true, eps: text, mode: addInline},
		{name: "media to describe", async: &no, describer: true, eps: image, mode: addJob, provisional: true},
		{name: "media without a describer", eps: image, mode: addInline},
		{name: "async and form false", form: &no, async: &yes, eps: text, err: "async:"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e.ingest.jobs.async = c.byDefault
			e.ingest.describer = nil
			if c.describer {
				e.ingest.describer = noDescriber{}
			}
			p, err := e.ingest.planAdd(engram.AddEpisodesRequest{Form: c.form, Async: c.async}, c.eps)
			if c.err != "" {
				if engram.ErrorCode(err) != engram.EINVALID || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want EINVALID naming %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.mode != c.mode {
				t.Errorf("mode = %d, want %d", p.mode, c.mode)
			}
			switch {
			case c.mode == addUnformed && p.former != nil:
				t.Errorf("former = %T, want none", p.former)
			case c.provisional && p.former != engram.Former(prov):
				t.Errorf("former = %T, want the provisional one", p.former)
			case c.mode == addInline && p.former != e.ingest.former:
				t.Errorf("former = %T, want the engine's", p.former)
			}
		})
	}
}
