package slack

import (
	"context"
	"math/rand/v2"
)

// socketsState is the fake's side of several Socket Mode connections of
// one app, as Slack allows up to ten: with fakeOptions.sockets, each
// envelope goes to one open connection at random, and an envelope not
// acknowledged in time is sent again (redeliverUnacked) with the same
// event_id, a new envelope_id, retry_attempt and retry_reason, to a
// connection picked at random again.
type socketsState struct {
	open []*fakeConn // the open connections, oldest first
	// rnd picks connections; seeded, so a test's run is reproducible.
	rnd *rand.Rand
	// sent are the event envelopes written, by envelope id, in order.
	sent  []sentEnvelope
	held  map[*fakeConn]bool     // connections whose acks the fake does not hear yet
	late  map[*fakeConn][]string // acks held, by connection
	retry map[string]bool        // envelope ids already redelivered
}

// sentEnvelope is an events_api envelope and the connection it went to.
type sentEnvelope struct {
	id   string
	env  map[string]any
	conn *fakeConn
}

// pickSocket returns the connection to write env to: c (the latest)
// unless several connections share the app, then one at random. It
// records an event envelope for redelivery.
func (f *fakeSlack) pickSocket(c *fakeConn, env map[string]any) *fakeConn {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.o.sockets {
		return c
	}
	if f.sockets.rnd == nil {
		f.sockets.rnd = rand.New(rand.NewPCG(17, 6))
	}
	if len(f.sockets.open) > 1 {
		c = f.sockets.open[f.sockets.rnd.IntN(len(f.sockets.open))]
	}
	if env["type"] == "events_api" {
		f.sockets.sent = append(f.sockets.sent, sentEnvelope{id: env["envelope_id"].(string), env: env, conn: c})
	}
	return c
}

// holdAcks makes the fake not hear the acknowledgements of the i-th open
// connection (oldest first) until releaseAcks: to Slack, that connection
// is slow to acknowledge.
func (f *fakeSlack) holdAcks(i int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.sockets.held == nil {
		f.sockets.held = map[*fakeConn]bool{}
		f.sockets.late = map[*fakeConn][]string{}
	}
	f.sockets.held[f.sockets.open[i]] = true
}

// holdAckLocked reports whether the ack of envelope id on c is held (and
// keeps it for later).
func (f *fakeSlack) holdAckLocked(c *fakeConn, id string) bool {
	if !f.sockets.held[c] {
		return false
	}
	f.sockets.late[c] = append(f.sockets.late[c], id)
	f.notifyLocked()
	return true
}

// heldAcks returns how many acks the fake holds.
func (f *fakeSlack) heldAcks() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, ids := range f.sockets.late {
		n += len(ids)
	}
	return n
}

// sentTo returns how many event envelopes went to the i-th open
// connection.
func (f *fakeSlack) sentTo(i int) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, s := range f.sockets.sent {
		if s.conn == f.sockets.open[i] {
			n++
		}
	}
	return n
}

// redeliverUnacked is Slack's 3 s having passed: every event envelope not
// acknowledged (and not redelivered yet) is sent again as a retry. It
// returns the new envelope ids.
func (f *fakeSlack) redeliverUnacked(ctx context.Context) ([]string, error) {
	f.mu.Lock()
	var again []map[string]any
	if f.sockets.retry == nil {
		f.sockets.retry = map[string]bool{}
	}
	for _, s := range f.sockets.sent {
		if _, ok := f.acks[s.id]; ok || f.sockets.retry[s.id] {
			continue
		}
		f.sockets.retry[s.id] = true
		again = append(again, s.env)
	}
	f.mu.Unlock()
	var ids []string
	for _, env := range again {
		n, _ := env["retry_attempt"].(int)
		id, err := f.redeliver(ctx, env, n+1)
		if err != nil {
			return ids, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}
