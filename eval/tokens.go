package eval

import (
	"fmt"
	"sync"

	"github.com/pkoukk/tiktoken-go"
	tiktokenloader "github.com/pkoukk/tiktoken-go-loader"
)

var cl100k struct {
	once sync.Once
	enc  *tiktoken.Tiktoken
	err  error
}

// loadCL100K returns the cl100k_base encoding, read from ranks compiled into
// the binary so that counting tokens never touches the network.
func loadCL100K() (*tiktoken.Tiktoken, error) {
	cl100k.once.Do(func() {
		tiktoken.SetBpeLoader(tiktokenloader.NewOfflineLoader())
		cl100k.enc, cl100k.err = tiktoken.GetEncoding("cl100k_base")
		if cl100k.err != nil {
			cl100k.err = fmt.Errorf("load cl100k_base token ranks: %w", cl100k.err)
		}
	})
	return cl100k.enc, cl100k.err
}

// tokenCounter counts cl100k tokens, remembering texts it has seen: the same
// turns come back in many searches.
type tokenCounter struct {
	enc   *tiktoken.Tiktoken
	mu    sync.Mutex
	cache map[string]int
}

func newTokenCounter() (*tokenCounter, error) {
	enc, err := loadCL100K()
	if err != nil {
		return nil, err
	}
	return &tokenCounter{enc: enc, cache: map[string]int{}}, nil
}

// count returns the number of cl100k tokens of s, special-token text
// counted as ordinary text.
func (c *tokenCounter) count(s string) int {
	c.mu.Lock()
	n, ok := c.cache[s]
	c.mu.Unlock()
	if ok {
		return n
	}
	n = len(c.enc.EncodeOrdinary(s))
	c.mu.Lock()
	c.cache[s] = n
	c.mu.Unlock()
	return n
}

// forget drops remembered counts; called between haystacks so memory stays
// bounded by one haystack's texts.
func (c *tokenCounter) forget() {
	c.mu.Lock()
	c.cache = map[string]int{}
	c.mu.Unlock()
}
