package session

import "github.com/acpgw/gateway/eventlog"

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

// openFrameLog opens sessionID's frame log: Options.OpenFrameLog's, else
// a file in EventLogDir; nil when there is none.
func (r *Router) openFrameLog(sessionID string) (FrameLog, error) {
	if r.o.OpenFrameLog != nil {
		return r.o.OpenFrameLog(sessionID)
	}
	if r.o.EventLogDir == "" {
		return nil, nil
	}
	w, err := eventlog.Open(r.o.EventLogDir, sessionID, r.o.EventLog)
	if err != nil {
		return nil, err
	}
	return w, nil
}
