// Package document splits documents (plain text, Markdown, HTML and PDF)
// into sections by their structure: headings give each section its heading
// path, paragraphs become sections, and a paragraph longer than
// MaxSectionBytes is cut at sentence or word boundaries. Each section
// carries its span in the document's extracted text, in bytes and in
// characters, and its page for a PDF. The engine turns sections into
// memories of kind resource. Documents are read as a stream (an
// io.ReaderAt for PDF, which needs random access), never loaded whole.
package document
