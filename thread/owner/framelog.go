package owner

import (
	"context"
	"sync"
	"time"

	"github.com/acpgw/gateway/eventlog"
)

// FrameLog is where a session's raw ACP frames go, in wire order: its
// event log file (*eventlog.Writer) or, on a cluster, its subject of the
// event log stream. Sync makes what was written durable; after Close,
// Write and Sync fail with an error wrapping fs.ErrClosed.
type FrameLog interface {
	Write(frame []byte) error
	Sync() error
	Close() error
}

var _ FrameLog = (*eventlog.Writer)(nil)

// maxLogCloseWait bounds how long a session's new event log waits for the
// last one to close (its process's exit): past it, it opens anyway, and
// fails if the last still holds the file.
const maxLogCloseWait = time.Minute

// ClosingLogs are the event logs of processes that stopped or exited and
// whose last frames are still being written: a session's event log has a
// single writer (eventlog's lock), so the next process of that session (a
// reaped agent started again, a crashed one) opens its log only once the
// last is closed. Without the wait the new process's frames were not
// logged at all ("cannot open the event log": locked).
type ClosingLogs struct {
	mu sync.Mutex
	m  map[string]chan struct{} // session id → closed once its log is
}

// closing returns w, session id's event log about to be closed, as a log
// whose Close tells waitClosed.
func (c *ClosingLogs) closing(id string, w FrameLog) FrameLog {
	if w == nil || id == "" {
		return w
	}
	done := make(chan struct{})
	c.mu.Lock()
	if c.m == nil {
		c.m = map[string]chan struct{}{}
	}
	c.m[id] = done
	c.mu.Unlock()
	return &closingLog{FrameLog: w, closed: func() {
		c.mu.Lock()
		if c.m[id] == done {
			delete(c.m, id)
		}
		c.mu.Unlock()
		close(done)
	}}
}

// pending reports whether session id's last event log is being closed.
func (c *ClosingLogs) pending(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[id] != nil
}

// waitClosed waits until session id's last event log is closed (if one is
// being closed), ctx ends, or maxLogCloseWait passed; it reports whether
// it waited.
func (c *ClosingLogs) waitClosed(ctx context.Context, id string) bool {
	c.mu.Lock()
	done := c.m[id]
	c.mu.Unlock()
	if done == nil {
		return false
	}
	t := time.NewTimer(maxLogCloseWait)
	defer t.Stop()
	select {
	case <-done:
	case <-ctx.Done():
	case <-t.C:
	}
	return true
}

// closingLog is a FrameLog that tells closingLogs once it is closed.
type closingLog struct {
	FrameLog
	once   sync.Once
	closed func()
}

func (l *closingLog) Close() error {
	err := l.FrameLog.Close()
	l.once.Do(l.closed)
	return err
}
