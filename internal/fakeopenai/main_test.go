package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/engramhq/engram/openai/openaitest"
)

// The control port queues replies and faults and lists what the fake
// received.
func TestControl(t *testing.T) {
	fake := openaitest.NewServer(t, openaitest.Options{})
	ctl := httptest.NewServer(control(fake))
	t.Cleanup(ctl.Close)
	post := func(url, body string) (int, string) {
		t.Helper()
		resp, err := http.Post(url, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := post(ctl.URL+"/replies", `{"replies":["Hallo Welt"]}`); code != 204 {
		t.Fatalf("/replies: %d", code)
	}
	if code, _ := post(ctl.URL+"/fail", `{"n":1,"status":503,"message":"busy"}`); code != 204 {
		t.Fatalf("/fail: %d", code)
	}
	if code, _ := post(ctl.URL+"/fail", `{"n":0}`); code != 400 {
		t.Fatalf("/fail n 0: %d, want 400", code)
	}
	chat := `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
	if code, body := post(fake.URL()+"/chat/completions", chat); code != 503 || !strings.Contains(body, "busy") {
		t.Fatalf("faulted chat: %d %s", code, body)
	}
	if code, body := post(fake.URL()+"/chat/completions", chat); code != 200 || !strings.Contains(body, "Hallo Welt") {
		t.Fatalf("scripted chat: %d %s", code, body)
	}
	resp, err := http.Get(ctl.URL + "/requests")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var reqs []recorded
	if err := json.NewDecoder(resp.Body).Decode(&reqs); err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 2 || reqs[0].Status != 503 || reqs[1].Status != 200 || !strings.Contains(string(reqs[1].Body), `"content":"hi"`) {
		t.Fatalf("requests %+v", reqs)
	}
	if code, _ := post(ctl.URL+"/reset", ``); code != 204 || len(fake.Requests()) != 0 {
		t.Fatalf("/reset: %d, %d requests left", code, len(fake.Requests()))
	}
}
