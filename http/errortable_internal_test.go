package http

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestErrorTableDocumented: every code the server answers with is a row of
// the error table in docs/api.md, with the status ErrorStatus gives it.
func TestErrorTableDocumented(t *testing.T) {
	b, err := os.ReadFile("../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, code := range errorCodes {
		row := "| `" + code + "` | " + strconv.Itoa(ErrorStatus(code)) + " |"
		if !strings.Contains(doc, row) {
			t.Errorf("docs/api.md has no error table row %q", row)
		}
	}
}
