package embedcache

import (
	"context"
	"crypto/sha256"
	"fmt"

	"github.com/engramhq/engram"
)

// Partitions. Every call files its texts under the partition its context
// names (engram.WithEmbedPartition): an org, project and user, or the zero
// Namespace, the shared partition of calls that name none. A text one
// partition embedded is a miss for every other, so the speed of an answer
// says nothing about another tenant's or user's texts.

var _ engram.EmbedForgetter = (*Cache)(nil)

// keyOf returns the key of text in partition part for the model name, and
// buf for reuse. The shared partition keeps the historical key,
// sha256(name NUL text); the others lead with NUL and NUL-separated names,
// which cannot collide with it or with each other because names hold no
// control characters and a model name is never empty.
func keyOf(buf []byte, part engram.Namespace, name, text string) (key, []byte) {
	buf = buf[:0]
	if part != (engram.Namespace{}) {
		buf = append(buf, 0)
		for _, s := range []string{part.Org, part.Project, part.User} {
			buf = append(append(buf, s...), 0)
		}
	}
	buf = append(append(append(buf, name...), 0), text...)
	return key(sha256.Sum256(buf)), buf
}

// tenantKey identifies the tenant of a partition in the LRU and on disk, so
// that ForgetTenant finds its entries; zero for the shared partition.
func tenantKey(part engram.Namespace) key {
	if part.Org == "" {
		return key{}
	}
	return key(sha256.Sum256([]byte(part.Org + "\x00" + part.Project)))
}

// ForgetTexts implements engram.EmbedForgetter: it removes the entries of
// texts in the partition of n and in the partition of n's tenant without a
// user, from memory and from disk, and checkpoints the disk store so that
// its write-ahead log no longer holds them. It fails with EUNAVAILABLE
// after Close or with the disk store's error.
func (c *Cache) ForgetTexts(ctx context.Context, n engram.Namespace, texts []string) error {
	if c.closed.Load() {
		return engram.Errorf(engram.EUNAVAILABLE, "embedcache: the cache is closed")
	}
	parts := []engram.Namespace{{Org: n.Org, Project: n.Project, User: n.User}}
	if n.User != "" {
		parts = append(parts, engram.Namespace{Org: n.Org, Project: n.Project})
	}
	name := c.keyTag
	var keys []key
	var buf []byte
	for _, p := range parts {
		for _, t := range texts {
			var k key
			k, buf = keyOf(buf, p, name, t)
			keys = append(keys, k)
		}
	}
	c.mu.Lock()
	for _, k := range keys {
		if el, ok := c.items[k]; ok {
			c.removeLocked(el)
		}
	}
	c.mu.Unlock()
	if c.db == nil || len(keys) == 0 {
		return nil
	}
	if err := c.db.deleteKeys(ctx, keys); err != nil {
		return fmt.Errorf("embedcache: forget %d texts: %w", len(texts), err)
	}
	return nil
}

// ForgetTenant implements engram.EmbedForgetter: it removes every entry of
// every partition of n's tenant, from memory and from disk, and checkpoints
// the disk store. It fails like ForgetTexts.
func (c *Cache) ForgetTenant(ctx context.Context, n engram.Namespace) error {
	if c.closed.Load() {
		return engram.Errorf(engram.EUNAVAILABLE, "embedcache: the cache is closed")
	}
	t := tenantKey(n)
	if t == (key{}) {
		return nil
	}
	c.mu.Lock()
	for el := c.lru.Front(); el != nil; {
		next := el.Next()
		if el.Value.(*entry).tenant == t {
			c.removeLocked(el)
		}
		el = next
	}
	c.mu.Unlock()
	if c.db == nil {
		return nil
	}
	if err := c.db.deleteTenant(ctx, t); err != nil {
		return fmt.Errorf("embedcache: forget tenant %s: %w", n.Tenant(), err)
	}
	return nil
}
