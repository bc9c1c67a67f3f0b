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

// Assemble renders memories in rank order into a context of at most budget
// tokens: each rendered memory costs its tokens plus one for the newline
// that separates it from the next. A memory that does not fit is skipped
// and assembly goes on with the next, smaller ones. It returns the indexes
// of the memories taken, their pieces, the context and its token count.
func Assemble(ms []*engram.Memory, budget int, c Counter) (taken []int, pieces []Piece, context string, tokens int) {
	var b strings.Builder
	for i, m := range ms {
		text := Render(m)
		n := c.Count(text)
		if tokens+n+1 > budget {
			continue
		}
		tokens += n + 1
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(text)
		taken = append(taken, i)
		pieces = append(pieces, Piece{Text: text, Tokens: n})
	}
	return taken, pieces, b.String(), tokens
}
