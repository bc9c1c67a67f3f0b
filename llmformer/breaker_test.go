package llmformer_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/llmformer"
	"github.com/engramhq/engram/openai"
	"github.com/engramhq/engram/openai/openaitest"
)

// switchModel answers every call with one extracted fact, or fails it as
// an unreachable server does while down is set.
type switchModel struct {
	mu    sync.Mutex
	down  bool
	calls int
}

func (m *switchModel) Complete(context.Context, []openai.Message, ...openai.ChatOption) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls++
	if m.down {
		return "", engram.Errorf(engram.EUNAVAILABLE, "openai: cannot reach the server")
	}
	return extraction(fact("semantic", "home", "Alice lives in Munich")), nil
}

func (m *switchModel) Model() string { return "switch" }

func (m *switchModel) set(down bool) (calls int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.down = down
	return m.calls
}

// TestCallTimeout: a call the model never answers is cut by the call
// timeout with EUNAVAILABLE, well before the client's own timeout.
func TestCallTimeout(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.Options{StructuredOutputs: true})
	srv.SetHang(func(openaitest.Request) bool { return true })
	chat, err := openai.NewChat(openai.Config{BaseURL: srv.URL(), Model: "m", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	f, err := llmformer.New(llmformer.Config{LLM: chat, CallTimeout: 150 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = f.Form(context.Background(), engram.FormRequest{Episodes: episodes("Ich wohne jetzt in München.")})
	took := time.Since(start)
	if engram.ErrorCode(err) != engram.EUNAVAILABLE || !strings.Contains(err.Error(), "call timeout of 150ms") {
		t.Errorf("err = %v, want EUNAVAILABLE naming the call timeout", err)
	}
	if took < 150*time.Millisecond || took > 5*time.Second {
		t.Errorf("the hanging call took %v, want about the call timeout of 150ms", took)
	}
}

// TestBreaker: consecutive failed calls open the breaker, which then
// refuses calls without making them; after its open period one probe goes
// out, whose failure doubles the period; once the model is back a probe
// succeeds and the breaker closes by itself.
func TestBreaker(t *testing.T) {
	m := &switchModel{down: true}
	f, err := llmformer.New(llmformer.Config{LLM: m, BreakerFailures: 2, BreakerOpen: 50 * time.Millisecond,
		BreakerMaxOpen: time.Second, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	form := func() error {
		_, err := f.Form(context.Background(), engram.FormRequest{Episodes: episodes("Vivo en Madrid.")})
		return err
	}
	var held *llmformer.HeldOffError
	if err := form(); err == nil || errors.As(err, &held) {
		t.Fatalf("first failure: %v, want the model's error, not held off", err)
	}
	if err := form(); !errors.As(err, &held) || held.RetryIn() != 50*time.Millisecond || engram.ErrorCode(err) != engram.EUNAVAILABLE {
		t.Fatalf("second failure: %v, want held off for 50ms (EUNAVAILABLE)", err)
	}
	if st := f.BreakerStatus(); st.State != "open" || st.Failures != 2 || st.RetryAt == nil {
		t.Fatalf("status after two failures = %+v, want open with a retry time", st)
	}
	if err := form(); !errors.As(err, &held) {
		t.Fatalf("while open: %v, want held off", err)
	}
	if n := m.set(true); n != 2 {
		t.Fatalf("%d calls made, want 2 (an open breaker makes none)", n)
	}
	waitOpen := func() {
		deadline := time.Now().Add(5 * time.Second)
		for st := f.BreakerStatus(); st.RetryAt != nil && time.Now().Before(*st.RetryAt); st = f.BreakerStatus() {
			if time.Now().After(deadline) {
				t.Fatal("the breaker never let a probe through")
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	waitOpen()
	if err := form(); !errors.As(err, &held) || held.RetryIn() != 100*time.Millisecond {
		t.Fatalf("failed probe: %v, want held off for twice as long, 100ms", err)
	}
	if n := m.set(false); n != 3 {
		t.Fatalf("%d calls made, want 3 (one probe)", n)
	}
	waitOpen()
	if err := form(); err != nil {
		t.Fatalf("probe after the model came back: %v", err)
	}
	if st := f.BreakerStatus(); st.State != "closed" || st.Failures != 0 || st.RetryAt != nil {
		t.Errorf("status after recovery = %+v, want closed", st)
	}
}
