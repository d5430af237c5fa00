package slack

import (
	"context"
	"errors"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/sysmsg"
)

// A burst of mentions waits in the line of chat.startStream (Tier 2:
// about 20 answers a minute start): the thread far back in it waits
// minutes for its first answer. Its person is told the thread's place
// once, privately (chat.postEphemeral, Tier 4, whose budget no answer
// needs), when the wait is longer than busyAfter: a shorter one is
// hardly noticed, and a notice for each thread of a short burst would be
// calls for nothing.

// busyAfter is the shortest wait for Slack's limits that a thread is
// told about.
const busyAfter = 10 * time.Second

// maxBusyTold bounds the threads remembered as told.
const maxBusyTold = 10000

// tellBusy tells the person who wrote last in t that t's answer waits
// behind ahead others, when err (the refusal of its call) asks for a
// wait of busyAfter or longer, once per thread. Errors are logged: the
// answer follows anyway.
func (a *Adapter) tellBusy(ctx context.Context, t channels.ThreadRef, ahead int, err error) {
	rl, ok := errors.AsType[*channels.RateLimitError](err)
	if !ok || rl.RetryAfter < busyAfter || t.Thread == "" {
		return
	}
	key := t.Channel + "/" + t.Thread
	a.mu.Lock()
	if a.busyTold == nil {
		a.busyTold = newLRU[struct{}](maxBusyTold)
	}
	first := a.busyTold.add(key, struct{}{})
	user := a.recipients[key][0]
	a.mu.Unlock()
	if !first || user == "" {
		return
	}
	if err := a.ephemeral(t.Channel, t.Thread, user)(ctx, sysmsg.Busy{Ahead: ahead}.Body()); err != nil {
		a.log.Debug("slack: cannot tell a thread its place in the line", "thread", t, "err", err)
	}
}

// stopStream stops stream s (chat.stopStream). A stop that Slack's
// limits hold back is tried again at its turn, for as long as
// Options.RetryFor from since: no lane waits for it, and a stream left
// open shows as still writing until Slack closes it minutes later. Other
// errors are logged: Slack closes a stream by itself after a while.
func (a *Adapter) stopStream(ctx context.Context, s *stream, since time.Time) {
	err := a.admit("chat.stopStream", s.thread)
	if err == nil {
		_, _, err = a.api.StopStreamContext(ctx, s.thread.Channel, s.ts)
		err = a.apiErr("chat.stopStream", err)
	}
	if err == nil {
		return
	}
	rl, ok := errors.AsType[*channels.RateLimitError](err)
	if !ok || time.Since(since)+rl.RetryAfter > a.o.RetryFor {
		a.log.Debug("slack: cannot stop a stream", "thread", s.thread, "err", err)
		return
	}
	time.AfterFunc(rl.RetryAfter, func() {
		ctx, cancel := context.WithTimeout(context.Background(), httpTimeout)
		defer cancel()
		a.stopStream(ctx, s, since)
	})
}
