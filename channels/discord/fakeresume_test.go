package discord

import (
	"net/http"
	"strings"
)

// resumeRefused answers a connection to the resume URL with 503 while
// the fake's resume URL is down, and any connection while its gateway is
// down, and reports whether it did.
func (f *fakeDiscord) resumeRefused(w http.ResponseWriter, r *http.Request) bool {
	f.mu.Lock()
	down := f.gatewayDown || f.resumeDown && strings.TrimSuffix(r.URL.Path, "/") == resumePath
	f.mu.Unlock()
	if down {
		http.Error(w, "resume gateway unavailable", http.StatusServiceUnavailable)
	}
	return down
}

// invalidateLocked answers a RESUME on c with INVALID_SESSION (op 9, not
// resumable) when the fake is told to refuse it, or when it comes to the
// gateway URL while the resume URL is down (the session lives there, as
// on Discord: a resume anywhere else finds no session), and reports
// whether it did. The client should then identify anew.
func (f *fakeDiscord) invalidateLocked(c *fakeConn) bool {
	elsewhere := f.resumeDown && strings.TrimSuffix(c.path, "/") != resumePath
	if f.refuseResumes == 0 && !elsewhere {
		return false
	}
	if !elsewhere {
		f.refuseResumes--
	}
	f.invalidated++
	c.ctrl = append(c.ctrl, []byte(`{"op":9,"d":false}`))
	f.changedLocked()
	return true
}

// replayOnResume makes the next RESUME replay the last n dispatches the
// client had already received, with their sequence numbers, as Discord
// does with what follows the seq a client resumes at: a redelivery.
func (f *fakeDiscord) replayOnResume(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.replay = n
}
