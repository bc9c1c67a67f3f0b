package engram

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Modality says what an episode's content is.
type Modality string

// Modalities. An episode about an image, audio or video carries the file
// as Media (a stored resource with its caption or transcript); Content says
// what happened.
const (
	ModalityText  Modality = "text"
	ModalityImage Modality = "image"
	ModalityAudio Modality = "audio"
	ModalityEvent Modality = "event"
)

// Episode is the lossless raw record of something said or done: a message or
// an event. Episodes are immutable; they can only be deleted.
type Episode struct {
	ID         string         `json:"id"`
	Namespace  Namespace      `json:"namespace"`
	Role       string         `json:"role,omitempty"`    // one of Roles, or empty
	Speaker    string         `json:"speaker,omitempty"` // a person's or agent's name
	Content    string         `json:"content"`
	Modality   Modality       `json:"modality,omitempty"`
	OccurredAt time.Time      `json:"occurred_at"` // event time: given by the client, else ReceivedAt
	ReceivedAt time.Time      `json:"received_at"` // transaction time
	Metadata   map[string]any `json:"metadata,omitempty"`
	// Media lists the images, audio and video the episode carries (see
	// Media); Content still says what happened, e.g. "sent a photo".
	Media []Media `json:"media,omitempty"`
}

// Roles are the roles an episode may carry: who spoke or what happened.
// A new write with any other role is refused (CheckRole); an import keeps
// the roles an older export carries.
var Roles = []string{"user", "assistant", "system", "tool", "event"}

// CheckRole returns an EINVALID error naming field when role is neither
// empty nor one of Roles. Case matters: "User" is refused.
func CheckRole(field, role string) error {
	if role == "" || slices.Contains(Roles, role) {
		return nil
	}
	return Errorf(EINVALID, "%s %q is not one of %s", field, role, strings.Join(Roles, ", "))
}

// Limits on what one request may carry.
const (
	MaxContentBytes  = 64 << 10 // one episode's content or one memory's value
	MaxShortBytes    = 1 << 10  // abstraction, one cue, role, speaker, reason
	MaxCues          = 64
	MaxSources       = 256
	MaxMetadataBytes = 16 << 10
	// MaxMetadataDepth is how deep objects and arrays may nest in
	// metadata, the map itself being level 1; both stores' JSON functions
	// and every client can read that much.
	MaxMetadataDepth = 32
	MaxBatch         = 1000 // episodes or memories in one request
)

// Validate returns an EINVALID error naming the first bad field. It checks
// the namespace too.
func (e *Episode) Validate() error {
	if err := e.Namespace.Validate(); err != nil {
		return err
	}
	if e.ID != "" && !ValidID(e.ID) {
		return Errorf(EINVALID, "episode: id %q is not a valid id", e.ID)
	}
	if e.Content == "" {
		return Errorf(EINVALID, "episode: content is required")
	}
	if err := checkText("episode: content", e.Content, MaxContentBytes); err != nil {
		return err
	}
	if err := checkText("episode: role", e.Role, MaxShortBytes); err != nil {
		return err
	}
	if err := checkText("episode: speaker", e.Speaker, MaxShortBytes); err != nil {
		return err
	}
	switch e.Modality {
	case "", ModalityText, ModalityImage, ModalityAudio, ModalityEvent:
	default:
		return Errorf(EINVALID, "episode: modality %q is not one of text, image, audio, event", e.Modality)
	}
	if err := checkTime("episode: occurred_at", e.OccurredAt); err != nil {
		return err
	}
	if err := checkMedia(e.Media); err != nil {
		return err
	}
	return checkMetadata("episode", e.Metadata)
}

// CheckText returns an EINVALID error naming field when v is longer than
// max bytes, is not valid UTF-8 or holds a NUL character: the checks
// every text a request carries gets.
func CheckText(field, v string, max int) error { return checkText(field, v, max) }

func checkText(field, v string, max int) error {
	if len(v) > max {
		return Errorf(EINVALID, "%s is %d bytes, longer than the limit of %d", field, len(v), max)
	}
	if !utf8.ValidString(v) {
		return Errorf(EINVALID, "%s is not valid UTF-8", field)
	}
	if strings.IndexByte(v, 0) >= 0 {
		return Errorf(EINVALID, "%s contains a NUL character", field)
	}
	return nil
}

// Times outside these years are almost certainly unit mistakes (seconds
// read as milliseconds) and would not survive every backend's time type.
var (
	minTime = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)
	maxTime = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)
)

func checkTime(field string, t time.Time) error {
	if t.IsZero() {
		return nil
	}
	if t.Before(minTime) || t.After(maxTime) {
		return Errorf(EINVALID, "%s %s is outside the years 0001 to 9999", field, t.Format(time.RFC3339))
	}
	return nil
}

func checkMetadata(what string, m map[string]any) error {
	if m == nil {
		return nil
	}
	if d := depth(m, MaxMetadataDepth+1); d > MaxMetadataDepth {
		return Errorf(EINVALID, "%s: metadata is nested more than %d levels deep (objects and arrays), the limit", what, MaxMetadataDepth)
	}
	b, err := json.Marshal(m)
	if err != nil {
		return Errorf(EINVALID, "%s: metadata is not representable as JSON: %v", what, err)
	}
	if len(b) > MaxMetadataBytes {
		return Errorf(EINVALID, "%s: metadata is %d bytes of JSON, longer than the limit of %d", what, len(b), MaxMetadataBytes)
	}
	return nil
}

func checkMedia(ms []Media) error {
	if len(ms) > MaxMedia {
		return Errorf(EINVALID, "episode: media has %d items, more than the limit of %d", len(ms), MaxMedia)
	}
	for i := range ms {
		if err := ms[i].Validate("episode: media[" + strconv.Itoa(i) + "]"); err != nil {
			return err
		}
	}
	return nil
}

// depth returns how deep objects and arrays nest in v (a scalar is 0, an
// empty object 1), counting no further than limit.
func depth(v any, limit int) int {
	if limit <= 0 {
		return 0
	}
	deepest := 0
	switch v := v.(type) {
	case map[string]any:
		for _, e := range v {
			if deepest = max(deepest, depth(e, limit-1)); deepest >= limit-1 {
				break
			}
		}
	case []any:
		for _, e := range v {
			if deepest = max(deepest, depth(e, limit-1)); deepest >= limit-1 {
				break
			}
		}
	default:
		return 0
	}
	return deepest + 1
}

// EpisodeDeleteResult says what deleting an episode did to the memories
// that quote it: those whose only source it was are purged with it; those
// with other sources are formed again without it (its turn taken out of
// their text, the rest derived anew) and no longer name it as a source.
type EpisodeDeleteResult struct {
	Episode  string   `json:"episode"`
	Removed  []string `json:"removed"`
	Reformed []string `json:"reformed"`
}
