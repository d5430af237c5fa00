package slack

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/slack-go/slack"

	"github.com/acpgw/gateway/channels"
)

// agentSessions is the adapter's side of Slack's agent sessions
// (agents.sessions.setStatus). Slack shows its Stop button while a
// thread's session is "processing", whether or not the app streams: a
// native stream puts the session there, a thread answered with posts and
// edits (streaming: edits) needs the call. The adapter sets "processing"
// when a turn's status line goes on and "active" when it goes off (Slack
// leaves the session processing after a Stop click; the app moves it
// on). Where Slack refuses the method for good (a workspace without the
// agent surface, an app not declared an agent) it makes no further call:
// the word stop and a 🛑 reaction still stop a turn there.
type agentSessions struct {
	mu         sync.Mutex      // guards the fields below
	processing map[string]bool // channel/thread → set processing by the adapter
	off        bool            // Slack refused the method for good
}

// maxSessions bounds the threads remembered as processing.
const maxSessions = 10000

// sessionStatus sets the agent session of thread t to processing (on) or
// active (off), once per change. It blocks on I/O; errors are logged, as
// the status line itself (its caller's concern) was set.
func (a *Adapter) sessionStatus(ctx context.Context, t channels.ThreadRef, on bool) {
	if t.Thread == "" {
		return
	}
	s, key := &a.sessions, t.Channel+"/"+t.Thread
	s.mu.Lock()
	if s.off || s.processing[key] == on {
		s.mu.Unlock()
		return
	}
	if s.processing == nil || len(s.processing) >= maxSessions {
		s.processing = map[string]bool{}
	}
	if on {
		s.processing[key] = true
	} else {
		delete(s.processing, key)
	}
	s.mu.Unlock()
	status := slack.AgentSessionStatusActive
	if on {
		status = slack.AgentSessionStatusProcessing
	}
	if err := a.admit("agents.sessions.setStatus", t); err != nil {
		s.mu.Lock()
		delete(s.processing, key) // said again at the next change
		s.mu.Unlock()
		a.log.Debug("slack: the agent session's status waits for Slack's limit", "thread", t, "err", err)
		return
	}
	_, err := a.api.SetAgentSessionStatusContext(ctx, slack.AgentSessionSetStatusParameters{Status: status, ChannelID: t.Channel, ThreadTS: t.Thread})
	if err == nil {
		return
	}
	if se, ok := errors.AsType[slack.SlackErrorResponse](err); ok && slices.Contains(noSessionErrors, se.Err) {
		s.mu.Lock()
		s.off = true
		clear(s.processing)
		s.mu.Unlock()
		a.log.Info("slack: Slack refused agent sessions; there is no Stop button from now on (stop and 🛑 still stop a turn)", "err", se.Err)
		return
	}
	if on {
		s.mu.Lock()
		delete(s.processing, key) // try again at the next status line
		s.mu.Unlock()
	}
	a.log.Debug("slack: cannot set the agent session's status", "thread", t, "status", status, "err", err)
}

// noSessionErrors are the agents.sessions.setStatus errors that mean the
// app cannot have agent sessions at all.
var noSessionErrors = append([]string{"not_an_agent", "feature_not_enabled"}, noStatusErrors...)
