package chatproxy_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/chatproxy"
	"github.com/engramhq/engram/engine"
	engramhttp "github.com/engramhq/engram/http"
	"github.com/engramhq/engram/openai/openaitest"
	"github.com/engramhq/engram/storeopen"
)

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// env is an engram server with the proxy mounted in front of a fake
// upstream LLM, API keys required.
type env struct {
	eng  *engine.Engine
	svc  engram.Service // what the proxy uses; eng unless a test wraps it
	up   *openaitest.Server
	srv  *httptest.Server
	keys engram.Keys
}

type envOption func(*chatproxy.Config, *engramhttp.ServerOptions)

func newEnv(t *testing.T, opts ...envOption) *env {
	t.Helper()
	eng, err := storeopen.Engine(context.Background(), t.TempDir(), engine.Options{Logger: discardLogger(), AccessFlush: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close() })
	e := &env{eng: eng, svc: eng, up: openaitest.NewServer(t, openaitest.Options{}), keys: engram.Keys{Store: eng.Store()}}
	cfg := chatproxy.Config{Service: eng, Upstream: e.up.URL(), APIKey: "upstream-secret", Logger: discardLogger(), Org: "acme", Project: "app"}
	so := engramhttp.ServerOptions{Logger: discardLogger(), Keys: e.keys}
	for _, o := range opts {
		o(&cfg, &so)
	}
	h, err := chatproxy.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	so.Mounts = []engramhttp.Mount{{Pattern: "POST /v1/chat/completions", Handler: h, Role: engram.RoleWrite}}
	e.srv = httptest.NewServer(engramhttp.NewServer(eng, so))
	t.Cleanup(e.srv.Close)
	return e
}

// key makes a key of role bound to acme/app and user (may be "").
func (e *env) key(t *testing.T, user, role string) string {
	t.Helper()
	_, secret, err := e.keys.CreateKey(context.Background(), engram.KeySpec{
		Namespace: engram.Namespace{Org: "acme", Project: "app", User: user}, Role: role,
	})
	if err != nil {
		t.Fatal(err)
	}
	return secret
}

type response struct {
	Status int
	Header http.Header
	Body   string
}

// chat posts body to the proxy with the key and extra header pairs.
func (e *env) chat(t *testing.T, key, body string, header ...string) response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{resp.StatusCode, resp.Header, string(b)}
}

// remember stores a turn of user directly.
func (e *env) remember(t *testing.T, user, text string) {
	t.Helper()
	_, err := e.eng.AddEpisodes(context.Background(), engram.AddEpisodesRequest{
		Namespace: engram.Namespace{Org: "acme", Project: "app", User: user},
		Episodes:  []engram.EpisodeInput{{Role: "user", Speaker: user, Content: text}},
	})
	if err != nil {
		t.Fatal(err)
	}
}

// episodes lists the user's episodes as "role: content", oldest first.
func (e *env) episodes(t *testing.T, user string) []string {
	t.Helper()
	page, err := e.eng.ListEpisodes(context.Background(), engram.Scope{Org: "acme", Project: "app", User: user}, engram.EpisodeFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ep := range page.Episodes {
		out = append(out, ep.Role+": "+ep.Content)
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// lastChat is the last chat request the upstream received.
func (e *env) lastChat(t *testing.T) openaitest.Request {
	t.Helper()
	reqs := e.up.Requests()
	if len(reqs) == 0 || reqs[len(reqs)-1].Chat == nil {
		t.Fatalf("the upstream received no chat request (%d requests)", len(reqs))
	}
	return reqs[len(reqs)-1]
}

// The recalled context goes into the existing system message, the other
// fields pass unchanged, the reply comes back as the upstream sent it, and
// the turn is stored for the user.
func TestProxy_RecallsAndStores(t *testing.T) {
	e := newEnv(t)
	key := e.key(t, "", engram.RoleWrite)
	e.remember(t, "ann", "My sister lives in Porto since May.")
	e.remember(t, "bob", "My brother lives in Oslo.")
	e.up.QueueChat("She lives in Porto.")

	r := e.chat(t, key, `{"model":"m","temperature":0.25,"user":"ann","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Where does my sister live?"}]}`)
	if r.Status != 200 {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	var reply struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Choices []struct {
			Message struct{ Role, Content string } `json:"message"`
		} `json:"choices"`
		Usage map[string]int `json:"usage"`
	}
	if err := json.Unmarshal([]byte(r.Body), &reply); err != nil {
		t.Fatal(err)
	}
	if reply.ID != "chatcmpl-1" || reply.Object != "chat.completion" || reply.Choices[0].Message.Content != "She lives in Porto." || reply.Usage["total_tokens"] == 0 {
		t.Fatalf("reply %s", r.Body)
	}

	up := e.lastChat(t)
	sys := up.Chat.Messages[0]
	if len(up.Chat.Messages) != 2 || sys.Role != "system" || !strings.HasPrefix(sys.Content, "Be brief.\n\n<engram-memories>\n") ||
		!strings.Contains(sys.Content, "My sister lives in Porto") || !strings.HasSuffix(sys.Content, "</engram-memories>") {
		t.Fatalf("upstream messages %+v", up.Chat.Messages)
	}
	if strings.Contains(sys.Content, "Oslo") {
		t.Fatalf("bob's memory reached ann's context: %q", sys.Content)
	}
	if up.Chat.Temperature == nil || *up.Chat.Temperature != 0.25 || up.Chat.User != "ann" || up.Chat.Model != "m" {
		t.Fatalf("fields not passed through: %+v", up.Chat)
	}
	if got := up.Header.Get("Authorization"); got != "Bearer upstream-secret" {
		t.Fatalf("upstream Authorization %q, want the proxy's own key (never the caller's)", got)
	}

	eps := e.episodes(t, "ann")
	if !contains(eps, "user: Where does my sister live?") || !contains(eps, "assistant: She lives in Porto.") {
		t.Fatalf("ann's episodes %q", eps)
	}
	if eps := e.episodes(t, "bob"); len(eps) != 1 {
		t.Fatalf("bob's episodes %q, want only his own", eps)
	}
}

// Without a system message one is put first; with nothing recalled the
// request goes upstream as sent.
func TestProxy_SystemMessage(t *testing.T) {
	e := newEnv(t)
	key := e.key(t, "", engram.RoleWrite)
	e.up.QueueChat("Hello.", "Noted.")

	body := `{"model":"m","messages":[{"role":"user","content":"I play the cello in an orchestra."}]}`
	if r := e.chat(t, key, body, chatproxy.UserHeader, "cara"); r.Status != 200 {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	if up := e.lastChat(t); string(up.Body) != body {
		t.Fatalf("with nothing recalled the upstream got %s, want the request as sent", up.Body)
	}

	r := e.chat(t, key, `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"Which instrument do I play?"}]}]}`, chatproxy.UserHeader, "cara")
	if r.Status != 200 {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	m := e.lastChat(t).Chat.Messages
	if len(m) != 2 || m[0].Role != "system" || !strings.Contains(m[0].Content, "cello") || m[1].Role != "user" || !m[1].Parts {
		t.Fatalf("upstream messages %+v", m)
	}
	if eps := e.episodes(t, "cara"); !contains(eps, "user: Which instrument do I play?") {
		t.Fatalf("episodes %q", eps)
	}
}

// A system message given as content parts gets the block as one more part.
func TestProxy_SystemParts(t *testing.T) {
	e := newEnv(t)
	key := e.key(t, "", engram.RoleWrite)
	e.remember(t, "dan", "I am allergic to peanuts.")
	e.up.QueueChat("Avoid peanuts.")
	r := e.chat(t, key, `{"model":"m","user":"dan","messages":[{"role":"developer","content":[{"type":"text","text":"Be kind."}]},{"role":"user","content":"Am I allergic to anything?"}]}`)
	if r.Status != 200 {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	var sent struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	var parts []map[string]string
	if err := json.Unmarshal(e.lastChat(t).Body, &sent); err != nil || json.Unmarshal(sent.Messages[0].Content, &parts) != nil {
		t.Fatalf("upstream body %s: %v", e.lastChat(t).Body, err)
	}
	if len(sent.Messages) != 2 || sent.Messages[0].Role != "developer" || len(parts) != 2 || parts[0]["text"] != "Be kind." ||
		parts[1]["type"] != "text" || !strings.Contains(parts[1]["text"], "peanuts") {
		t.Fatalf("upstream body %s", e.lastChat(t).Body)
	}
}

// A streamed reply is relayed chunk by chunk and stored whole once it ends.
func TestProxy_Stream(t *testing.T) {
	e := newEnv(t)
	key := e.key(t, "", engram.RoleWrite)
	e.remember(t, "ann", "My sister lives in Porto.")
	e.up.QueueChat("Your sister lives in Porto, by the river.")

	r := e.chat(t, key, `{"model":"m","stream":true,"stream_options":{"include_usage":true},"user":"ann","messages":[{"role":"user","content":"Where does my sister live?"}]}`)
	if r.Status != 200 || r.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, Content-Type %q: %s", r.Status, r.Header.Get("Content-Type"), r.Body)
	}
	text, events := joinDeltas(t, r.Body)
	if text != "Your sister lives in Porto, by the river." || events[len(events)-1] != "data: [DONE]" || len(events) < 8 {
		t.Fatalf("deltas join to %q; events %q", text, events)
	}
	if up := e.lastChat(t); !up.Chat.Stream || !strings.Contains(up.Chat.Messages[0].Content, "Porto") {
		t.Fatalf("upstream request %s", up.Body)
	}
	if eps := e.episodes(t, "ann"); !contains(eps, "assistant: Your sister lives in Porto, by the river.") || !contains(eps, "user: Where does my sister live?") {
		t.Fatalf("episodes %q", eps)
	}
}

// joinDeltas splits an SSE body into events and joins choice 0's deltas.
func joinDeltas(t *testing.T, body string) (string, []string) {
	t.Helper()
	events := strings.Split(strings.TrimSuffix(body, "\n\n"), "\n\n")
	var sb strings.Builder
	for _, ev := range events {
		data := strings.TrimPrefix(ev, "data: ")
		if data == "[DONE]" {
			continue
		}
		var c struct {
			Error   any `json:"error"`
			Choices []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatalf("event %q: %v", ev, err)
		}
		for _, ch := range c.Choices {
			sb.WriteString(ch.Delta.Content)
		}
	}
	return sb.String(), events
}

// An upstream error reaches the client with its status, Retry-After and
// body, and nothing is stored: the client's retry sends the turn again.
func TestProxy_UpstreamError(t *testing.T) {
	e := newEnv(t)
	key := e.key(t, "", engram.RoleWrite)
	body := `{"model":"m","user":"ann","messages":[{"role":"user","content":"Remember that I moved to Lyon."}]}`

	e.up.FailNext(1, openaitest.Fault{Status: 429, RetryAfter: "2", Message: "slow down"})
	r := e.chat(t, key, body)
	var oe struct {
		Error struct {
			Message string `json:"message"`
			Type    string `json:"type"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(r.Body), &oe); err != nil || r.Status != 429 || r.Header.Get("Retry-After") != "2" || oe.Error.Message != "slow down" {
		t.Fatalf("status %d, Retry-After %q: %s", r.Status, r.Header.Get("Retry-After"), r.Body)
	}

	e.up.FailNext(1, openaitest.Fault{Drop: true})
	r = e.chat(t, key, strings.Replace(body, `"model":"m"`, `"model":"m","stream":true`, 1))
	if err := json.Unmarshal([]byte(r.Body), &oe); err != nil || r.Status != 502 || oe.Error.Type != "upstream_error" {
		t.Fatalf("dropped connection: status %d: %s", r.Status, r.Body)
	}
	if eps := e.episodes(t, "ann"); len(eps) != 0 {
		t.Fatalf("a failed turn stored %q", eps)
	}
}

// A stream that breaks off ends with an error event and stores nothing.
func TestProxy_StreamBreaksOff(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"content":"Half a "}}]}`+"\n\n")
		_, _ = io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"content":"rep`)
	}))
	t.Cleanup(up.Close)
	e := newEnv(t, func(c *chatproxy.Config, _ *engramhttp.ServerOptions) { c.Upstream = up.URL })
	r := e.chat(t, e.key(t, "", engram.RoleWrite), `{"model":"m","stream":true,"user":"ann","messages":[{"role":"user","content":"hi"}]}`)
	events := strings.Split(strings.TrimSuffix(r.Body, "\n\n"), "\n\n")
	if r.Status != 200 || len(events) != 2 || !strings.Contains(events[0], "Half a ") || !strings.Contains(events[1], `"error"`) || strings.Contains(r.Body, "[DONE]") {
		t.Fatalf("status %d, events %q", r.Status, events)
	}
	if eps := e.episodes(t, "ann"); len(eps) != 0 {
		t.Fatalf("a broken stream stored %q", eps)
	}
}

// failingStore refuses to add episodes, as a store that is down does.
type failingStore struct{ chatproxy.Service }

func (failingStore) AddEpisodes(context.Context, engram.AddEpisodesRequest) (*engram.AddEpisodesResult, error) {
	return nil, engram.Errorf(engram.EUNAVAILABLE, "the store is down")
}

// A reply whose turn cannot be stored is not acknowledged: a JSON reply
// becomes the store's error, and a stream ends with an error event
// instead of [DONE].
func TestProxy_StoreFails(t *testing.T) {
	e := newEnv(t, func(c *chatproxy.Config, _ *engramhttp.ServerOptions) { c.Service = failingStore{c.Service} })
	key := e.key(t, "", engram.RoleWrite)
	e.up.QueueChat("First reply.", "Second reply.")
	r := e.chat(t, key, `{"model":"m","user":"ann","messages":[{"role":"user","content":"hi"}]}`)
	if r.Status != 503 || strings.Contains(r.Body, "First reply") || !strings.Contains(r.Body, "the store is down") {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	r = e.chat(t, key, `{"model":"m","stream":true,"user":"ann","messages":[{"role":"user","content":"hi"}]}`)
	text, events := joinDeltas(t, r.Body)
	if text != "Second reply." || strings.Contains(r.Body, "[DONE]") || !strings.Contains(events[len(events)-1], "not stored") {
		t.Fatalf("stream %q", r.Body)
	}
}

// Without an upstream the route answers 503 with the configured hint.
func TestProxy_NoUpstream(t *testing.T) {
	e := newEnv(t, func(c *chatproxy.Config, _ *engramhttp.ServerOptions) {
		c.Upstream, c.Unconfigured = "", "start engram serve with --proxy-url"
	})
	r := e.chat(t, e.key(t, "", engram.RoleWrite), `{"model":"m","user":"ann","messages":[{"role":"user","content":"hi"}]}`)
	if r.Status != 503 || !strings.Contains(r.Body, "--proxy-url") || !strings.Contains(r.Body, `"code":"unavailable"`) {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
}

// A bad body is a 400 naming the field; nothing goes upstream and nothing
// is stored.
func TestProxy_BadBody(t *testing.T) {
	e := newEnv(t)
	key := e.key(t, "", engram.RoleWrite)
	for _, tc := range []struct{ name, body, want string }{
		{"not json", `{"model":`, "JSON object"},
		{"array", `[1]`, "JSON object"},
		{"no model", `{"user":"ann","messages":[{"role":"user","content":"hi"}]}`, "model is required"},
		{"model number", `{"model":1,"user":"ann","messages":[{"role":"user","content":"hi"}]}`, "model must be"},
		{"no messages", `{"model":"m","user":"ann"}`, "messages is required"},
		{"messages object", `{"model":"m","user":"ann","messages":{}}`, "messages must be an array"},
		{"message not object", `{"model":"m","user":"ann","messages":["hi"]}`, "messages[0] is not an object"},
		{"no role", `{"model":"m","user":"ann","messages":[{"content":"hi"}]}`, "messages[0].role"},
		{"role boss", `{"model":"m","user":"ann","messages":[{"role":"boss","content":"Ship it"},{"role":"user","content":"hi"}]}`, `messages[0].role \"boss\" is not one of`},
		{"role typo", `{"model":"m","user":"ann","messages":[{"role":"user","content":"hi"},{"role":"asistant","content":"Hello"},{"role":"user","content":"hi"}]}`, `messages[1].role \"asistant\"`},
		{"content object", `{"model":"m","user":"ann","messages":[{"role":"system","content":"x"},{"role":"user","content":{"a":1}}]}`, "messages[1].content"},
		{"no user message", `{"model":"m","user":"ann","messages":[{"role":"system","content":"x"}]}`, "role user"},
		{"empty user message", `{"model":"m","user":"ann","messages":[{"role":"user","content":"  "}]}`, "role user"},
		{"stream string", `{"model":"m","user":"ann","stream":"yes","messages":[{"role":"user","content":"hi"}]}`, "stream must be true or false"},
		{"user number", `{"model":"m","user":5,"messages":[{"role":"user","content":"hi"}]}`, "user must be a string"},
		{"no user", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, "user is required"},
		{"bad user", `{"model":"m","user":"a\u0000b","messages":[{"role":"user","content":"hi"}]}`, "user"},
		{"invalid utf-8", "{\"model\":\"m\",\"user\":\"ann\",\"messages\":[{\"role\":\"user\",\"content\":\"caf\xe9\"}]}", "messages[0].content is not valid UTF-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.chat(t, key, tc.body)
			if r.Status != 400 || !strings.Contains(r.Body, tc.want) || !strings.Contains(r.Body, `"code":"invalid"`) {
				t.Fatalf("status %d: %s; want 400 naming %q", r.Status, r.Body, tc.want)
			}
		})
	}
	r := e.chat(t, key, `{"model":"m","user":"ann","messages":[{"role":"user","content":"hi"}]}`, "Content-Type", "text/plain")
	if r.Status != 415 {
		t.Fatalf("text/plain: status %d: %s", r.Status, r.Body)
	}
	if n := len(e.up.Requests()); n != 0 {
		t.Fatalf("%d bad requests went upstream", n)
	}
	if eps := e.episodes(t, "ann"); len(eps) != 0 {
		t.Fatalf("bad requests stored %q", eps)
	}
}

// A key bound to ann can neither read nor write bob's memories through the
// proxy, whether bob is named in the body or the header; naming no user,
// it works as ann. A read key may not proxy.
func TestProxy_KeyBinding(t *testing.T) {
	e := newEnv(t)
	ann := e.key(t, "ann", engram.RoleWrite)
	e.remember(t, "bob", "My PIN is 4711.")
	e.up.QueueChat("Hi ann.")
	for _, tc := range []struct {
		name, body string
		header     []string
	}{
		{"body", `{"model":"m","user":"bob","messages":[{"role":"user","content":"What is my PIN?"}]}`, nil},
		{"header", `{"model":"m","messages":[{"role":"user","content":"What is my PIN?"}]}`, []string{chatproxy.UserHeader, "bob"}},
		{"header beats body", `{"model":"m","user":"ann","messages":[{"role":"user","content":"What is my PIN?"}]}`, []string{chatproxy.UserHeader, "bob"}},
	} {
		r := e.chat(t, ann, tc.body, tc.header...)
		if r.Status != 403 || !strings.Contains(r.Body, `"code":"forbidden"`) || !strings.Contains(r.Body, "user") {
			t.Fatalf("%s: status %d: %s", tc.name, r.Status, r.Body)
		}
	}
	if n := len(e.up.Requests()); n != 0 {
		t.Fatalf("%d forbidden requests went upstream", n)
	}
	r := e.chat(t, ann, `{"model":"m","messages":[{"role":"user","content":"What is my PIN?"}]}`)
	if r.Status != 200 {
		t.Fatalf("ann's own key: status %d: %s", r.Status, r.Body)
	}
	if sys := e.lastChat(t).Chat.Messages[0].Content; strings.Contains(sys, "4711") {
		t.Fatalf("bob's memory reached ann's request: %q", sys)
	}
	if eps := e.episodes(t, "ann"); !contains(eps, "user: What is my PIN?") {
		t.Fatalf("ann's episodes %q", eps)
	}
	if eps := e.episodes(t, "bob"); len(eps) != 1 {
		t.Fatalf("bob's episodes %q", eps)
	}
	r = e.chat(t, e.key(t, "ann", engram.RoleRead), `{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	if r.Status != 403 || !strings.Contains(r.Body, "role") {
		t.Fatalf("read key: status %d: %s", r.Status, r.Body)
	}
}

// German and Chinese memories are recalled into the context.
func TestProxy_NotOnlyEnglish(t *testing.T) {
	e := newEnv(t)
	key := e.key(t, "", engram.RoleWrite)
	e.remember(t, "jörg", "Meine Schwester wohnt seit Mai in Porto.")
	e.remember(t, "jörg", "Ich spiele jeden Dienstag Tennis.")
	e.remember(t, "li", "我妹妹住在波尔图。")
	e.remember(t, "li", "我每周二打网球。")
	e.up.QueueChat("In Porto.", "在波尔图。")

	for _, tc := range []struct{ user, question, want string }{
		{"jörg", "Wo wohnt meine Schwester?", "Meine Schwester wohnt seit Mai in Porto."},
		{"li", "我妹妹住在哪里？", "我妹妹住在波尔图。"},
	} {
		body, _ := json.Marshal(map[string]any{"model": "m", "user": tc.user, "messages": []map[string]string{{"role": "user", "content": tc.question}}})
		if r := e.chat(t, key, string(body)); r.Status != 200 {
			t.Fatalf("%s: status %d: %s", tc.user, r.Status, r.Body)
		}
		if sys := e.lastChat(t).Chat.Messages[0].Content; !strings.Contains(sys, tc.want) {
			t.Fatalf("%s: system message %q lacks %q", tc.user, sys, tc.want)
		}
		if eps := e.episodes(t, tc.user); !contains(eps, "user: "+tc.question) {
			t.Fatalf("%s: episodes %q", tc.user, eps)
		}
	}
}

// Without authentication the configured tenant is used.
func TestProxy_NoAuth(t *testing.T) {
	e := newEnv(t, func(_ *chatproxy.Config, so *engramhttp.ServerOptions) { so.Keys = nil })
	e.up.QueueChat("ok")
	if r := e.chat(t, "", `{"model":"m","user":"ann","messages":[{"role":"user","content":"I like tea."}]}`); r.Status != 200 {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	if eps := e.episodes(t, "ann"); !contains(eps, "user: I like tea.") {
		t.Fatalf("episodes in acme/app %q", eps)
	}
}

// A message longer than one episode may hold is stored as parts that join
// to it.
func TestProxy_LongMessage(t *testing.T) {
	e := newEnv(t)
	e.up.QueueChat("ok")
	long := "Porto " + strings.Repeat("€", engram.MaxContentBytes/3+5) // cut inside a rune unless split at a boundary
	body, _ := json.Marshal(map[string]any{"model": "m", "user": "ann", "messages": []map[string]string{{"role": "user", "content": long}}})
	if r := e.chat(t, e.key(t, "", engram.RoleWrite), string(body)); r.Status != 200 {
		t.Fatalf("status %d: %.300s", r.Status, r.Body)
	}
	var joined strings.Builder
	for _, ep := range e.episodes(t, "ann") {
		if c, ok := strings.CutPrefix(ep, "user: "); ok {
			joined.WriteString(c)
		}
	}
	if joined.String() != long {
		t.Fatalf("stored parts join to %d bytes, want %d", joined.Len(), len(long))
	}
}

func TestNew_Invalid(t *testing.T) {
	for _, cfg := range []chatproxy.Config{
		{},
		{Service: failingStore{}, Upstream: "ftp://x"},
		{Service: failingStore{}, Upstream: "http://"},
		{Service: failingStore{}, Budget: -1},
		{Service: failingStore{}, Budget: engram.MaxBudget + 1},
		{Service: failingStore{}, Timeout: -time.Second},
	} {
		if _, err := chatproxy.New(cfg); engram.ErrorCode(err) != engram.EINVALID {
			t.Errorf("New(%+v) = %v, want EINVALID", cfg, err)
		}
	}
}

// Each event reaches the client while the upstream is still generating:
// the first chunk is read before the upstream sends the rest.
func TestProxy_StreamFlushes(t *testing.T) {
	release := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"content":"Early "}}]}`+"\n\n")
		http.NewResponseController(w).Flush()
		select {
		case <-release:
		case <-time.After(10 * time.Second):
		}
		_, _ = io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"content":"late."},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(up.Close)
	e := newEnv(t, func(c *chatproxy.Config, _ *engramhttp.ServerOptions) { c.Upstream = up.URL })
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/v1/chat/completions",
		strings.NewReader(`{"model":"m","stream":true,"user":"ann","messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+e.key(t, "", engram.RoleWrite))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	first := make([]byte, 64)
	start := time.Now()
	n, err := io.ReadAtLeast(resp.Body, first, 20)
	if err != nil || !strings.Contains(string(first[:n]), "Early") || time.Since(start) > 5*time.Second {
		t.Fatalf("first chunk %q after %s: %v", first[:n], time.Since(start), err)
	}
	close(release)
	rest, _ := io.ReadAll(resp.Body)
	if !strings.HasSuffix(string(rest), "data: [DONE]\n\n") {
		t.Fatalf("rest of the stream %q", rest)
	}
	if eps := e.episodes(t, "ann"); !contains(eps, "assistant: Early late.") {
		t.Fatalf("episodes %q", eps)
	}
}

// A function-calling round trip stores the user message once: the request
// that carries the tool's result after it stores only the final reply.
func TestProxy_ToolRoundTrip(t *testing.T) {
	e := newEnv(t)
	key := e.key(t, "", engram.RoleWrite)
	e.up.QueueChat("", "It is sunny in Porto.")
	ask := `{"role":"user","content":"What is the weather in Porto?"}`
	if r := e.chat(t, key, `{"model":"m","user":"ann","tools":[{"type":"function","function":{"name":"weather"}}],"messages":[`+ask+`]}`); r.Status != 200 {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	if up := e.lastChat(t); !strings.Contains(string(up.Body), `"tools":[{"type":"function","function":{"name":"weather"}}]`) {
		t.Fatalf("tools not passed through: %s", up.Body)
	}
	r := e.chat(t, key, `{"model":"m","user":"ann","messages":[`+ask+`,{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"weather","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"sunny"}]}`)
	if r.Status != 200 {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	eps := e.episodes(t, "ann")
	if len(eps) != 2 || eps[0] != "user: What is the weather in Porto?" || eps[1] != "assistant: It is sunny in Porto." {
		t.Fatalf("episodes %q", eps)
	}
}
