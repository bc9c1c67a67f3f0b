package main_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// tourBlockRE finds the README's tour commands: the code blocks fenced as
// "```sh tour".
var tourBlockRE = regexp.MustCompile("(?s)```sh tour\n(.*?)```")

// tourChecks say, in order, what each tour command's answer must hold. A
// tour block without a check, or a check without a block, fails the test,
// so the tour cannot grow a command no test runs.
var tourChecks = []func(t *testing.T, body map[string]any){
	func(t *testing.T, body map[string]any) { // add a conversation
		if eps, _ := body["episodes"].([]any); len(eps) != 3 {
			t.Errorf("add stored %d episodes, want 3: %v", len(eps), body)
		}
		if ms, _ := body["memories"].([]any); len(ms) == 0 {
			t.Errorf("add formed no memories: %v", body)
		}
	},
	func(t *testing.T, body map[string]any) { // search
		hits, _ := body["hits"].([]any)
		if len(hits) == 0 || !strings.Contains(fmt.Sprint(hits[0]), "Lisbon") {
			t.Errorf("the first hit of \"Where does Alice live?\" does not say Lisbon: %v", hits)
		}
	},
	func(t *testing.T, body map[string]any) { // context within a budget
		ctx, _ := body["context"].(string)
		tokens, _ := body["tokens"].(float64)
		if !strings.Contains(ctx, "Marta") || tokens <= 0 || tokens > 200 {
			t.Errorf("context of %v tokens does not name the teacher Marta within 200 tokens: %q", tokens, ctx)
		}
	},
}

// TestReadmeTour runs every command of the README's five-minute tour, in
// order, against a fresh server, and checks each answer. The tour's
// commands are curl calls; the test reads their method, headers, URL and
// body and sends the same request, so it needs no curl on the machine.
func TestReadmeTour(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := tourBlockRE.FindAllStringSubmatch(string(readme), -1)
	if len(blocks) != len(tourChecks) {
		t.Fatalf("README.md has %d tour commands (```sh tour blocks), the test checks %d: keep them in step", len(blocks), len(tourChecks))
	}
	srv := startServer(t, t.TempDir(), baseEnv(t))
	for i, b := range blocks {
		req, err := curlRequest(b[1], srv.url)
		if err != nil {
			t.Fatalf("tour command %d: %v\n%s", i+1, err, b[1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("tour command %d: %v", i+1, err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			t.Fatalf("tour command %d: HTTP %d: %s", i+1, resp.StatusCode, data)
		}
		var body map[string]any
		if err := json.Unmarshal(data, &body); err != nil {
			t.Fatalf("tour command %d: answer is not a JSON object: %v: %s", i+1, err, data)
		}
		tourChecks[i](t, body)
	}
}

// curlRequest reads one curl command line (lines joined by a trailing
// backslash; arguments bare or in single quotes) into the request it
// sends, with its README address replaced by base. It knows -s, -X, -H
// and -d, and fails on anything else, so the tour keeps to what is run.
func curlRequest(cmd, base string) (*http.Request, error) {
	args, err := shellWords(strings.ReplaceAll(strings.TrimSpace(cmd), "\\\n", " "))
	if err != nil {
		return nil, err
	}
	if len(args) == 0 || args[0] != "curl" {
		return nil, fmt.Errorf("not a curl command")
	}
	method, url, body := "GET", "", ""
	header := http.Header{}
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-s":
		case (a == "-X" || a == "-H" || a == "-d") && i+1 < len(args):
			i++
			switch a {
			case "-X":
				method = args[i]
			case "-H":
				k, v, _ := strings.Cut(args[i], ":")
				header.Set(strings.TrimSpace(k), strings.TrimSpace(v))
			case "-d":
				body = args[i]
				if method == "GET" {
					method = "POST"
				}
			}
		case strings.HasPrefix(a, "http://127.0.0.1:8080/") && url == "":
			url = base + strings.TrimPrefix(a, "http://127.0.0.1:8080")
		default:
			return nil, fmt.Errorf("argument %q is not one the tour test knows", a)
		}
	}
	if url == "" {
		return nil, fmt.Errorf("no http://127.0.0.1:8080/ URL")
	}
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header = header
	return req, nil
}

// shellWords splits s into words as a shell does for bare and single-
// quoted words (no escapes, no variables).
func shellWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	in, quoted := false, false
	for _, r := range s {
		switch {
		case quoted && r == '\'':
			quoted = false
		case quoted:
			cur.WriteRune(r)
		case r == '\'':
			quoted, in = true, true
		case r == ' ' || r == '\t' || r == '\n':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if quoted {
		return nil, fmt.Errorf("unterminated quote")
	}
	if in {
		words = append(words, cur.String())
	}
	return words, nil
}
