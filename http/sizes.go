package http

import (
	"fmt"

	"github.com/engramhq/engram"
)

// checkEachText returns an EINVALID error naming the first of texts that
// is longer than max bytes, as field(i), with the limit of one text: a
// text over it is refused however it is batched, so the answer must not
// suggest smaller batches. It runs before checkEmbedBytes for that reason.
func checkEachText(field func(i int) string, texts []string, max int, what string) error {
	for i, t := range texts {
		if len(t) > max {
			return engram.Errorf(engram.EINVALID, "request body: %s is %d bytes, longer than the limit of %d bytes of %s; split it into several", field(i), len(t), max, what)
		}
	}
	return nil
}

// episodeContent and memoryValue name the text of one item of an add's
// batch in an error.
func episodeContent(i int) string { return fmt.Sprintf("episodes[%d].content", i) }
func memoryValue(i int) string    { return fmt.Sprintf("memories[%d].value", i) }
