package document

import (
	"context"
	"fmt"
	"io"
	"mime"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/engramhq/engram"
)

// MaxSectionBytes bounds the text of one section.
const MaxSectionBytes = 2000

// maxHeadingBytes bounds one heading of a heading path.
const maxHeadingBytes = 200

// Section is one piece of a document. Start and End are byte offsets of
// the span in the extracted text, CharStart and CharEnd the same span in
// characters. For plain text and Markdown the extracted text is the file
// itself, so the span is the section's place in the file; for HTML it is
// the text between the tags, entities decoded; for a PDF it is the pages'
// text in order, separated by blank lines.
type Section struct {
	Text               string
	Start, End         int
	CharStart, CharEnd int
	Page               int      // 1-based page of a PDF; 0 otherwise
	Headings           []string // heading path, outermost first
}

// Formats a document can have.
const (
	FormatText     = "text"
	FormatMarkdown = "markdown"
	FormatHTML     = "html"
	FormatPDF      = "pdf"
)

// Format returns the document format of a file with this MIME type and
// name, or "" when it is not a document this package splits.
func Format(mimeType, name string) string {
	mt, _, err := mime.ParseMediaType(mimeType)
	if err != nil {
		mt = strings.ToLower(mimeType)
	}
	switch mt {
	case "text/markdown", "text/x-markdown":
		return FormatMarkdown
	case "text/html", "application/xhtml+xml":
		return FormatHTML
	case "application/pdf":
		return FormatPDF
	case "text/plain":
		switch strings.ToLower(path.Ext(name)) {
		case ".md", ".markdown":
			return FormatMarkdown
		}
		return FormatText
	}
	return ""
}

// Split reads the document of the given format from r (size bytes) and
// calls fn for each section in document order. It returns an EINVALID
// error naming the format when the document cannot be read (a PDF that is
// not one, text that is not UTF-8), and the first error of fn as is.
func Split(ctx context.Context, format string, r io.ReaderAt, size int64, fn func(Section) error) error {
	e := &emitter{ctx: ctx, fn: fn}
	var err error
	switch format {
	case FormatText:
		err = splitText(io.NewSectionReader(r, 0, size), e, false)
	case FormatMarkdown:
		err = splitText(io.NewSectionReader(r, 0, size), e, true)
	case FormatHTML:
		err = splitHTML(io.NewSectionReader(r, 0, size), e)
	case FormatPDF:
		err = splitPDF(r, size, e)
	default:
		return engram.Errorf(engram.EINVALID, "document: format %q is not one of text, markdown, html, pdf", format)
	}
	return err
}

// emitter receives blocks of text with their offsets, bounds their size
// and hands them on as sections.
type emitter struct {
	ctx      context.Context
	fn       func(Section) error
	headings []string
	page     int
}

// heading sets the heading of level (1 outermost) in the heading path.
func (e *emitter) heading(level int, text string) {
	text = clip(collapse(text), maxHeadingBytes)
	if text == "" {
		return
	}
	if level < 1 {
		level = 1
	}
	for len(e.headings) < level-1 {
		e.headings = append(e.headings, "")
	}
	e.headings = append(e.headings[:level-1], text)
}

// block emits text found at byte offset start and character offset
// charStart of the extracted text, cut into pieces of at most
// MaxSectionBytes; blank text emits nothing.
func (e *emitter) block(text string, start, charStart int) error {
	if err := e.ctx.Err(); err != nil {
		return err
	}
	if !utf8.ValidString(text) {
		return engram.Errorf(engram.EINVALID, "document: the text at byte %d is not valid UTF-8", start)
	}
	for len(text) > 0 {
		n := cut(text, MaxSectionBytes)
		piece := text[:n]
		chars := utf8.RuneCountInString(piece)
		if trimmed := strings.TrimSpace(piece); trimmed != "" {
			lead := len(piece) - len(strings.TrimLeftFunc(piece, unicode.IsSpace))
			leadChars := utf8.RuneCountInString(piece[:lead])
			s := Section{
				Text: trimmed, Start: start + lead, End: start + lead + len(trimmed),
				CharStart: charStart + leadChars, CharEnd: charStart + leadChars + utf8.RuneCountInString(trimmed),
				Page: e.page, Headings: nonEmpty(e.headings),
			}
			if err := e.fn(s); err != nil {
				return err
			}
		}
		text, start, charStart = text[n:], start+n, charStart+chars
	}
	return nil
}

// cut returns where to end a piece of text of at most max bytes: after the
// last sentence end, else the last space, else the last whole character.
func cut(text string, max int) int {
	if len(text) <= max {
		return len(text)
	}
	head := text[:max]
	for !utf8.ValidString(head) {
		head = head[:len(head)-1]
	}
	best := -1
	for i, r := range head {
		if i < max/2 {
			continue
		}
		switch r {
		case '.', '!', '?', '。', '！', '？', '\n':
			best = i + utf8.RuneLen(r)
		}
	}
	if best > 0 {
		return best
	}
	if i := strings.LastIndexFunc(head, unicode.IsSpace); i >= max/2 {
		return i + 1
	}
	return len(head)
}

func nonEmpty(hs []string) []string {
	var out []string
	for _, h := range hs {
		if h != "" {
			out = append(out, h)
		}
	}
	return out
}

// collapse joins the words of s with single spaces.
func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

// clip cuts s to at most max bytes on a character boundary.
func clip(s string, max int) string {
	if len(s) <= max {
		return s
	}
	s = s[:max]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}

func readErr(format string, err error) error {
	if engram.ErrorCode(err) != "" && engram.ErrorCode(err) != engram.EINTERNAL {
		return err
	}
	return fmt.Errorf("document: read %s: %w", format, err)
}
