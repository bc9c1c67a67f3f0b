package document_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/go-pdf/fpdf"

	"github.com/engramhq/engram/document"
)

func split(t *testing.T, format string, data []byte) []document.Section {
	t.Helper()
	var out []document.Section
	err := document.Split(context.Background(), format, bytes.NewReader(data), int64(len(data)), func(s document.Section) error {
		out = append(out, s)
		return nil
	})
	if err != nil {
		t.Fatalf("split %s: %v", format, err)
	}
	return out
}

// checkSpans checks that each section's byte span holds its text in the
// extracted text when that is the file itself.
func checkSpans(t *testing.T, data []byte, ss []document.Section) {
	t.Helper()
	for _, s := range ss {
		if got := string(data[s.Start:s.End]); got != s.Text {
			t.Errorf("span [%d,%d) holds %q, want %q", s.Start, s.End, got, s.Text)
		}
		if got := []rune(string(data)); string(got[s.CharStart:s.CharEnd]) != s.Text {
			t.Errorf("char span [%d,%d) holds %q, want %q", s.CharStart, s.CharEnd, string(got[s.CharStart:s.CharEnd]), s.Text)
		}
	}
}

func TestSplitMarkdown(t *testing.T) {
	md := "# Handbuch\n\nEinleitung über Größen.\n\n## Kapitel 2\n\nDer Fluß fließt.\nZweite Zeile.\n\n第二章\n===\n\n长江是中国最长的河流。\n\n```\ncode\n\nstill code\n```\n"
	ss := split(t, document.FormatMarkdown, []byte(md))
	checkSpans(t, []byte(md), ss)
	want := []struct {
		text     string
		headings string
	}{
		{"Einleitung über Größen.", "Handbuch"},
		{"Der Fluß fließt.\nZweite Zeile.", "Handbuch/Kapitel 2"},
		{"长江是中国最长的河流。", "第二章"},
		{"```\ncode\n\nstill code\n```", "第二章"},
	}
	if len(ss) != len(want) {
		t.Fatalf("%d sections, want %d: %+v", len(ss), len(want), ss)
	}
	for i, w := range want {
		if ss[i].Text != w.text || strings.Join(ss[i].Headings, "/") != w.headings {
			t.Errorf("section %d = %q under %v, want %q under %s", i, ss[i].Text, ss[i].Headings, w.text, w.headings)
		}
	}
}

func TestSplitBoundsSize(t *testing.T) {
	para := strings.Repeat("Dies ist ein Satz. ", 400) + "\n\n" + strings.Repeat("汉字", 2000)
	ss := split(t, document.FormatText, []byte(para))
	checkSpans(t, []byte(para), ss)
	if len(ss) < 4 {
		t.Fatalf("%d sections, want the long paragraphs cut", len(ss))
	}
	for _, s := range ss {
		if len(s.Text) > document.MaxSectionBytes {
			t.Errorf("section of %d bytes, over %d", len(s.Text), document.MaxSectionBytes)
		}
	}
}

func TestSplitRefusesInvalidUTF8(t *testing.T) {
	err := document.Split(context.Background(), document.FormatText, bytes.NewReader([]byte("ok\xff")), 3, func(document.Section) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "UTF-8") {
		t.Fatalf("err = %v, want one naming UTF-8", err)
	}
}

func TestSplitHTML(t *testing.T) {
	page := `<!DOCTYPE html><html><head><title>T</title><style>p{color:red}</style><script>var x = "<p>no</p>";</script></head>
<body><h1>Guía</h1><p>El r&iacute;o &amp; la monta&ntilde;a.</p><!-- <p>hidden</p> -->
<h2>Sección <em>dos</em></h2><div>Primera línea<br>segunda línea</div><p>a < b</p></body></html>`
	ss := split(t, document.FormatHTML, []byte(page))
	var got []string
	for _, s := range ss {
		got = append(got, strings.Join(s.Headings, "/")+": "+s.Text)
	}
	want := []string{"Guía: El río & la montaña.", "Guía/Sección dos: Primera línea", "Guía/Sección dos: segunda línea", "Guía/Sección dos: a < b"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("sections\n got %q\nwant %q", got, want)
	}
}

// pdfDoc makes a two-page PDF with fpdf.
func pdfDoc(t *testing.T, pages ...string) []byte {
	t.Helper()
	f := fpdf.New("P", "mm", "A4", "")
	tr := f.UnicodeTranslatorFromDescriptor("")
	f.SetFont("Helvetica", "", 12)
	for _, p := range pages {
		f.AddPage()
		f.MultiCell(0, 6, tr(p), "", "L", false)
	}
	var b bytes.Buffer
	if err := f.Output(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestSplitPDF(t *testing.T) {
	data := pdfDoc(t, "The lighthouse keeper logs every ship.", "Die Brücke über den Fluß ist schön.")
	ss := split(t, document.FormatPDF, data)
	if len(ss) != 2 {
		t.Fatalf("%d sections, want 2: %+v", len(ss), ss)
	}
	if !strings.Contains(ss[0].Text, "lighthouse keeper") || ss[0].Page != 1 {
		t.Errorf("section 0 = %+v", ss[0])
	}
	if !strings.Contains(ss[1].Text, "Brücke über den Fluß") || ss[1].Page != 2 {
		t.Errorf("section 1 = %+v", ss[1])
	}
}

func TestSplitRefusesBrokenPDF(t *testing.T) {
	data := []byte("%PDF-1.4\nnot really")
	err := document.Split(context.Background(), document.FormatPDF, bytes.NewReader(data), int64(len(data)), func(document.Section) error { return nil })
	if err == nil {
		t.Fatal("a broken PDF was split without error")
	}
}

func TestFormat(t *testing.T) {
	for _, c := range []struct{ mt, name, want string }{
		{"text/plain; charset=utf-8", "a.txt", "text"}, {"text/plain", "notes.md", "markdown"},
		{"text/markdown", "x", "markdown"}, {"text/html", "x", "html"}, {"application/pdf", "x", "pdf"},
		{"image/png", "x.png", ""},
	} {
		if got := document.Format(c.mt, c.name); got != c.want {
			t.Errorf("Format(%q, %q) = %q, want %q", c.mt, c.name, got, c.want)
		}
	}
}
