package embedbatch_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/engramhq/engram/embedbatch"
)

// fake embeds a text as [len(text), its first byte]. When gate is set, each
// call waits for a value from it, so a test can hold a call in progress.
type fake struct {
	mu    sync.Mutex
	calls [][]string
	gate  chan struct{}
	err   error
}

func (f *fake) Name() string { return "fake" }
func (f *fake) Dim() int     { return 2 }

func (f *fake) Embed(_ context.Context, texts []string) ([][]float32, error) {
	f.mu.Lock()
	f.calls = append(f.calls, texts)
	f.mu.Unlock()
	if f.gate != nil {
		<-f.gate
	}
	if f.err != nil {
		return nil, f.err
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = []float32{float32(len(t)), float32(t[0])}
	}
	return out, nil
}

func (f *fake) callCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

// waitCalls waits until the fake has been called n times.
func waitCalls(t *testing.T, f *fake, n int) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); f.callCount() < n; time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("the inner embedder was called %d times, want %d", f.callCount(), n)
		}
	}
}

// TestBatcher_Coalesces holds one inner call while more callers (in
// several languages, one text twice) arrive, and checks that they share
// one further inner call, with each distinct text once, and that every
// caller gets its own texts' vectors.
func TestBatcher_Coalesces(t *testing.T) {
	f := &fake{gate: make(chan struct{})}
	b := embedbatch.New(f)
	ctx := context.Background()
	first := make(chan error, 1)
	go func() { _, err := b.Embed(ctx, []string{"warm"}); first <- err }()
	waitCalls(t, f, 1)

	inputs := [][]string{{"hello there"}, {"Guten Tag", "wie geht's"}, {"¿qué tal?"}, {"你好世界"}, {"hello there"}}
	got := make([][][]float32, len(inputs))
	errs := make([]error, len(inputs))
	var wg sync.WaitGroup
	for i, in := range inputs {
		wg.Go(func() { got[i], errs[i] = b.Embed(ctx, in) })
	}
	// Let the callers queue up behind the held call, then release both.
	time.Sleep(50 * time.Millisecond)
	f.gate <- struct{}{}
	f.gate <- struct{}{}
	wg.Wait()
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if got, want := f.callCount(), 2; got != want {
		t.Fatalf("inner calls = %d, want %d: %q", got, want, f.calls)
	}
	if got, want := len(f.calls[1]), 5; got != want {
		t.Errorf("second inner call embedded %q, want the 5 distinct texts", f.calls[1])
	}
	for i, in := range inputs {
		if errs[i] != nil {
			t.Fatalf("caller %d: %v", i, errs[i])
		}
		if len(got[i]) != len(in) {
			t.Fatalf("caller %d got %d vectors for %d texts", i, len(got[i]), len(in))
		}
		for j, text := range in {
			if v := got[i][j]; v[0] != float32(len(text)) || v[1] != float32(text[0]) {
				t.Errorf("caller %d text %q got vector %v", i, text, v)
			}
		}
	}
	got[0][0][0] = -1
	if got[4][0][0] == -1 {
		t.Error("two callers of one text share a vector slice")
	}
}

// TestBatcher_InnerError fails every caller of the failed inner call.
func TestBatcher_InnerError(t *testing.T) {
	boom := errors.New("boom")
	f := &fake{err: boom}
	b := embedbatch.New(f)
	if _, err := b.Embed(context.Background(), []string{"a"}); !errors.Is(err, boom) {
		t.Fatalf("Embed error = %v, want %v", err, boom)
	}
}

// TestBatcher_CallerGone returns a cancelled caller's error at once, while
// the inner call it would have joined runs on for the others.
func TestBatcher_CallerGone(t *testing.T) {
	f := &fake{gate: make(chan struct{})}
	b := embedbatch.New(f)
	held := make(chan error, 1)
	go func() { _, err := b.Embed(context.Background(), []string{"held"}); held <- err }()
	waitCalls(t, f, 1)
	ctx, cancel := context.WithCancel(context.Background())
	gone := make(chan error, 1)
	go func() { _, err := b.Embed(ctx, []string{"gone"}); gone <- err }()
	time.Sleep(20 * time.Millisecond)
	cancel()
	if err := <-gone; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled caller's error = %v, want context.Canceled", err)
	}
	f.gate <- struct{}{}
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	if got := f.callCount(); got != 1 {
		t.Errorf("inner calls = %d, want 1 (the cancelled caller's text is not embedded)", got)
	}
}
