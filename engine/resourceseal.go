package engine

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime"
	"slices"
	"strings"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/document"
	"github.com/engramhq/engram/sensitive"
)

// An uploaded resource whose content is text is treated as it arrives,
// before any of it is stored: its findings are replaced by placeholders
// (their spans sealed into the vault under the resource) as its tenant's
// policy says, so the stored bytes, a download, an export and the
// memories of its sections, whose citations are offsets into the stored
// text, hold the placeholders only. Binary content (a PDF, an image) is
// stored as uploaded: its bytes cannot be scanned as text.

const (
	// treatPiece is about how much text is treated at once; a piece ends
	// at a line end where it can.
	treatPiece = 1 << 20
	// treatReach is how far around a piece's end findings are looked
	// for, so that one is never cut in two (a PEM key spans lines).
	treatReach = 64 << 10
)

// textual reports whether content of this media type and name is text
// to scan: the document formats but PDF, any text/ type, JSON, XML,
// YAML and TOML.
func textual(mimeType, name string) bool {
	switch document.Format(mimeType, name) {
	case document.FormatPDF:
		return false
	case "":
	default:
		return true
	}
	mt, _, err := mime.ParseMediaType(mimeType)
	if err != nil {
		mt = strings.ToLower(strings.TrimSpace(mimeType))
	}
	switch {
	case strings.HasPrefix(mt, "text/"), strings.HasSuffix(mt, "+json"), strings.HasSuffix(mt, "+xml"):
		return true
	}
	return slices.Contains([]string{"application/json", "application/x-ndjson", "application/xml",
		"application/yaml", "application/x-yaml", "application/toml", "application/javascript"}, mt)
}

// contentTreatment treats the findings of one upload's content as it is
// read through it.
type contentTreatment struct {
	w    *treatWrite
	r    *engram.Resource
	src  io.Reader
	seed map[string]seedSpan // spans placed so far, with their placeholders
	// piece and reach are treatPiece and treatReach but in tests.
	piece, reach int
	in           []byte // read from src, not yet treated
	out          []byte // treated, not yet read
	eof          bool
	err          error
}

// treatContent returns the reader of body's content as it is to be stored
// for resource r: treated when it is text, as it is otherwise.
func (e *media) treatContent(ctx context.Context, r *engram.Resource, body io.Reader) *contentTreatment {
	t := &contentTreatment{r: r, src: body, piece: treatPiece, reach: treatReach}
	if textual(r.MIMEType, r.Name) {
		t.w = e.redact.write(ctx, r.Namespace)
	}
	return t
}

// Read implements io.Reader; it fails with the upload's read error or the
// error of reading the tenant's policy.
func (t *contentTreatment) Read(p []byte) (int, error) {
	if t.w == nil {
		return t.src.Read(p)
	}
	for len(t.out) == 0 {
		if t.err != nil {
			return 0, t.err
		}
		if t.eof && len(t.in) == 0 {
			return 0, io.EOF
		}
		t.err = t.next()
	}
	n := copy(p, t.out)
	t.out = t.out[n:]
	return n, nil
}

// next treats the next piece of the content into t.out.
func (t *contentTreatment) next() error {
	if err := t.fill(); err != nil {
		return err
	}
	cut := t.cut()
	text := string(t.in[:cut])
	t.in = append(t.in[:0:0], t.in[cut:]...)
	rec := record{id: t.r.ID, ns: t.r.Namespace, sources: []string{t.r.ID}, seed: t.seed,
		fields: []recordField{{"content", &text}}, what: "resource " + t.r.Name}
	placed, err := t.w.treat(rec)
	if err != nil {
		return err
	}
	if placed != nil {
		t.seed = placed
	}
	t.out = []byte(text)
	return nil
}

// fill reads the upload until t.in holds a piece and its reach, or all.
func (t *contentTreatment) fill() error {
	buf := make([]byte, 64<<10)
	for !t.eof && len(t.in) < t.piece+t.reach {
		n, err := t.src.Read(buf)
		t.in = append(t.in, buf[:n]...)
		switch {
		case errors.Is(err, io.EOF):
			t.eof = true
		case err != nil:
			return err
		}
	}
	return nil
}

// cut returns where the next piece of t.in ends: all of it at the end of
// the upload; else after the last line end within treatPiece (or the last
// space, or a character boundary, in text with long lines), moved past a
// finding it would split.
func (t *contentTreatment) cut() int {
	if t.eof {
		return len(t.in)
	}
	head := t.in[:t.piece]
	i := bytes.LastIndexByte(head, '\n') + 1
	if i < t.piece/2 {
		i = bytes.LastIndexAny(head, " \t\r") + 1
	}
	if i < t.piece/2 {
		i = backToRune(t.in, t.piece)
	}
	lo := backToRune(t.in, i-t.reach)
	for _, f := range t.w.s.detector(string(t.in[lo:])) {
		if s, e := lo+f.Start, lo+f.End; s < i && i < e {
			i = e
		}
	}
	return i
}

// backToRune returns i, or the start of the character of b it falls in.
func backToRune(b []byte, i int) int {
	i = max(i, 0)
	for i > 0 && i < len(b) && b[i]&0xC0 == 0x80 {
		i--
	}
	return i
}

// done returns what treating the content did, and prepares the vault for
// the spans to seal; nothing for content that is not text. It fails with
// the vault's error.
func (t *contentTreatment) done(ctx context.Context, e *media) (*treated, error) {
	if t.w == nil {
		return &treated{}, nil
	}
	sc := t.w.done()
	return sc, e.prepareVault(ctx, t.r.Namespace, sc.seals)
}

// merge adds what o treated to sc.
func (sc *treated) merge(o *treated) {
	sc.seals = append(sc.seals, o.seals...)
	for _, c := range o.counts {
		for range c.Count {
			sc.count(sensitive.Kind(c.Kind), c.Treatment, orTreatment(c.Requested, c.Treatment))
		}
	}
	for _, id := range o.ids {
		if !slices.Contains(sc.ids, id) {
			sc.ids = append(sc.ids, id)
		}
	}
}

// purgeResourceSeals purges in tx the vault memories of the spans sealed
// from resource r's content (they list r as their source).
func purgeResourceSeals(ctx context.Context, tx engram.Tx, vb *vecBatch, r *engram.Resource) error {
	ms, err := quoting(ctx, tx, engram.ScopeOf(r.Namespace), r.ID)
	if err != nil {
		return err
	}
	for i := range ms {
		if ms[i].Kind != engram.KindVault {
			continue
		}
		if err := tx.PurgeMemory(ctx, ms[i].Namespace, ms[i].ID); err != nil {
			return err
		}
		vb.Purged(ms[i].Namespace, ms[i].ID)
	}
	return nil
}
