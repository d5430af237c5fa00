// Package testlog gives tests a slog.Logger that fails the test when an
// error is logged, so that a component's complaint (the ACP SDK's "failed
// to queue notification; closing connection", say) cannot pass unseen.
package testlog

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

// SDKComponent is the value of the "component" attribute on the records of
// the ACP SDK's logger (package agent names it so).
const SDKComponent = "acp-sdk"

// FailOnError returns a logger that fails t on any record at Error level
// or above. Lower levels are dropped.
func FailOnError(t testing.TB) *slog.Logger {
	return slog.New(newHandler(t, nil))
}

// FailOnSDKError returns a logger that fails t on a record at Error level
// or above whose "component" attribute is SDKComponent. Other records are
// dropped: it is for code that logs its own errors on purpose and hands a
// derived logger to the SDK.
func FailOnSDKError(t testing.TB) *slog.Logger {
	return slog.New(newHandler(t, func(attrs []slog.Attr) bool {
		for _, a := range attrs {
			if a.Key == "component" && a.Value.String() == SDKComponent {
				return true
			}
		}
		return false
	}))
}

// state is shared by a handler and the handlers derived from it.
type state struct {
	t testing.TB

	mu   sync.Mutex // guards done
	done bool       // the test has finished; t must not be used
}

// handler flattens groups: attributes keep their own keys.
type handler struct {
	s     *state
	match func([]slog.Attr) bool // nil: every error record counts
	attrs []slog.Attr
}

func newHandler(t testing.TB, match func([]slog.Attr) bool) *handler {
	s := &state{t: t}
	// Registered first, so it runs last: errors logged by later cleanups
	// (an agent's stop, say) still fail the test.
	t.Cleanup(func() {
		s.mu.Lock()
		s.done = true
		s.mu.Unlock()
	})
	return &handler{s: s, match: match}
}

func (h *handler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelError }

func (h *handler) Handle(_ context.Context, r slog.Record) error {
	if r.Level < slog.LevelError {
		return nil
	}
	all := append([]slog.Attr(nil), h.attrs...)
	r.Attrs(func(a slog.Attr) bool { all = append(all, a); return true })
	if h.match != nil && !h.match(all) {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %q", r.Level, r.Message)
	for _, a := range all {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
	}
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	if h.s.done {
		// t must not be used any more; an error is still an error.
		panic("error logged after the test " + h.s.t.Name() + " ended: " + b.String())
	}
	h.s.t.Errorf("logged: %s", b.String())
	return nil
}

func (h *handler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append(append([]slog.Attr(nil), h.attrs...), as...)
	return &c
}

func (h *handler) WithGroup(string) slog.Handler { return h }
