package document

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/ledongthuc/pdf"

	"github.com/engramhq/engram"
)

// splitPDF splits a PDF page by page: each page's text, in the order the
// library reads it, is cut into paragraphs at blank lines and bounded in
// size; sections carry their page. The extracted text is the pages' text
// separated by blank lines. The library reads objects on demand through
// r, so the file is not loaded whole; it panics on some malformed files,
// which this turns into an EINVALID error.
func splitPDF(r io.ReaderAt, size int64, e *emitter) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = engram.Errorf(engram.EINVALID, "document: the PDF cannot be read: %v", p)
		}
	}()
	doc, err := pdf.NewReader(r, size)
	if err != nil {
		return engram.Errorf(engram.EINVALID, "document: the PDF cannot be read: %v", err)
	}
	pos, chars := 0, 0
	for i := 1; i <= doc.NumPage(); i++ {
		page := doc.Page(i)
		if page.V.IsNull() {
			continue
		}
		text, err := page.GetPlainText(nil)
		if err != nil {
			return engram.Errorf(engram.EINVALID, "document: page %d of the PDF cannot be read: %v", i, err)
		}
		text = strings.ToValidUTF8(text, "\uFFFD")
		e.page = i
		if err := pdfParagraphs(text, pos, chars, e); err != nil {
			return fmt.Errorf("page %d: %w", i, err)
		}
		pos += len(text) + 2
		chars += utf8.RuneCountInString(text) + 2
	}
	return nil
}

// pdfParagraphs emits the paragraphs (split at blank lines) of one page's
// text found at pos/chars of the extracted text.
func pdfParagraphs(text string, pos, chars int, e *emitter) error {
	for text != "" {
		end := strings.Index(text, "\n\n")
		if end < 0 {
			end = len(text)
		} else {
			end += 2
		}
		if err := e.block(text[:end], pos, chars); err != nil {
			return err
		}
		pos += end
		chars += utf8.RuneCountInString(text[:end])
		text = text[end:]
	}
	return nil
}
