package channels

import (
	"errors"
	"sync"
)

// Health is the connection state behind an adapter's Checker. The zero
// value reports "not running". It is safe for concurrent use.
type Health struct {
	mu  sync.Mutex
	up  bool
	why string
}

// Set records the state: up, or down and why.
func (h *Health) Set(up bool, why string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.up, h.why = up, why
}

// Check returns nil while up, else why not.
func (h *Health) Check() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.up:
		return nil
	case h.why != "":
		return errors.New(h.why)
	default:
		return errors.New("not running")
	}
}
