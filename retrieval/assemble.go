package retrieval

import (
	"fmt"
	"strings"
	"sync"

	"github.com/engramhq/engram"
	"github.com/pkoukk/tiktoken-go"
	tiktokenloader "github.com/pkoukk/tiktoken-go-loader"
)

// Render is how a memory appears in an assembled context: "[2023-05-08
// 13:56] Caroline: text", from its valid_from and its "speaker" (else
// "role") metadata, either left out when absent.
func Render(m *engram.Memory) string {
	var b strings.Builder
	if m.ValidFrom != nil && !m.ValidFrom.IsZero() {
		b.WriteString("[" + m.ValidFrom.UTC().Format("2006-01-02 15:04") + "] ")
	}
	who := m.Speaker()
	if who == "" {
		who = m.Role()
	}
	if who != "" {
		b.WriteString(who + ": ")
	}
	b.WriteString(m.Value)
	return b.String()
}

// Counter counts the tokens of a text.
type Counter interface {
	Count(s string) int
}

var cl100k struct {
	once sync.Once
	enc  *tiktoken.Tiktoken
	err  error
}

// CL100K returns a Counter of OpenAI's cl100k_base tokens, read from ranks
// compiled into the binary (no network). Loading them takes a moment on
// first use; it fails only if the compiled ranks are unreadable.
func CL100K() (Counter, error) {
	cl100k.once.Do(func() {
		tiktoken.SetBpeLoader(tiktokenloader.NewOfflineLoader())
		cl100k.enc, cl100k.err = tiktoken.GetEncoding("cl100k_base")
		if cl100k.err != nil {
			cl100k.err = fmt.Errorf("load cl100k_base token ranks: %w", cl100k.err)
		}
	})
	if cl100k.err != nil {
		return nil, cl100k.err
	}
	return tiktokenCounter{cl100k.enc}, nil
}

type tiktokenCounter struct{ enc *tiktoken.Tiktoken }

func (c tiktokenCounter) Count(s string) int { return len(c.enc.EncodeOrdinary(s)) }

// Piece is one hit rendered for a context.
type Piece struct {
	Text   string
	Tokens int
}

// Assembler builds a context of at most a budget of tokens, one rendered
// memory a line: each costs its tokens plus one for the newline that
// separates it from the next.
type Assembler struct {
	budget, tokens int
	counter        Counter
	b              strings.Builder
	pieces         []Piece
}

// NewAssembler starts an empty context of at most budget tokens.
func NewAssembler(budget int, c Counter) *Assembler {
	return &Assembler{budget: budget, counter: c}
}

// Add renders m and appends it when it fits in what is left of the
// budget, reporting whether it did.
func (a *Assembler) Add(m *engram.Memory) bool {
	return a.AddLine(Render(m))
}

// AddLine appends a rendered line when it fits, reporting whether it did.
func (a *Assembler) AddLine(text string) bool {
	n := a.counter.Count(text)
	if a.tokens+n+1 > a.budget {
		return false
	}
	a.tokens += n + 1
	if a.b.Len() > 0 {
		a.b.WriteByte('\n')
	}
	a.b.WriteString(text)
	a.pieces = append(a.pieces, Piece{Text: text, Tokens: n})
	return true
}

// Pieces returns the lines added, in order.
func (a *Assembler) Pieces() []Piece { return a.pieces }

// Context returns the context and its token count.
func (a *Assembler) Context() (string, int) { return a.b.String(), a.tokens }

// Assemble renders memories in rank order into a context of at most budget
// tokens (see Assembler). A memory that does not fit is skipped and
// assembly goes on with the next, smaller ones. It returns the indexes
// of the memories taken, their pieces, the context and its token count.
func Assemble(ms []*engram.Memory, budget int, c Counter) (taken []int, pieces []Piece, context string, tokens int) {
	a := NewAssembler(budget, c)
	for i, m := range ms {
		if a.Add(m) {
			taken = append(taken, i)
		}
	}
	context, tokens = a.Context()
	return taken, a.Pieces(), context, tokens
}
