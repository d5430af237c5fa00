package slack

import (
	"net/http"
	"net/url"
	"slices"
)

// setSessionStatus answers agents.sessions.setStatus as Slack does where
// the workspace has the agent surface (fakeOptions.streams): it records
// the thread's session status (processing, active, suspended, closed).
func (f *fakeSlack) setSessionStatus(w http.ResponseWriter, form url.Values) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ch, thread, status := form.Get("channel_id"), form.Get("thread_ts"), form.Get("status")
	switch {
	case !f.o.streams:
		writeJSON(w, map[string]any{"ok": false, "error": "unknown_method"})
		return
	case !f.channels[ch]:
		writeJSON(w, map[string]any{"ok": false, "error": "channel_not_found"})
		return
	case thread == "" || !slices.Contains([]string{"processing", "active", "suspended", "closed"}, status):
		writeJSON(w, map[string]any{"ok": false, "error": "invalid_arguments"})
		return
	}
	if f.sessionStatus == nil {
		f.sessionStatus = map[string]string{}
	}
	f.sessionStatus[ch+"/"+thread] = status
	f.notifyLocked()
	writeJSON(w, map[string]any{"ok": true, "status": status, "agent_status": status})
}

// stopShownLocked reports whether Slack shows its Stop button in thread
// channel/thread: while the thread's agent session is processing, which
// the app's call or an open stream of the app's there makes it.
func (f *fakeSlack) stopShownLocked(channel, thread string) bool {
	if f.sessionStatus[channel+"/"+thread] == "processing" {
		return true
	}
	for _, m := range f.msgs {
		if m.Channel == channel && m.ThreadTS == thread && m.Stream != nil && m.Stream.streaming {
			return true
		}
	}
	return false
}
