package openai

import (
	"bytes"
	"context"
	"encoding/base64"
	"mime/multipart"
	"strings"

	"github.com/engramhq/engram"
)

// DefaultTranscriptionModel is the model a Describer transcribes with when
// none is given.
const DefaultTranscriptionModel = "whisper-1"

// CaptionPrompt is what a Describer asks the chat model about an image.
const CaptionPrompt = "Describe this image in two or three plain sentences for a person's memory: who or what is in it, what happens, any text that can be read. Answer in the language of any text in the image, else in English."

// Describer makes captions of images with a chat model that reads images
// (a /chat/completions request with an image content part holding the
// bytes as a base64 data URL) and transcripts of audio with a
// transcription model (multipart POST /audio/transcriptions). It
// implements engram.MediaDescriber and is safe for concurrent use.
type Describer struct {
	chat  client
	audio client
}

var _ engram.MediaDescriber = (*Describer)(nil)

// NewDescriber returns a Describer that sends captions to cfg.Model and
// transcriptions to transcriptionModel (DefaultTranscriptionModel when
// empty) on the same server; EINVALID when cfg is unusable. It makes no
// request.
func NewDescriber(cfg Config, transcriptionModel string) (*Describer, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	audio := cfg
	audio.Model = transcriptionModel
	if audio.Model == "" {
		audio.Model = DefaultTranscriptionModel
	}
	return &Describer{chat: client{cfg: cfg}, audio: client{cfg: audio}}, nil
}

type imagePart struct {
	Type     string    `json:"type"`
	Text     string    `json:"text,omitempty"`
	ImageURL *imageURL `json:"image_url,omitempty"`
}

type imageURL struct {
	URL string `json:"url"`
}

type visionRequest struct {
	Model     string          `json:"model"`
	Messages  []visionMessage `json:"messages"`
	MaxTokens int             `json:"max_tokens,omitempty"`
}

type visionMessage struct {
	Role    string      `json:"role"`
	Content []imagePart `json:"content"`
}

// Caption implements engram.MediaDescriber. It fails with EINVALID for an
// empty image or a MIME type that is not an image's, with EINTERNAL when
// the answer holds no text, and as the package comment describes for HTTP
// failures.
func (d *Describer) Caption(ctx context.Context, mimeType string, data []byte) (string, error) {
	if len(data) == 0 {
		return "", engram.Errorf(engram.EINVALID, "openai: caption: the image is empty")
	}
	if !strings.HasPrefix(mimeType, "image/") {
		return "", engram.Errorf(engram.EINVALID, "openai: caption: %q is not an image type", mimeType)
	}
	url := "data:" + mimeType + ";base64," + base64.StdEncoding.EncodeToString(data)
	req := visionRequest{Model: d.chat.cfg.Model, MaxTokens: 300, Messages: []visionMessage{{Role: "user", Content: []imagePart{
		{Type: "text", Text: CaptionPrompt},
		{Type: "image_url", ImageURL: &imageURL{URL: url}},
	}}}}
	var resp chatResponse
	if err := d.chat.post(ctx, "/chat/completions", req, &resp); err != nil {
		return "", err
	}
	if len(resp.Choices) == 0 || resp.Choices[0].Message.Content == nil || strings.TrimSpace(*resp.Choices[0].Message.Content) == "" {
		return "", engram.Errorf(engram.EINTERNAL, "openai: caption: the server's answer holds no text")
	}
	return strings.TrimSpace(*resp.Choices[0].Message.Content), nil
}

type transcriptionResponse struct {
	Text     string `json:"text"`
	Segments []struct {
		Start   float64 `json:"start"`
		End     float64 `json:"end"`
		Text    string  `json:"text"`
		Speaker string  `json:"speaker"`
	} `json:"segments"`
}

// Transcribe implements engram.MediaDescriber: it asks for verbose_json
// (text with timed segments) and, when the server refuses that format
// (models that only give text), for json. It fails with EINVALID for an
// empty file and as the package comment describes for HTTP failures.
func (d *Describer) Transcribe(ctx context.Context, name, mimeType string, data []byte) (string, []engram.TranscriptSegment, error) {
	if len(data) == 0 {
		return "", nil, engram.Errorf(engram.EINVALID, "openai: transcribe: the audio is empty")
	}
	resp, err := d.transcribe(ctx, name, data, "verbose_json")
	if engram.ErrorCode(err) == engram.EINVALID {
		resp, err = d.transcribe(ctx, name, data, "json")
	}
	if err != nil {
		return "", nil, err
	}
	var segs []engram.TranscriptSegment
	for _, s := range resp.Segments {
		if t := strings.TrimSpace(s.Text); t != "" {
			segs = append(segs, engram.TranscriptSegment{Start: s.Start, End: s.End, Speaker: s.Speaker, Text: t})
		}
	}
	return strings.TrimSpace(resp.Text), segs, nil
}

func (d *Describer) transcribe(ctx context.Context, name string, data []byte, format string) (*transcriptionResponse, error) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	if name == "" {
		name = "audio"
	}
	fw, err := mw.CreateFormFile("file", name)
	if err == nil {
		_, err = fw.Write(data)
	}
	for _, f := range [][2]string{{"model", d.audio.cfg.Model}, {"response_format", format}} {
		if err == nil {
			err = mw.WriteField(f[0], f[1])
		}
	}
	if err == nil {
		err = mw.Close()
	}
	if err != nil {
		return nil, engram.Errorf(engram.EINTERNAL, "openai: transcribe: build the request: %v", err)
	}
	var resp transcriptionResponse
	if err := d.audio.send(ctx, "/audio/transcriptions", mw.FormDataContentType(), body.Bytes(), &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}
