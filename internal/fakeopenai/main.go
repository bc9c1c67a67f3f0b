// Command fakeopenai serves openaitest's fake OpenAI-compatible server as a
// process, for tests in other languages (integrations/). It listens on two
// loopback ports and prints one JSON line to stdout:
//
//	{"url":"http://127.0.0.1:P/v1","control":"http://127.0.0.1:Q"}
//
// url is the API (chat completions, streaming or not, and embeddings).
// control scripts and inspects it:
//
//	GET  /requests   the chat and embedding requests received, oldest first
//	POST /replies    {"replies": ["..."]} queues chat replies
//	POST /fail       {"n": 1, "status": 500, "message": "..."} fails the next n requests
//	POST /reset      forgets requests, replies and faults
//
// With no reply queued a chat request is answered "You said: " and its last
// message's text. It runs until stdin closes or it gets SIGINT or SIGTERM.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/engramhq/engram/openai/openaitest"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "fakeopenai:", err)
		os.Exit(1)
	}
}

func run() error {
	fake := openaitest.NewServer(nil, openaitest.Options{Chat: func(r openaitest.ChatRequest) string {
		return "You said: " + r.Messages[len(r.Messages)-1].Content
	}})
	defer fake.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	ctl := &http.Server{Handler: control(fake)}
	go func() { _ = ctl.Serve(ln) }()
	defer ctl.Close()
	line, _ := json.Marshal(map[string]string{"url": fake.URL(), "control": "http://" + ln.Addr().String()})
	fmt.Println(string(line))

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		stop()
	}()
	<-ctx.Done()
	return nil
}

// recorded is a request as GET /requests lists it.
type recorded struct {
	Method string          `json:"method"`
	Path   string          `json:"path"`
	Status int             `json:"status"`
	Auth   string          `json:"authorization,omitempty"`
	Body   json.RawMessage `json:"body,omitempty"`
}

// control is the handler of the control port.
func control(fake *openaitest.Server) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /requests", func(w http.ResponseWriter, r *http.Request) {
		out := []recorded{}
		for _, q := range fake.Requests() {
			rec := recorded{Method: q.Method, Path: q.Path, Status: q.Status, Auth: q.Header.Get("Authorization")}
			if json.Valid(q.Body) {
				rec.Body = q.Body
			}
			out = append(out, rec)
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	})
	mux.HandleFunc("POST /replies", func(w http.ResponseWriter, r *http.Request) {
		var v struct {
			Replies []string `json:"replies"`
		}
		if err := json.NewDecoder(r.Body).Decode(&v); err != nil {
			http.Error(w, "body: "+err.Error(), http.StatusBadRequest)
			return
		}
		fake.QueueChat(v.Replies...)
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST /fail", func(w http.ResponseWriter, r *http.Request) {
		var v struct {
			N       int    `json:"n"`
			Status  int    `json:"status"`
			Message string `json:"message"`
		}
		if err := json.NewDecoder(r.Body).Decode(&v); err != nil || v.N < 1 {
			http.Error(w, "body: want {\"n\": 1 or more, \"status\", \"message\"}", http.StatusBadRequest)
			return
		}
		fake.FailNext(v.N, openaitest.Fault{Status: v.Status, Message: v.Message})
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST /reset", func(w http.ResponseWriter, r *http.Request) {
		fake.Reset()
		w.WriteHeader(http.StatusNoContent)
	})
	return mux
}
