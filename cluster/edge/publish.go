package edge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/acpgw/gateway/cluster"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// publisher puts an edge's inbound events on the inbound stream without
// waiting for each one's ack before taking the next: the events of
// different threads are in flight together, up to a window of events
// taken and not yet stored (beyond it the adapter's handler waits, so a
// burst slows the platform's reading instead of growing a queue). One
// thread's events are published one after another, each once the one
// before it is stored, so that a failed or timed-out publish is tried
// again (the same message: the duplicate window drops a doubled copy)
// before any later event of its thread is tried: a thread's events are
// stored in the order the adapter gave them. An event larger than a NATS
// message holds is not tried again: it is logged as lost.
type publisher struct {
	js     jetstream.JetStream // its async acks time out after Options.PublishTimeout
	in     *cluster.Inbound
	log    *slog.Logger
	window chan struct{} // a token per event taken and not yet stored
	gaveUp chan struct{} // closed when drain stops waiting
	wg     sync.WaitGroup
	// tried, if set, is told of each try's outcome (Edge.published):
	// whether the duplicate window dropped it, or its error.
	tried func(duplicate bool, err error)

	mu      sync.Mutex // guards the fields below
	threads map[string][]queued
	closed  bool                // drain began: the adapter stopped
	stored  func(cluster.Event) // set by tests: told of each event stored
}

// queued is an event taken and not yet stored; the first of a thread's
// is being published.
type queued struct {
	ev    cluster.Event
	token bool          // it holds a token of the window
	done  chan struct{} // closed once it is stored, or given up
}

// errGaveUp ends the publishing of an event when drain stops waiting.
var errGaveUp = errors.New("the edge stopped before the event was stored")

func newPublisher(conn *nats.Conn, in *cluster.Inbound, window int, timeout time.Duration, log *slog.Logger) (*publisher, error) {
	js, err := jetstream.New(conn, jetstream.WithPublishAsyncMaxPending(window), jetstream.WithPublishAsyncTimeout(timeout))
	if err != nil {
		return nil, fmt.Errorf("edge: publisher: %w", err)
	}
	return &publisher{js: js, in: in, log: log, window: make(chan struct{}, window),
		gaveUp: make(chan struct{}), threads: map[string][]queued{}}, nil
}

// put takes ev, to be published after the events of its thread taken
// before it, and returns a channel closed once it is stored (or given
// up). It waits while the window is full; once ctx ended it takes ev
// anyway (an event the adapter handed over is not dropped).
func (p *publisher) put(ctx context.Context, ev cluster.Event) <-chan struct{} {
	q := queued{ev: ev, done: make(chan struct{})}
	select {
	case p.window <- struct{}{}:
		q.token = true
	case <-ctx.Done():
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed { // the adapter's Run returned: no one would wait for it
		p.log.Error("edge: an event handed over after the adapter stopped, not published", "event", ev.ID)
		if q.token {
			<-p.window
		}
		close(q.done)
		return q.done
	}
	waiting := p.threads[ev.Thread]
	p.threads[ev.Thread] = append(waiting, q)
	if len(waiting) == 0 {
		p.wg.Go(func() { p.run(ev.Thread) })
	}
	return q.done
}

// run publishes thread's events in turn until none is left.
func (p *publisher) run(thread string) {
	for {
		p.mu.Lock()
		q := p.threads[thread][0]
		p.mu.Unlock()
		err := p.publish(q.ev)
		p.mu.Lock()
		rest := p.threads[thread][1:]
		if len(rest) == 0 {
			delete(p.threads, thread)
		} else {
			p.threads[thread] = rest
		}
		stored := p.stored
		p.mu.Unlock()
		if q.token {
			<-p.window
		}
		if err != nil {
			p.log.Error("edge: an event lost", "event", q.ev.ID, "err", err)
		} else if stored != nil {
			stored(q.ev)
		}
		close(q.done)
		if len(rest) == 0 {
			return
		}
	}
}

// publish tries ev until it is stored, or drain gives up.
func (p *publisher) publish(ev cluster.Event) error {
	m, err := p.in.Message(ev)
	if err != nil {
		return err
	}
	for wait := 50 * time.Millisecond; ; wait = min(2*wait, 2*time.Second) {
		dup, err := p.try(m)
		if !errors.Is(err, errGaveUp) && p.tried != nil {
			p.tried(dup, err)
		}
		if err == nil || errors.Is(err, errGaveUp) {
			return err
		}
		if errors.Is(err, nats.ErrMaxPayload) {
			// Never stored, however often tried: lost, and said so,
			// rather than holding up the thread's later events.
			return fmt.Errorf("%w (%d bytes, the server takes %d)", err, len(m.Data), p.maxPayload())
		}
		p.log.Warn("edge: publishing an event", "event", ev.ID, "err", err)
		select {
		case <-p.gaveUp:
			return errGaveUp
		case <-time.After(wait):
		}
	}
}

// maxPayload is the most a NATS message holds on the publisher's
// connection.
func (p *publisher) maxPayload() int64 { return p.js.Conn().MaxPayload() }

// try publishes m once and waits for its ack, which says whether the
// duplicate window dropped it.
func (p *publisher) try(m *nats.Msg) (duplicate bool, err error) {
	f, err := p.js.PublishMsgAsync(m)
	if err != nil {
		return false, err
	}
	select {
	case ack := <-f.Ok():
		return ack != nil && ack.Duplicate, nil
	case err := <-f.Err():
		return false, err
	case <-p.gaveUp:
		return false, errGaveUp
	}
}

// drain waits until every event taken is stored, at most limit; then the
// events left are given up (and logged). Either way the publisher's
// reply subscription ends. Call it once the adapter's Run returned: put
// takes nothing after it.
func (p *publisher) drain(limit time.Duration) {
	defer p.js.CleanupPublisher()
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	done := make(chan struct{})
	go func() { p.wg.Wait(); close(done) }()
	select {
	case <-done:
		return
	case <-time.After(limit):
	}
	close(p.gaveUp)
	<-done
}
