package document

import (
	"bufio"
	"errors"
	"html"
	"io"
	"strings"
	"unicode/utf8"
)

// maxTagBytes bounds a tag, comment or declaration the HTML splitter
// reads; a longer one is skipped to its end without being held.
const maxTagBytes = 64 << 10

// blockTags end the paragraph before and after them.
var blockTags = map[string]bool{
	"p": true, "div": true, "li": true, "ul": true, "ol": true, "br": true, "tr": true, "td": true, "th": true,
	"table": true, "section": true, "article": true, "header": true, "footer": true, "nav": true, "aside": true,
	"blockquote": true, "pre": true, "hr": true, "dd": true, "dt": true, "dl": true, "main": true, "figure": true,
	"figcaption": true, "body": true, "html": true, "head": true, "form": true, "caption": true,
}

// rawTags hold text that is not part of the document.
var rawTags = map[string]bool{"script": true, "style": true, "noscript": true, "template": true, "title": true, "svg": true}

// htmlSplitter is a small tokenizer: text between tags, tags by name,
// comments and the contents of rawTags skipped, entities decoded.
type htmlSplitter struct {
	r          *bufio.Reader
	e          *emitter
	text       strings.Builder // raw text of the current block
	level      int             // heading level being read, 0 outside a heading
	pos, chars int             // offsets in the extracted text
}

// splitHTML splits HTML into one section per block element's text, with
// h1 to h6 giving the heading path. The extracted text is the blocks'
// text, whitespace collapsed, separated by blank lines.
func splitHTML(r io.Reader, e *emitter) error {
	h := &htmlSplitter{r: bufio.NewReaderSize(r, 64<<10), e: e}
	for {
		c, err := h.r.ReadByte()
		if errors.Is(err, io.EOF) {
			return h.flush()
		} else if err != nil {
			return readErr("html", err)
		}
		if c != '<' {
			h.text.WriteByte(c)
			if h.text.Len() >= maxLineBytes && h.level == 0 && c == ' ' {
				if err := h.flush(); err != nil {
					return err
				}
			}
			continue
		}
		if err := h.markup(); err != nil {
			return err
		}
	}
}

// markup reads what follows a '<' and acts on it.
func (h *htmlSplitter) markup() error {
	next, err := h.r.Peek(1)
	if err != nil || !(next[0] == '/' || next[0] == '!' || next[0] == '?' || isLetter(next[0])) {
		h.text.WriteByte('<') // a lone '<' is text
		return nil
	}
	if b, _ := h.r.Peek(3); string(b) == "!--" {
		return h.skipUntil("-->")
	}
	tag, err := h.readTag()
	if err != nil {
		return err
	}
	name, closing := tagName(tag)
	switch {
	case rawTags[name] && !closing && !strings.HasSuffix(tag, "/"):
		return h.skipUntil("</" + name)
	case len(name) == 2 && name[0] == 'h' && name[1] >= '1' && name[1] <= '6':
		return h.headingTag(int(name[1]-'0'), closing)
	case blockTags[name]:
		if h.level > 0 {
			h.text.WriteByte(' ')
			return nil
		}
		return h.flush()
	}
	return nil
}

func (h *htmlSplitter) headingTag(level int, closing bool) error {
	if !closing {
		if err := h.flush(); err != nil {
			return err
		}
		h.level = level
		return nil
	}
	h.e.heading(h.level, html.UnescapeString(h.text.String()))
	h.text.Reset()
	h.level = 0
	return nil
}

// readTag reads up to the '>' that ends a tag, outside quotes.
func (h *htmlSplitter) readTag() (string, error) {
	var b strings.Builder
	quote := byte(0)
	for {
		c, err := h.r.ReadByte()
		if err != nil {
			return b.String(), nil // a tag cut by the end is dropped
		}
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote == 0 && (c == '"' || c == '\''):
			quote = c
		case quote == 0 && c == '>':
			return b.String(), nil
		}
		if b.Len() < maxTagBytes {
			b.WriteByte(c)
		}
	}
}

// skipUntil discards input up to and including end (case-insensitively),
// then to the next '>' when end opens a closing tag.
func (h *htmlSplitter) skipUntil(end string) error {
	matched := 0
	for matched < len(end) {
		c, err := h.r.ReadByte()
		if err != nil {
			return nil
		}
		switch {
		case lower(c) == end[matched]:
			matched++
		case lower(c) == end[0]:
			matched = 1
		default:
			matched = 0
		}
	}
	if strings.HasPrefix(end, "</") {
		_, err := h.r.ReadString('>')
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
	}
	return nil
}

// flush emits the current block's text.
func (h *htmlSplitter) flush() error {
	text := collapse(strings.ToValidUTF8(html.UnescapeString(h.text.String()), "\uFFFD"))
	h.text.Reset()
	if text == "" {
		return nil
	}
	if err := h.e.block(text, h.pos, h.chars); err != nil {
		return err
	}
	h.pos += len(text) + 2
	h.chars += utf8.RuneCountInString(text) + 2
	return nil
}

// tagName returns the lower-case name of a tag's text ("p class=x" → "p")
// and whether it closes ("/p").
func tagName(tag string) (string, bool) {
	closing := strings.HasPrefix(tag, "/")
	tag = strings.TrimPrefix(tag, "/")
	end := strings.IndexAny(tag, " \t\r\n/")
	if end >= 0 {
		tag = tag[:end]
	}
	return strings.ToLower(tag), closing
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
