package openai_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/openai"
	"github.com/engramhq/engram/openai/openaitest"
)

func newDescriber(t *testing.T, srv *openaitest.Server) *openai.Describer {
	t.Helper()
	d, err := openai.NewDescriber(openai.Config{BaseURL: srv.URL(), Model: "test-vision", RetryBase: time.Millisecond}, "test-whisper")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestDescriberCaption: the image goes as a base64 data URL in an image
// content part beside the prompt, and the reply is the caption.
func TestDescriberCaption(t *testing.T) {
	img := []byte("\x89PNG\r\n\x1a\nnot really a picture")
	srv := openaitest.NewServer(t, openaitest.Options{Chat: func(r openaitest.ChatRequest) string {
		if len(r.Messages) != 1 || len(r.Messages[0].Images) != 1 {
			return "no image"
		}
		url := r.Messages[0].Images[0]
		b64, ok := strings.CutPrefix(url, "data:image/png;base64,")
		got, err := base64.StdEncoding.DecodeString(b64)
		if !ok || err != nil || !bytes.Equal(got, img) {
			return "wrong image"
		}
		return "  Ein rotes Fahrrad lehnt an einem Zaun.  "
	}})
	d := newDescriber(t, srv)
	got, err := d.Caption(context.Background(), "image/png", img)
	if err != nil {
		t.Fatal(err)
	}
	if got != "Ein rotes Fahrrad lehnt an einem Zaun." {
		t.Errorf("caption = %q", got)
	}
	if reqs := srv.Requests(); len(reqs) != 1 || reqs[0].Chat == nil || reqs[0].Chat.Model != "test-vision" || !strings.Contains(reqs[0].Chat.Messages[0].Content, "Describe") {
		t.Errorf("requests = %+v", reqs)
	}
	if _, err := d.Caption(context.Background(), "audio/mpeg", img); engram.ErrorCode(err) != engram.EINVALID {
		t.Errorf("caption of audio: %v, want EINVALID", err)
	}
}

// TestDescriberTranscribe: the audio goes as a multipart file with the
// transcription model and verbose_json; the segments come back with their
// times and speakers (Chinese text kept); a server that refuses
// verbose_json is asked again for json; a server error is retried, a 4xx
// is EINVALID.
func TestDescriberTranscribe(t *testing.T) {
	audio := []byte("ID3 fake mp3 bytes")
	srv := openaitest.NewServer(t, openaitest.Options{Transcribe: func(r openaitest.TranscriptionRequest) openaitest.Transcription {
		if !bytes.Equal(r.File, audio) || r.FileName != "note.mp3" || r.Model != "test-whisper" {
			return openaitest.Transcription{Text: "wrong request"}
		}
		return openaitest.Transcription{Text: "我明天去北京。 See you there.", Segments: []openaitest.TranscriptionSegment{
			{Start: 0, End: 2.5, Text: " 我明天去北京。", Speaker: "A"},
			{Start: 2.5, End: 4, Text: "See you there."},
		}}
	}})
	d := newDescriber(t, srv)
	srv.FailNext(1, openaitest.Fault{Status: 503})
	text, segs, err := d.Transcribe(context.Background(), "note.mp3", "audio/mpeg", audio)
	if err != nil {
		t.Fatal(err)
	}
	want := []engram.TranscriptSegment{{Start: 0, End: 2.5, Speaker: "A", Text: "我明天去北京。"}, {Start: 2.5, End: 4, Text: "See you there."}}
	if text != "我明天去北京。 See you there." || len(segs) != 2 || segs[0] != want[0] || segs[1] != want[1] {
		t.Errorf("transcript = %q %+v", text, segs)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || reqs[1].Transcription == nil || reqs[1].Transcription.ResponseFormat != "verbose_json" {
		t.Errorf("requests = %+v", reqs)
	}

	srv.Reset()
	srv.FailNext(1, openaitest.Fault{Status: 400, Message: "response_format verbose_json is not supported by this model"})
	if text, segs, err := d.Transcribe(context.Background(), "note.mp3", "audio/mpeg", audio); err != nil || text == "" || segs != nil {
		t.Errorf("after verbose_json is refused: %q %+v %v, want the text without segments", text, segs, err)
	}
	if reqs := srv.Requests(); len(reqs) != 2 || reqs[1].Transcription.ResponseFormat != "json" {
		t.Errorf("requests after a refusal = %+v", reqs)
	}

	srv.Reset()
	srv.FailNext(2, openaitest.Fault{Status: 401})
	if _, _, err := d.Transcribe(context.Background(), "note.mp3", "audio/mpeg", audio); engram.ErrorCode(err) != engram.EUNAUTHORIZED {
		t.Errorf("with a bad key: %v, want EUNAUTHORIZED", err)
	}
	if _, _, err := d.Transcribe(context.Background(), "x", "audio/mpeg", nil); engram.ErrorCode(err) != engram.EINVALID {
		t.Errorf("empty audio: %v, want EINVALID", err)
	}
}
