package openai_test

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/engramhq/engram/openai"
	"github.com/engramhq/engram/openai/openaitest"
)

func Example() {
	// A fake server stands in for OpenAI, Ollama or vLLM.
	srv := openaitest.NewServer(nil, openaitest.Options{Dim: 8})
	defer srv.Close()
	srv.QueueChat(`{"answer": "Lisbon"}`)
	srv.FailNext(1, openaitest.Fault{Status: 503}) // retried transparently

	cfg := openai.Config{BaseURL: srv.URL(), Model: "nomic-embed-text", Logger: slog.New(slog.DiscardHandler)}
	emb, err := openai.NewEmbedder(cfg)
	if err != nil {
		panic(err)
	}
	vecs, err := emb.Embed(context.Background(), []string{"my sister lives in Lisbon", "she runs a bakery"})
	if err != nil {
		panic(err)
	}
	fmt.Println(emb.Name(), emb.Dim(), len(vecs))

	cfg.Model = "llama3.1"
	chat, err := openai.NewChat(cfg)
	if err != nil {
		panic(err)
	}
	reply, err := chat.Complete(context.Background(), []openai.Message{
		{Role: "system", Content: "Answer in JSON."},
		{Role: "user", Content: "Where does my sister live?"},
	}, openai.JSONMode(), openai.Temperature(0))
	if err != nil {
		panic(err)
	}
	fmt.Println(reply)
	// Output:
	// openai:nomic-embed-text 8 2
	// {"answer": "Lisbon"}
}
