package slack

import "container/list"

// lru is a bounded map that forgets the least recently used key when full.
// It is not safe for concurrent use; its owner locks.
type lru[V any] struct {
	max   int
	order *list.List // of *lruEntry[V], most recent first
	items map[string]*list.Element
}

type lruEntry[V any] struct {
	key string
	val V
}

// newLRU returns an lru holding at most size keys (at least one).
func newLRU[V any](size int) *lru[V] {
	return &lru[V]{max: max(size, 1), order: list.New(), items: map[string]*list.Element{}}
}

// get returns the value of key and marks it recently used.
func (c *lru[V]) get(key string) (V, bool) {
	if e, ok := c.items[key]; ok {
		c.order.MoveToFront(e)
		return e.Value.(*lruEntry[V]).val, true
	}
	var zero V
	return zero, false
}

// put sets key to val, evicting the least recently used key when full.
func (c *lru[V]) put(key string, val V) {
	if e, ok := c.items[key]; ok {
		e.Value.(*lruEntry[V]).val = val
		c.order.MoveToFront(e)
		return
	}
	c.items[key] = c.order.PushFront(&lruEntry[V]{key: key, val: val})
	for c.order.Len() > c.max {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.items, last.Value.(*lruEntry[V]).key)
	}
}

// add records key and reports whether it was new.
func (c *lru[V]) add(key string, val V) bool {
	if _, ok := c.get(key); ok {
		return false
	}
	c.put(key, val)
	return true
}

// remove forgets key.
func (c *lru[V]) remove(key string) {
	if e, ok := c.items[key]; ok {
		c.order.Remove(e)
		delete(c.items, key)
	}
}

// len returns the number of keys held.
func (c *lru[V]) len() int { return c.order.Len() }
