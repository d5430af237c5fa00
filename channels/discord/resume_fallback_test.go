package discord

import (
	"testing"
)

// TestResumeFallsBackToIdentify: when the resume at the session's
// resume_gateway_url fails, the adapter starts a new session and keeps
// working: Discord answers the RESUME with INVALID_SESSION (the client
// identifies on the same connection), or the resume URL refuses the
// connection (the adapter forgets it and connects at the gateway URL,
// where Discord finds no session to resume and asks for an identify).
func TestResumeFallsBackToIdentify(t *testing.T) {
	f := newFake(t)
	s := start(t, f, Options{})
	ctx := testCtx(t)
	f.say(ann, f.thread, "before", false)
	if in := s.next(t); in.Text != "before" {
		t.Fatalf("inbound = %q", in.Text)
	}
	for i, refuse := range []struct {
		name string
		set  func()
	}{
		{"invalid session", func() { f.refuseResumes = 1 }},
		{"resume URL down", func() { f.resumeDown = true }},
	} {
		f.mu.Lock()
		refuse.set()
		f.mu.Unlock()
		f.dropConnection()
		f.waitFor(ctx, "a new session after "+refuse.name, func() bool {
			return f.identifies == i+2 && f.conn != nil && f.conn.live
		})
		f.say(ann, f.thread, "after "+refuse.name, false)
		if in := s.next(t); in.Text != "after "+refuse.name {
			t.Errorf("inbound after %s = %q", refuse.name, in.Text)
		}
		if err := s.a.Check(); err != nil {
			t.Errorf("Check after %s = %v, want connected", refuse.name, err)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.resumes != 0 || f.invalidated != 2 {
		t.Errorf("resumes, invalidated = %d, %d; want 0, 2 (each resume refused)", f.resumes, f.invalidated)
	}
}
