package textindex_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/engramhq/engram/textindex"
)

func encAttr(b []byte, a *attr) []byte { return binary.LittleEndian.AppendUint32(b, uint32(a.group)) }

func decAttr(b []byte) (attr, error) {
	if len(b) != 4 {
		return attr{}, fmt.Errorf("attribute of %d bytes", len(b))
	}
	return attr{int(binary.LittleEndian.Uint32(b))}, nil
}

// TestSaveLoad: a loaded index answers every query as the saved one did,
// with the same scores, in several languages, after removals and
// replacements; a removed document's words are not in the saved bytes.
func TestSaveLoad(t *testing.T) {
	x := textindex.New[attr]()
	docs := corpus(3000, 7)
	for i, d := range docs {
		x.Add(fmt.Sprintf("m%d", i), d, "", nil, attr{i % 3})
	}
	x.Add("de", "Die Großmutter wohnt in München", "Wohnort der Großmutter", []string{"München"}, attr{1})
	x.Add("es", "Mi abuela vive en Sevilla", "dónde vive la abuela", nil, attr{2})
	x.Add("zh", "我的祖母住在東京都", "祖母的住址", []string{"東京"}, attr{0})
	x.Add("gone", "zqsecretword appears only here", "", nil, attr{0})
	x.Remove("gone")
	for i := range 200 {
		x.Remove(fmt.Sprintf("m%d", i*7))
	}
	x.Add("m1", "replaced text about München", "", nil, attr{2})
	var buf bytes.Buffer
	if err := x.Save(&buf, encAttr); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(buf.Bytes(), []byte("zqsecretword")) {
		t.Errorf("the saved index holds a removed document's word")
	}
	y, err := textindex.Load(bytes.NewReader(buf.Bytes()), decAttr)
	if err != nil {
		t.Fatal(err)
	}
	if y.Len() != x.Len() {
		t.Errorf("loaded %d documents, saved %d", y.Len(), x.Len())
	}
	keep := func(_ string, a *attr) bool { return a.group != 1 }
	for _, q := range append(queryMix(50, 3), "München Großmutter", "abuela Sevilla", "東京 祖母", "zqsecretword") {
		for _, k := range []func(string, *attr) bool{nil, keep} {
			want := textindex.Search([]*textindex.Index[attr]{x}, q, 10, k)
			got := textindex.Search([]*textindex.Index[attr]{y}, q, 10, k)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("Search(%q) after loading = %v, want %v", q, got, want)
			}
		}
	}
}

// TestLoadDamaged: data cut short or with a term number out of range is
// an error, never a panic or a half index.
func TestLoadDamaged(t *testing.T) {
	x := textindex.New[attr]()
	x.Add("a", "one two three", "", nil, attr{1})
	x.Add("b", "two three four", "", nil, attr{2})
	var buf bytes.Buffer
	if err := x.Save(&buf, encAttr); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	for n := range len(b) {
		if _, err := textindex.Load(bytes.NewReader(b[:n]), decAttr); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("Load of the first %d of %d bytes: %v, want io.ErrUnexpectedEOF", n, len(b), err)
		}
	}
	bad := bytes.Clone(b)
	binary.LittleEndian.PutUint32(bad[len(bad)-8:], 1000) // the last term's number
	if _, err := textindex.Load(bytes.NewReader(bad), decAttr); err == nil {
		t.Errorf("Load with a term number out of range succeeded")
	}
	// The second document saved under the first one's id.
	x = textindex.New[attr]()
	x.Add("docA", "one two", "", nil, attr{1})
	x.Add("docB", "three four", "", nil, attr{2})
	buf.Reset()
	if err := x.Save(&buf, encAttr); err != nil {
		t.Fatal(err)
	}
	twice := bytes.Replace(buf.Bytes(), []byte("docB"), []byte("docA"), 1)
	if _, err := textindex.Load(bytes.NewReader(twice), decAttr); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("Load with a document saved twice: %v, want an error saying so", err)
	}
}

// BenchmarkLoad measures building a 100k-document index two ways: adding
// every document (analysing its text), as a load from the store does
// after reading the memories, and loading what Save wrote.
func BenchmarkLoad(b *testing.B) {
	docs := corpus(100000, 1)
	build := func() *textindex.Index[attr] {
		x := textindex.New[attr]()
		for i, d := range docs {
			x.Add(fmt.Sprintf("m%d", i), d, "", nil, attr{i % 3})
		}
		return x
	}
	var buf bytes.Buffer
	if err := build().Save(&buf, encAttr); err != nil {
		b.Fatal(err)
	}
	b.Run("add", func(b *testing.B) {
		for range b.N {
			build()
		}
	})
	b.Run("load", func(b *testing.B) {
		b.ReportMetric(float64(buf.Len())/1e6, "file-MB")
		for range b.N {
			if _, err := textindex.Load(bytes.NewReader(buf.Bytes()), decAttr); err != nil {
				b.Fatal(err)
			}
		}
	})
}
