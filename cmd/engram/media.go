package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/engramhq/engram"
)

// mediaFlags are the media the TEXT episodes of engram add carry: --media
// ID[:KIND[:START-END]] adds an item (KIND image, audio or video; START and
// END in seconds), --caption and --transcript give the text of the item
// named last.
type mediaFlags struct {
	items []engram.Media
}

func (f *mediaFlags) register(fs *flag.FlagSet) {
	fs.Var(mediaItemFlag{f}, "media", "media the episodes carry: a resource `ID[:KIND[:START-END]]` (kind image, audio or video, else taken from the resource's MIME type; the span in seconds); repeatable")
	fs.Var(mediaTextFlag{f, "caption"}, "caption", "caption `text` of the --media named before it")
	fs.Var(mediaTextFlag{f, "transcript"}, "transcript", "transcript `text` of the --media named before it")
}

type mediaItemFlag struct{ f *mediaFlags }

func (m mediaItemFlag) String() string { return "" }

func (m mediaItemFlag) Set(s string) error {
	item, err := parseMedia(s)
	if err == nil {
		m.f.items = append(m.f.items, item)
	}
	return err
}

type mediaTextFlag struct {
	f    *mediaFlags
	name string
}

func (m mediaTextFlag) String() string { return "" }

func (m mediaTextFlag) Set(s string) error {
	if len(m.f.items) == 0 {
		return fmt.Errorf("--%s follows the --media it describes", m.name)
	}
	last := &m.f.items[len(m.f.items)-1]
	if m.name == "caption" {
		last.Caption = s
	} else {
		last.Transcript = s
	}
	return nil
}

// parseMedia reads ID[:KIND[:START-END]].
func parseMedia(s string) (engram.Media, error) {
	parts := strings.Split(s, ":")
	if len(parts) > 3 || parts[0] == "" {
		return engram.Media{}, fmt.Errorf("%q is not ID[:KIND[:START-END]]", s)
	}
	m := engram.Media{ResourceID: parts[0]}
	if len(parts) > 1 {
		m.Kind = engram.MediaKind(parts[1])
	}
	if len(parts) == 3 {
		a, b, ok := strings.Cut(parts[2], "-")
		start, err1 := strconv.ParseFloat(a, 64)
		end, err2 := strconv.ParseFloat(b, 64)
		if !ok || err1 != nil || err2 != nil {
			return engram.Media{}, fmt.Errorf("%q: the span %q is not START-END in seconds, like 12.5-30", s, parts[2])
		}
		m.Start, m.End = &start, &end
	}
	return m, nil
}

// resolveKinds gives each item without a kind the kind of its resource's
// MIME type (image/*, audio/*, video/*), read from svc in the scope of
// ns; EINVALID naming the item when the type is none of those, and the
// error of reading the resource, naming the item.
func resolveKinds(ctx context.Context, svc engram.ResourceService, ns engram.Namespace, items []engram.Media) error {
	for i := range items {
		if items[i].Kind != "" {
			continue
		}
		r, err := svc.GetResource(ctx, engram.ScopeOf(ns), items[i].ResourceID)
		if err != nil {
			return fmt.Errorf("--media %s: %w", items[i].ResourceID, err)
		}
		kind, _, _ := strings.Cut(r.MIMEType, "/")
		switch engram.MediaKind(kind) {
		case engram.MediaImage, engram.MediaAudio, engram.MediaVideo:
			items[i].Kind = engram.MediaKind(kind)
		default:
			return engram.Errorf(engram.EINVALID, "--media %s: the resource is %s, not an image, audio or video; give the kind (ID:image, ID:audio or ID:video)", items[i].ResourceID, r.MIMEType)
		}
	}
	return nil
}
