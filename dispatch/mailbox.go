package dispatch

import "sync"

// mailbox is a runner goroutine's inbox: any goroutine puts, the runner
// takes everything at once when woken. After close nothing more is taken
// in and take reports closed.
type mailbox[T any] struct {
	mu     sync.Mutex // guards items and closed
	items  []T
	closed bool
	wake   chan struct{} // capacity 1: "the mailbox changed"
}

// put adds v, unless the mailbox is closed, and wakes the runner.
func (m *mailbox[T]) put(v T) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	m.items = append(m.items, v)
	m.mu.Unlock()
	m.signal()
}

// close closes the mailbox and wakes the runner.
func (m *mailbox[T]) close() {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	m.signal()
}

// take returns what was put since the last take, and whether the mailbox
// is closed.
func (m *mailbox[T]) take() ([]T, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	items := m.items
	m.items = nil
	return items, m.closed
}

func (m *mailbox[T]) signal() {
	select {
	case m.wake <- struct{}{}:
	default:
	}
}
