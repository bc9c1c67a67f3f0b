package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/engramhq/engram"
)

// MaxDescribeBytes is the largest resource sent to the model endpoint for
// a caption or a transcript (the size OpenAI's endpoints accept).
const MaxDescribeBytes = 25 << 20

// mediaPieceBytes is about the longest text of one memory made from a
// plain transcript or caption; longer ones are cut between sentences.
const mediaPieceBytes = 2000

// mediaKey names one media item: its episode and its position there.
type mediaKey struct {
	episode string
	index   int
}

// checkMediaResources returns EINVALID naming the field when a media item
// of eps refers to no resource visible in its episode's scope. It runs in
// the transaction that stores the episodes, so a resource cannot vanish
// in between.
func checkMediaResources(ctx context.Context, tx engram.Tx, eps []engram.Episode) error {
	for i := range eps {
		for j, m := range eps[i].Media {
			_, err := tx.GetResource(ctx, engram.ScopeOf(eps[i].Namespace), m.ResourceID)
			switch {
			case engram.ErrorCode(err) == engram.ENOTFOUND:
				return engram.Errorf(engram.EINVALID, "episodes[%d].media[%d].resource_id: there is no resource %s in the episode's scope; upload it first (POST /v1/resources)", i, j, m.ResourceID)
			case err != nil:
				return err
			}
		}
	}
	return nil
}

// undescribed returns the media of eps that have nothing to form memories
// from, each as the field that names it.
func undescribed(eps []engram.Episode) []string {
	var out []string
	for i := range eps {
		for j := range eps[i].Media {
			if m := &eps[i].Media[j]; m.NeedsDescription() {
				out = append(out, fmt.Sprintf("episodes[%d].media[%d] (%s %s)", i, j, m.Kind, m.ResourceID))
			}
		}
	}
	return out
}

// unformedNotes says, for an add that forms memories, which media stay
// without memories and why; nil when a describer will describe them in
// the add's background job or none needs it.
func (e *ingest) unformedNotes(eps []engram.Episode) []string {
	items := undescribed(eps)
	if len(items) == 0 || e.describer != nil {
		return nil
	}
	const why = "no caption or transcript came with it and no model endpoint is configured to make one (engram serve --llm-url); stored, not formed"
	for i := range items {
		items[i] += ": " + why
	}
	return items
}

// describeMedia asks the describer for a caption or a transcript of every
// media item of eps that came without, fills it in (in eps, not in the
// store: episodes are immutable) and returns which items it filled. A
// resource deleted since is skipped; the describer's error is returned,
// so that the job that called it records it and runs again later.
func (e *ingest) describeMedia(ctx context.Context, eps []engram.Episode) (map[mediaKey]bool, error) {
	if e.describer == nil {
		return nil, nil
	}
	gen := map[mediaKey]bool{}
	for i := range eps {
		for j := range eps[i].Media {
			m := &eps[i].Media[j]
			if !m.NeedsDescription() {
				continue
			}
			r, data, err := e.readMedia(ctx, eps[i].Namespace, m.ResourceID)
			switch {
			case engram.ErrorCode(err) == engram.ENOTFOUND:
				continue
			case err != nil:
				return nil, fmt.Errorf("episode %s media[%d]: %w", eps[i].ID, j, err)
			}
			if err := e.describe(ctx, m, r, data); err != nil {
				return nil, fmt.Errorf("episode %s media[%d] (resource %s): describe: %w", eps[i].ID, j, m.ResourceID, err)
			}
			gen[mediaKey{eps[i].ID, j}] = true
		}
	}
	return gen, nil
}

// describe fills m's caption (an image) or transcript (audio, video).
func (e *ingest) describe(ctx context.Context, m *engram.Media, r *engram.Resource, data []byte) error {
	if m.Kind == engram.MediaImage {
		c, err := e.describer.Caption(ctx, r.MIMEType, data)
		m.Caption = strings.TrimSpace(c)
		return err
	}
	text, segs, err := e.describer.Transcribe(ctx, r.Name, r.MIMEType, data)
	if err != nil {
		return err
	}
	m.Transcript, m.Segments = strings.TrimSpace(text), nil
	for _, s := range segs {
		if strings.TrimSpace(s.Text) != "" && s.Start >= 0 && s.Start < s.End {
			m.Segments = append(m.Segments, s)
		}
	}
	return nil
}

// readMedia returns a resource visible in ns's scope and its content;
// EINVALID when it is larger than MaxDescribeBytes.
func (e *ingest) readMedia(ctx context.Context, ns engram.Namespace, id string) (*engram.Resource, []byte, error) {
	r, body, err := e.media.OpenResource(ctx, engram.ScopeOf(ns), id)
	if err != nil {
		return nil, nil, err
	}
	defer body.Close()
	if r.Size > MaxDescribeBytes {
		return nil, nil, engram.Errorf(engram.EINVALID, "resource %s is %d bytes, more than the %d the model endpoint is sent", id, r.Size, MaxDescribeBytes)
	}
	data, err := io.ReadAll(body)
	return r, data, err
}

// mediaPart is one text of an episode's media that becomes memories: a
// caption, a piece of a plain transcript, or a transcript segment.
type mediaPart struct {
	ep      *engram.Episode
	text    string
	speaker string
	at      time.Time
	cite    engram.MediaCitation
}

// mediaParts lists the texts of eps' media; gen names the items whose
// text the model made.
func mediaParts(eps []engram.Episode, gen map[mediaKey]bool) []mediaPart {
	var out []mediaPart
	for i := range eps {
		ep := &eps[i]
		for j, m := range ep.Media {
			base := engram.MediaCitation{ResourceID: m.ResourceID, Kind: m.Kind, Episode: ep.ID, Index: j,
				Start: m.Start, End: m.End, Generated: gen[mediaKey{ep.ID, j}]}
			at := ep.OccurredAt
			if m.Start != nil {
				at = at.Add(seconds(*m.Start))
			}
			if m.Caption != "" {
				for _, t := range pieces(m.Caption) {
					c := base
					c.Part = "caption"
					out = append(out, mediaPart{ep: ep, text: t, speaker: ep.Speaker, at: at, cite: c})
				}
			}
			if len(m.Segments) > 0 {
				for k, s := range m.Segments {
					c := base
					c.Part, c.Segment, c.Start, c.End, c.Speaker = "segment", k, refOf(s.Start), refOf(s.End), s.Speaker
					speaker := s.Speaker
					if speaker == "" {
						speaker = ep.Speaker
					}
					out = append(out, mediaPart{ep: ep, text: s.Text, speaker: speaker, at: ep.OccurredAt.Add(seconds(s.Start)), cite: c})
				}
				continue // the plain transcript says the same again
			}
			for _, t := range pieces(m.Transcript) {
				c := base
				c.Part = "transcript"
				out = append(out, mediaPart{ep: ep, text: t, speaker: ep.Speaker, at: at, cite: c})
			}
		}
	}
	return out
}

// formMedia forms the captions and transcripts of eps' media into memories
// as the former forms text turns: each text becomes a turn of its own
// (with its speaker and time) that the former reads alone, without the
// scope's memories; the memories it adds cite the episode, and in their
// metadata the resource and the span. Other operations are left out: a
// transcript is not a request to change what the user said.
func (e *ingest) formMedia(ctx context.Context, eps []engram.Episode, gen map[mediaKey]bool) ([]engram.MemoryOp, error) {
	var out []engram.MemoryOp
	parts := mediaParts(eps, gen)
	for len(parts) > 0 {
		n := 1
		for n < len(parts) && parts[n].cite.Episode == parts[0].cite.Episode && parts[n].cite.Index == parts[0].cite.Index {
			n++
		}
		ops, err := e.formItem(ctx, parts[:n])
		if err != nil {
			return nil, err
		}
		out = append(out, ops...)
		parts = parts[n:]
	}
	return out, nil
}

// formItem forms the texts of one media item, alone, so that no memory
// takes another item's text as its context.
func (e *ingest) formItem(ctx context.Context, parts []mediaPart) ([]engram.MemoryOp, error) {
	turns := make([]engram.Episode, len(parts))
	byID := make(map[string]int, len(parts))
	for i, p := range parts {
		turns[i] = engram.Episode{ID: engram.NewID(), Namespace: p.ep.Namespace, Role: p.ep.Role, Speaker: p.speaker,
			Content: p.text, Modality: engram.ModalityText, OccurredAt: p.at, ReceivedAt: p.ep.ReceivedAt}
		byID[turns[i].ID] = i
	}
	ops, err := e.former.Form(ctx, engram.FormRequest{Episodes: turns})
	if err != nil {
		return nil, fmt.Errorf("form media memories: %w", err)
	}
	var out []engram.MemoryOp
	for _, op := range ops {
		if op.Op != engram.OpAdd {
			continue
		}
		first := -1
		var sources []string
		for _, s := range op.Memory.Sources {
			if k, ok := byID[s]; ok {
				if first < 0 {
					first = k
				}
				if id := parts[k].ep.ID; !slices.Contains(sources, id) {
					sources = append(sources, id)
				}
			} else if !slices.Contains(sources, s) {
				sources = append(sources, s)
			}
		}
		if first < 0 {
			continue
		}
		if err := citeMedia(&op.Memory, sources, parts[first].cite); err != nil {
			return nil, err
		}
		out = append(out, op)
	}
	return out, nil
}

// citeMedia points m at the episode and the media it was formed from.
func citeMedia(m *engram.Memory, sources []string, c engram.MediaCitation) error {
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	var meta map[string]any // as a store reads it back
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&meta); err != nil {
		return err
	}
	m.Sources = sources
	if m.Metadata == nil {
		m.Metadata = map[string]any{}
	}
	m.Metadata[engram.MetaResourceID] = c.ResourceID
	m.Metadata[engram.MetaMedia] = meta
	return nil
}

// pieces cuts text into pieces of about mediaPieceBytes between sentences
// (or, for one longer sentence, between characters).
func pieces(text string) []string {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil
	}
	var out []string
	var cur strings.Builder
	flush := func() {
		if s := strings.TrimSpace(cur.String()); s != "" {
			out = append(out, s)
		}
		cur.Reset()
	}
	for _, s := range sentences(text) {
		if cur.Len() > 0 && cur.Len()+len(s) > mediaPieceBytes {
			flush()
		}
		for len(s) > mediaPieceBytes {
			cut := clipBytes(s, mediaPieceBytes)
			cur.WriteString(cut)
			flush()
			s = s[len(cut):]
		}
		cur.WriteString(s)
	}
	flush()
	return out
}

// sentences splits text after each sentence end, keeping every byte.
func sentences(text string) []string {
	var out []string
	start := 0
	for i, r := range text {
		if strings.ContainsRune(".!?。！？\n", r) {
			end := i + utf8.RuneLen(r)
			out = append(out, text[start:end])
			start = end
		}
	}
	if start < len(text) {
		out = append(out, text[start:])
	}
	return out
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func refOf[T any](v T) *T { return &v }
