package demoagent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
)

// errWireClosed is returned by writes after the agent stopped or crashed.
var errWireClosed = errors.New("demo agent output closed")

// wire is the agent's stdout. Every frame goes through it: the SDK's (it
// writes one whole line per Write call) and the raw frames this package
// writes itself, so the two never interleave. It also lets a turn wait until
// a given frame is on the wire, and it drops all output once closed.
type wire struct {
	closed atomic.Bool // set once; writes then fail

	mu      sync.Mutex // serialises writes; guards the fields below
	w       io.Writer
	watches []*watch
	owed    int        // answers expected from handlers, minus answers written
	settled *sync.Cond // signalled when owed drops
}

// watch is a wait for a line that contains every needle.
type watch struct {
	needles [][]byte
	seen    chan struct{}
}

func newWire(w io.Writer) *wire {
	wr := &wire{w: w}
	wr.settled = sync.NewCond(&wr.mu)
	return wr
}

// Prefixes of the frames the SDK writes (it marshals a struct whose fields
// are jsonrpc, id, method, params, result, error, in that order).
var idPrefix = []byte(`{"jsonrpc":"2.0","id":`)

// isAnswer reports whether line p is a JSON-RPC response.
func isAnswer(p []byte) bool {
	if !bytes.HasPrefix(p, idPrefix) {
		return false
	}
	var env struct{ Method string }
	return json.Unmarshal(p, &env) == nil && env.Method == ""
}

// expectAnswer records that a request handler started: the SDK will write
// exactly one response for it after the handler returns.
func (w *wire) expectAnswer() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.owed++
}

// waitAnswers blocks until a response was written (or failed to write) for
// every expectAnswer. Responses the SDK writes itself for requests that never
// reached a handler (invalid params, unknown method) cannot be told apart and
// count too, so while such an answer overlaps a handler it may return one
// answer early (Run then drops that answer), never late.
func (w *wire) waitAnswers() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.owed > 0 {
		w.settled.Wait()
	}
}

// Write writes one frame. It blocks while the peer is not reading and fails
// with errWireClosed after close.
func (w *wire) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if isAnswer(p) {
		defer func() { // even if the write fails: the answer is settled
			w.owed = max(0, w.owed-1)
			w.settled.Broadcast()
		}()
	}
	if w.closed.Load() {
		return 0, errWireClosed
	}
	out := unstableModelsOut(sessionScope(p))
	if _, err := w.w.Write(out); err != nil {
		return 0, err
	}
	w.matchLocked(out)
	return len(p), nil
}

// matchLocked releases every watch satisfied by line p.
func (w *wire) matchLocked(p []byte) {
	kept := w.watches[:0]
	for _, wt := range w.watches {
		if containsAll(p, wt.needles) {
			close(wt.seen)
			continue
		}
		kept = append(kept, wt)
	}
	clear(w.watches[len(kept):])
	w.watches = kept
}

func containsAll(p []byte, needles [][]byte) bool {
	for _, n := range needles {
		if !bytes.Contains(p, n) {
			return false
		}
	}
	return true
}

// watchFor returns a channel that is closed once a line containing all
// needles has been written, and a function that drops the watch.
func (w *wire) watchFor(needles ...string) (<-chan struct{}, func()) {
	wt := &watch{seen: make(chan struct{})}
	for _, n := range needles {
		wt.needles = append(wt.needles, []byte(n))
	}
	w.mu.Lock()
	w.watches = append(w.watches, wt)
	w.mu.Unlock()
	return wt.seen, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		for i, x := range w.watches {
			if x == wt {
				w.watches = append(w.watches[:i], w.watches[i+1:]...)
				return
			}
		}
	}
}

// notify writes a JSON-RPC notification built from params as given, for
// frames the SDK's typed API cannot express (an unknown sessionUpdate tag).
// It does I/O and blocks like Write.
func (w *wire) notify(ctx context.Context, method string, params any) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("send %s: %w", method, err)
	}
	b, err := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		Method  string `json:"method"`
		Params  any    `json:"params"`
	}{"2.0", method, params})
	if err != nil {
		return fmt.Errorf("encode %s: %w", method, err)
	}
	if _, err := w.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("send %s: %w", method, err)
	}
	return nil
}

// close makes every later write fail. It does not wait for a write in
// progress, so the crash scenario can stop all output at once.
func (w *wire) close() { w.closed.Store(true) }

// gatedReader holds back the SDK's first read until the agent is wired up,
// so no handler runs before the connection is known and the SDK's reader
// goroutine observes the logger set after the connection was created.
type gatedReader struct {
	r     io.Reader
	ready <-chan struct{}
}

func (g gatedReader) Read(p []byte) (int, error) {
	<-g.ready
	return g.r.Read(p)
}
