package engram

import (
	"context"
	"math"
	"strconv"
	"strings"
)

// An episode may carry media: images, audio and video the client stored
// as resources beforehand. engram runs no vision or speech model itself; a
// caption or a transcript comes with the media from the client, or from an
// OpenAI-compatible endpoint when one is configured (in the background job
// that forms the episode). Captions and transcripts are formed into
// memories of their own that cite the resource and the span (MediaCitation).

// MediaKind says what a media item is.
type MediaKind string

// Media kinds.
const (
	MediaImage MediaKind = "image"
	MediaAudio MediaKind = "audio"
	MediaVideo MediaKind = "video"
)

// Media is one image, audio or video an episode carries.
type Media struct {
	// ResourceID is the id of a stored resource of the same tenant,
	// visible in the episode's scope.
	ResourceID string    `json:"resource_id"`
	Kind       MediaKind `json:"kind"`
	// Start and End bound the part of an audio or video the episode is
	// about, in seconds from its beginning (0 <= Start < End); both or
	// neither, never for an image.
	Start *float64 `json:"start,omitempty"`
	End   *float64 `json:"end,omitempty"`
	// Caption describes an image or a video.
	Caption string `json:"caption,omitempty"`
	// Transcript is the plain text of what is said in an audio or video;
	// Segments the same with times and speakers. Either or both.
	Transcript string              `json:"transcript,omitempty"`
	Segments   []TranscriptSegment `json:"segments,omitempty"`
	// Embedding is the client's own vector of the media (any model, any
	// dimension); engram keeps it with the episode.
	Embedding []float32 `json:"embedding,omitempty"`
}

// TranscriptSegment is one stretch of speech, its times in seconds from the
// beginning of the media.
type TranscriptSegment struct {
	Start   float64 `json:"start"`
	End     float64 `json:"end"`
	Speaker string  `json:"speaker,omitempty"`
	Text    string  `json:"text"`
}

// Limits on an episode's media.
const (
	MaxMedia          = 16        // items in one episode
	MaxSegments       = 4096      // transcript segments of one item
	MaxMediaTextBytes = 256 << 10 // caption, transcript and segment texts of one item together
	MaxMediaDim       = 8192      // length of an item's embedding
)

// NeedsDescription says whether m has nothing to form memories from: an
// image or video without a caption, an audio or video without a transcript
// and, for a video, without either.
func (m *Media) NeedsDescription() bool {
	switch m.Kind {
	case MediaImage:
		return m.Caption == ""
	case MediaAudio:
		return m.Transcript == "" && len(m.Segments) == 0
	default:
		return m.Caption == "" && m.Transcript == "" && len(m.Segments) == 0
	}
}

// Validate checks m and returns an EINVALID error naming the bad field
// under field (e.g. "episode: media[0]"). It does not look the resource up.
func (m *Media) Validate(field string) error {
	if !ValidID(m.ResourceID) {
		return Errorf(EINVALID, "%s.resource_id %q is not a valid resource id", field, clipID(m.ResourceID))
	}
	switch m.Kind {
	case MediaImage, MediaAudio, MediaVideo:
	default:
		return Errorf(EINVALID, "%s.kind %q is not one of image, audio, video", field, clipID(string(m.Kind)))
	}
	if err := m.checkSpan(field); err != nil {
		return err
	}
	if m.Kind == MediaImage && (m.Transcript != "" || len(m.Segments) > 0) {
		return Errorf(EINVALID, "%s: an image has no transcript; give a caption", field)
	}
	if m.Kind == MediaAudio && m.Caption != "" {
		return Errorf(EINVALID, "%s: an audio has no caption; give a transcript", field)
	}
	if err := m.checkTexts(field); err != nil {
		return err
	}
	return m.checkEmbedding(field)
}

func (m *Media) checkSpan(field string) error {
	switch {
	case m.Start == nil && m.End == nil:
		return nil
	case m.Kind == MediaImage:
		return Errorf(EINVALID, "%s: an image has no time span; leave out start and end", field)
	case m.Start == nil || m.End == nil:
		return Errorf(EINVALID, "%s: a time span needs both start and end", field)
	}
	return checkSpan(field, *m.Start, *m.End)
}

func checkSpan(field string, start, end float64) error {
	if math.IsNaN(start) || math.IsInf(start, 0) || math.IsNaN(end) || math.IsInf(end, 0) {
		return Errorf(EINVALID, "%s: start and end must be finite numbers of seconds", field)
	}
	if start < 0 || start >= end {
		return Errorf(EINVALID, "%s: the time span %g to %g seconds is not 0 <= start < end", field, start, end)
	}
	return nil
}

func (m *Media) checkTexts(field string) error {
	if len(m.Segments) > MaxSegments {
		return Errorf(EINVALID, "%s.segments: %d segments, more than the limit of %d", field, len(m.Segments), MaxSegments)
	}
	total := len(m.Caption) + len(m.Transcript)
	if err := checkText(field+".caption", m.Caption, MaxMediaTextBytes); err != nil {
		return err
	}
	if err := checkText(field+".transcript", m.Transcript, MaxMediaTextBytes); err != nil {
		return err
	}
	for i, s := range m.Segments {
		f := field + ".segments[" + strconv.Itoa(i) + "]"
		if strings.TrimSpace(s.Text) == "" {
			return Errorf(EINVALID, "%s.text is required", f)
		}
		if err := checkText(f+".text", s.Text, MaxMediaTextBytes); err != nil {
			return err
		}
		if err := checkText(f+".speaker", s.Speaker, MaxShortBytes); err != nil {
			return err
		}
		if err := checkSpan(f, s.Start, s.End); err != nil {
			return err
		}
		total += len(s.Text) + len(s.Speaker)
	}
	if total > MaxMediaTextBytes {
		return Errorf(EINVALID, "%s: caption, transcript and segments are %d bytes together, more than the limit of %d", field, total, MaxMediaTextBytes)
	}
	return nil
}

func (m *Media) checkEmbedding(field string) error {
	if len(m.Embedding) > MaxMediaDim {
		return Errorf(EINVALID, "%s.embedding has %d dimensions, more than the limit of %d", field, len(m.Embedding), MaxMediaDim)
	}
	for _, v := range m.Embedding {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return Errorf(EINVALID, "%s.embedding holds a value that is not a finite number", field)
		}
	}
	return nil
}

func clipID(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// MediaCitation is where a memory formed from a caption or a transcript
// comes from; it is kept in the memory's metadata under MetaMedia, and the
// resource's id under MetaResourceID (so deleting the resource deletes the
// memory, and a filter on it finds the memory).
type MediaCitation struct {
	ResourceID string    `json:"resource_id"`
	Kind       MediaKind `json:"kind"`
	Episode    string    `json:"episode"` // the episode that carried the media
	Index      int       `json:"index"`   // the item's position in the episode's media
	Part       string    `json:"part"`    // "caption", "transcript" or "segment"
	Segment    int       `json:"segment,omitempty"`
	Start      *float64  `json:"start,omitempty"` // seconds: the segment's, else the item's span
	End        *float64  `json:"end,omitempty"`
	Speaker    string    `json:"speaker,omitempty"`
	// Generated says the text came from the configured model, not the client.
	Generated bool `json:"generated,omitempty"`
}

// MetaMedia is the metadata key of a memory's MediaCitation.
const MetaMedia = "media"

// MediaDescriber is what makes captions and transcripts of media a client
// sent without: an OpenAI-compatible multimodal endpoint in production, a
// fake in tests. Errors are returned as the endpoint gave them.
type MediaDescriber interface {
	// Caption describes an image of the given MIME type.
	Caption(ctx context.Context, mimeType string, data []byte) (string, error)
	// Transcribe returns what is said in an audio (or a video's sound
	// track) named name: the plain text and, when the endpoint gives them,
	// timed segments.
	Transcribe(ctx context.Context, name, mimeType string, data []byte) (string, []TranscriptSegment, error)
}
