package cluster

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Event is one inbound event as edges publish it and workers receive it.
type Event struct {
	// ID names the event, unique per platform, with the platform's name
	// before it: a message's channel and id ("slack:C01/1700000000.000100",
	// whichever delivery carried it), another event's platform event id
	// ("slack:Ev0123"). JetStream drops a second event with the same ID
	// within cluster.duplicateWindow.
	ID string
	// Thread is the thread the event belongs to (opaque here).
	Thread string
	// Agent is the agent the thread runs, or would start ("" = any); a
	// thread nobody holds goes only to a worker that can run it.
	Agent string
	// Data is the event itself, encoded by the edge.
	Data []byte
	// Seq is the event's sequence in the inbound stream (set on
	// delivery, and carried when forwarded). The Router hands out a
	// partition's events one at a time, and a thread is always in the
	// same partition, so an owner gets a thread's events in Seq order.
	Seq uint64
	// Signer and Sig are the edge's public signing key and its
	// signature over the event (Signer, EdgeKeys); set by Publish and
	// Message when the stream was opened with a Signer, read on
	// delivery.
	Signer, Sig string
	// TakeOver marks a worker's take-over event (wire.TakeOverEvent):
	// it goes on the thread's subject with ".takeover" after it, the
	// only inbound subject a worker's credentials may publish on
	// (cluster/natsauth), in the thread's partition all the same.
	TakeOver bool
}

// Headers of an inbound message besides Nats-Msg-Id.
const (
	hdrThread = "Gateway-Thread"
	hdrAgent  = "Gateway-Agent"
	hdrSeq    = "Gateway-Seq" // on a forwarded event
)

// Partitions is how many partitions the inbound stream is cut into: a
// thread's events are in one partition (by a hash of the thread), and the
// workers hand out each partition's events one at a time, so a thread's
// events keep their order while other partitions' events pass them. It is
// fixed, not configured, so every edge and worker agrees on it (an event
// published to a partition no worker consumes would wait forever).
const Partitions = 16

// partitionOf is the partition of a thread's events.
func partitionOf(thread string) int {
	h := fnv.New32a()
	h.Write([]byte(thread))
	return int(h.Sum32() % Partitions)
}

// Inbound is the cluster's inbound stream, <cluster>_inbound: a work queue
// with one subject per thread (<cluster>.in.<partition>.<thread key>), each
// event taken by one worker.
type Inbound struct {
	js      jetstream.JetStream
	stream  jetstream.Stream
	cluster string
	signer  *Signer
}

// InboundOptions configure OpenInbound.
type InboundOptions struct {
	Cluster         string        // cluster.name
	DuplicateWindow time.Duration // cluster.duplicateWindow
	Replicas        int           // copies of the stream
	// Signer, on an edge, signs every event published (a worker's
	// take-over events go unsigned: see RouterOptions.Unsigned).
	Signer *Signer
}

// OpenInbound creates or opens the inbound stream.
func OpenInbound(ctx context.Context, js jetstream.JetStream, o InboundOptions) (*Inbound, error) {
	name := o.Cluster + "_inbound"
	// An existing stream as wanted is used as it is: rewriting its config
	// on every start races (in nats-server 2.15.2) with consumers being
	// created by workers already running.
	s, err := WhileSettling(ctx, func(ctx context.Context) (jetstream.Stream, error) {
		if s, err := js.Stream(ctx, name); err == nil {
			c := s.CachedInfo().Config
			if c.Duplicates == o.DuplicateWindow && c.Replicas == max(o.Replicas, 1) {
				return s, nil
			}
		}
		return js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
			Name:        name,
			Description: "inbound chat events, one subject per thread, in partitions",
			Subjects:    []string{o.Cluster + ".in.>"},
			Retention:   jetstream.WorkQueuePolicy,
			Storage:     jetstream.FileStorage,
			Duplicates:  o.DuplicateWindow,
			Replicas:    max(o.Replicas, 1),
		})
	})
	if err != nil {
		return nil, fmt.Errorf("cluster: inbound stream: %w", err)
	}
	return &Inbound{js: js, stream: s, cluster: o.Cluster, signer: o.Signer}, nil
}

// Publish stores ev once: a second event with the same ID within the
// duplicate window is dropped, and duplicate says so.
func (in *Inbound) Publish(ctx context.Context, ev Event) (duplicate bool, err error) {
	m, err := in.Message(ev)
	if err != nil {
		return false, err
	}
	ack, err := in.js.PublishMsg(ctx, m)
	if err != nil {
		return false, fmt.Errorf("cluster: publish %s: %w", ev.ID, err)
	}
	return ack.Duplicate, nil
}

// Message is ev as Publish puts it on the stream, for a publisher that
// does not wait for each ack in turn (jetstream's PublishMsgAsync): the
// same message published again is dropped as a duplicate within the
// duplicate window.
func (in *Inbound) Message(ev Event) (*nats.Msg, error) {
	if ev.ID == "" || ev.Thread == "" {
		return nil, errors.New("cluster: an inbound event needs an id and a thread")
	}
	if in.signer != nil && !ev.TakeOver {
		if err := in.signer.sign(&ev); err != nil {
			return nil, err
		}
	}
	subj := fmt.Sprintf("%s.in.%d.%s", in.cluster, partitionOf(ev.Thread), threadKey(ev.Thread))
	if ev.TakeOver {
		subj += ".takeover"
	}
	m := nats.NewMsg(subj)
	m.Header.Set(jetstream.MsgIDHeader, ev.ID)
	m.Header.Set(hdrThread, ev.Thread)
	if ev.Agent != "" {
		m.Header.Set(hdrAgent, ev.Agent)
	}
	if ev.Sig != "" {
		m.Header.Set(hdrSigner, ev.Signer)
		m.Header.Set(hdrSig, ev.Sig)
	}
	m.Data = ev.Data
	return m, nil
}

// eventOf reads an inbound message (from the stream, or forwarded by
// another worker).
func eventOf(h nats.Header, data []byte) (Event, error) {
	ev := Event{ID: h.Get(jetstream.MsgIDHeader), Thread: h.Get(hdrThread), Agent: h.Get(hdrAgent), Data: data,
		Signer: h.Get(hdrSigner), Sig: h.Get(hdrSig)}
	if s := h.Get(hdrSeq); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return Event{}, fmt.Errorf("cluster: forwarded event with a bad sequence %q", s)
		}
		ev.Seq = n
	}
	if ev.ID == "" || ev.Thread == "" {
		return Event{}, errors.New("cluster: inbound message without an id or a thread")
	}
	return ev, nil
}
