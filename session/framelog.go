package session

import (
	"github.com/acpgw/gateway/eventlog"
)

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
