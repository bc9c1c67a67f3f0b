package document

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/engramhq/engram"
)

// maxLineBytes bounds the line the text splitter holds: a longer line is
// handed on in pieces, so a file without line breaks is still streamed.
const maxLineBytes = 64 << 10

// lineReader reads lines (with their line break) of at most maxLineBytes,
// counting the bytes and characters it has read.
type lineReader struct {
	r          *bufio.Reader
	pos, chars int
	line       strings.Builder
	startPos   int
	startChars int
}

// next returns the next line and whether it ended with a line break (or
// the end); io.EOF after the last; EINVALID for bytes that are not UTF-8.
func (l *lineReader) next() (string, error) {
	l.line.Reset()
	l.startPos, l.startChars = l.pos, l.chars
	for l.line.Len() < maxLineBytes {
		r, size, err := l.r.ReadRune()
		if errors.Is(err, io.EOF) {
			if l.line.Len() == 0 {
				return "", io.EOF
			}
			return l.line.String(), nil
		} else if err != nil {
			return "", err
		}
		if r == utf8.RuneError && size == 1 {
			return "", engram.Errorf(engram.EINVALID, "document: byte %d is not valid UTF-8; text documents must be UTF-8", l.pos)
		}
		l.line.WriteRune(r)
		l.pos += size
		l.chars++
		if r == '\n' {
			break
		}
	}
	return l.line.String(), nil
}

// paragraph accumulates lines until a blank line or a heading ends it.
type paragraph struct {
	buf          strings.Builder
	start, chars int
	lines        int
}

func (p *paragraph) add(line string, start, chars int) {
	if p.buf.Len() == 0 {
		p.start, p.chars = start, chars
	}
	p.buf.WriteString(line)
	p.lines++
}

func (p *paragraph) flush(e *emitter) error {
	if p.buf.Len() == 0 {
		return nil
	}
	err := e.block(p.buf.String(), p.start, p.chars)
	p.buf.Reset()
	p.lines = 0
	return err
}

// splitText splits plain text at blank lines; with markdown it also reads
// ATX and setext headings into the heading path and keeps fenced code
// blocks whole (up to the size bound).
func splitText(r io.Reader, e *emitter, markdown bool) error {
	lr := &lineReader{r: bufio.NewReaderSize(r, 64<<10)}
	var p paragraph
	fence := ""
	for {
		line, err := lr.next()
		if errors.Is(err, io.EOF) {
			return p.flush(e)
		} else if err != nil {
			return readErr("text", err)
		}
		trimmed := strings.TrimSpace(line)
		switch {
		case markdown && fence != "":
			p.add(line, lr.startPos, lr.startChars)
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
				err = p.flush(e)
			}
		case markdown && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")):
			if err = p.flush(e); err == nil {
				fence = trimmed[:3]
				p.add(line, lr.startPos, lr.startChars)
			}
		case trimmed == "":
			err = p.flush(e)
		case markdown && atxLevel(line) > 0:
			if err = p.flush(e); err == nil {
				e.heading(atxLevel(line), strings.Trim(strings.TrimLeft(trimmed, "#"), " #"))
			}
		case markdown && p.lines == 1 && setext(trimmed) > 0:
			e.heading(setext(trimmed), p.buf.String())
			p.buf.Reset()
			p.lines = 0
		default:
			p.add(line, lr.startPos, lr.startChars)
			if p.buf.Len() >= maxLineBytes {
				err = p.flush(e)
			}
		}
		if err != nil {
			return err
		}
	}
}

// atxLevel returns the level of a Markdown "# heading" line, or 0.
func atxLevel(line string) int {
	s := strings.TrimLeft(line, " ")
	if len(line)-len(s) > 3 {
		return 0
	}
	n := 0
	for n < len(s) && s[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || (n < len(s) && s[n] != ' ' && s[n] != '\t' && s[n] != '\n' && s[n] != '\r') {
		return 0
	}
	return n
}

// setext returns 1 for a "===" underline, 2 for a "---" one, else 0.
func setext(trimmed string) int {
	switch {
	case trimmed != "" && strings.Trim(trimmed, "=") == "":
		return 1
	case len(trimmed) >= 2 && strings.Trim(trimmed, "-") == "":
		return 2
	}
	return 0
}
