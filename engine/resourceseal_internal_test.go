package engine

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/engramhq/engram"
)

// TestContentTreatmentPieces: text treated a piece at a time keeps a
// private key whole that crosses a piece's end, gives a key repeated in a
// later piece the placeholder it got first, finds a card in a text
// without line ends, and reads an upload that comes a byte at a time;
// every span is sealed once under the resource.
func TestContentTreatmentPieces(t *testing.T) {
	const key = "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"
	const pem = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----"
	var b strings.Builder
	fmt.Fprintf(&b, "la clé est %s\n", key)
	for i := 0; b.Len() < 4000; i++ {
		fmt.Fprintf(&b, "Zeile %04d: der Leuchtturm steht am Meer.\n", i)
	}
	b.WriteString(pem + "\n")
	for i := 0; b.Len() < 9000; i++ {
		fmt.Fprintf(&b, "línea %04d: el faro 灯塔 está junto al mar.\n", i)
	}
	fmt.Fprintf(&b, "otra vez %s\n%s", key, strings.Repeat("sin fin ", 700))
	b.WriteString("Mi tarjeta es 4111 1111 1111 1111 ")
	b.WriteString(strings.Repeat("y nada más ", 600))
	doc := b.String()
	want := strings.NewReplacer(key, "[secret:api_key#1]", pem, "[secret:private_key#2]", "4111 1111 1111 1111", "[payment:card#3]").Replace(doc)
	for _, tc := range []struct {
		name string
		src  io.Reader
	}{{"whole", strings.NewReader(doc)}, {"byte at a time", iotest.OneByteReader(strings.NewReader(doc))}} {
		t.Run(tc.name, func(t *testing.T) {
			got, sc := treatPieces(t, tc.src, 4096, 512)
			if got != want {
				i := 0
				for i < min(len(got), len(want)) && got[i] == want[i] {
					i++
				}
				t.Fatalf("treated text differs at byte %d: %q, want %q", i, got[max(0, i-40):min(len(got), i+60)], want[max(0, i-40):min(len(want), i+60)])
			}
			if len(sc.seals) != 3 || sc.seals[1].Value != pem || sc.seals[0].Sources[0] != "r1" || sc.seals[2].Metadata[MetaSealedField] != "content" {
				t.Errorf("seals = %+v; want the key, the private key and the card, once each, from the resource's content", sc.seals)
			}
		})
	}
}

// treatPieces treats src as a resource's content in pieces of the given
// size under the seal policy, and returns the text and what was treated.
func treatPieces(t *testing.T, src io.Reader, piece, reach int) (string, *treated) {
	t.Helper()
	p := engram.DefaultSensitivePolicy()
	rd := newRedactor(p, nil, true, false, slog.New(slog.DiscardHandler))
	w := rd.write(context.Background(), engram.Namespace{Org: "o", Project: "p", User: "u"})
	w.p = &p
	r := &engram.Resource{ID: "r1", Name: "doc.txt", Namespace: w.ns}
	ct := &contentTreatment{w: w, r: r, src: src, piece: piece, reach: reach}
	out, err := io.ReadAll(ct)
	if err != nil {
		t.Fatal(err)
	}
	return string(out), w.done()
}
