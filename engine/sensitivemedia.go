package engine

import (
	"fmt"
	"slices"

	"github.com/engramhq/engram"
)

// The captions and transcripts a client sends with an episode's media are
// what was seen or said as much as its content: formation makes memories
// of them. They are scanned and treated with the episode's other texts,
// after its content and speaker and before its metadata, each named by
// its path ("media[0].caption", "media[1].segments[2].text").

// mediaFields replaces ep.Media by a copy (its segments copied, so the
// caller's stay as given) and returns a field for each caption,
// transcript, and segment's speaker and text in it.
func mediaFields(ep *engram.Episode) []recordField {
	if len(ep.Media) == 0 {
		return nil
	}
	ep.Media = slices.Clone(ep.Media)
	var fs []recordField
	for j := range ep.Media {
		m := &ep.Media[j]
		fs = append(fs, recordField{fmt.Sprintf("media[%d].caption", j), &m.Caption},
			recordField{fmt.Sprintf("media[%d].transcript", j), &m.Transcript})
		m.Segments = slices.Clone(m.Segments)
		for k := range m.Segments {
			sg := &m.Segments[k]
			fs = append(fs, recordField{fmt.Sprintf("media[%d].segments[%d].speaker", j, k), &sg.Speaker},
				recordField{fmt.Sprintf("media[%d].segments[%d].text", j, k), &sg.Text})
		}
	}
	return fs
}

// episodeRecord is the record of episode ep's texts: its content, speaker,
// media's captions and transcripts, and metadata's string values (the
// media and metadata are copied, so a caller's stay as given).
func episodeRecord(ep *engram.Episode) record {
	rec := record{id: ep.ID, ns: ep.Namespace, sources: []string{ep.ID},
		fields: append([]recordField{{"content", &ep.Content}, {"speaker", &ep.Speaker}}, mediaFields(ep)...)}
	return rec.withMeta(&ep.Metadata)
}

// episodeTexts returns the texts of ep a write treats, in its record's
// order.
func episodeTexts(ep engram.Episode) []string {
	rec := episodeRecord(&ep)
	out := make([]string, len(rec.fields))
	for i, f := range rec.fields {
		out[i] = *f.text
	}
	return out
}
