package jsstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sync"
	"time"

	"github.com/acpgw/gateway/cluster"
	"github.com/nats-io/nats.go/jetstream"
)

// EventLogOptions configure OpenEventLog.
type EventLogOptions struct {
	Cluster  string        // cluster.name
	MaxAge   time.Duration // cluster.eventLog.maxAge
	MaxBytes int64         // cluster.eventLog.maxBytes
	Replicas int           // copies JetStream keeps (1 for one node, 3 for a cluster)
}

// EventLog is the raw ACP event log on the cluster: the stream
// <cluster>_events, one subject per session (<cluster>.events.<session>),
// each message one JSON-RPC frame as the agent or the gateway sent it. The
// oldest frames are dropped past MaxAge or MaxBytes.
type EventLog struct {
	js      jetstream.JetStream
	stream  jetstream.Stream
	cluster string
}

// OpenEventLog creates the stream or opens it with the retention given.
func OpenEventLog(ctx context.Context, js jetstream.JetStream, o EventLogOptions) (*EventLog, error) {
	if o.Cluster == "" {
		return nil, errors.New("jsstore: the cluster needs a name")
	}
	if o.MaxAge <= 0 || o.MaxBytes <= 0 {
		return nil, errors.New("jsstore: the event log needs a positive cluster.eventLog.maxAge and maxBytes")
	}
	cfg := jetstream.StreamConfig{
		Name:        o.Cluster + "_events",
		Description: "the raw ACP event log: every frame, a subject per session",
		Subjects:    []string{o.Cluster + ".events.>"},
		Retention:   jetstream.LimitsPolicy,
		Discard:     jetstream.DiscardOld,
		MaxAge:      o.MaxAge,
		MaxBytes:    o.MaxBytes,
		Storage:     jetstream.FileStorage,
		Replicas:    max(o.Replicas, 1),
	}
	st, err := cluster.WhileSettling(ctx, func(ctx context.Context) (jetstream.Stream, error) {
		st, err := js.Stream(ctx, cfg.Name)
		if err != nil {
			return js.CreateOrUpdateStream(ctx, cfg)
		}
		if c := st.CachedInfo().Config; c.MaxAge != cfg.MaxAge || c.MaxBytes != cfg.MaxBytes || c.Replicas != cfg.Replicas {
			return js.UpdateStream(ctx, cfg)
		}
		return st, nil
	})
	if err != nil {
		return nil, fmt.Errorf("jsstore: event log stream %s: %w", cfg.Name, err)
	}
	return &EventLog{js: js, stream: st, cluster: o.Cluster}, nil
}

// LookupEventLog opens the event log of the cluster as it is, to read it
// (gateway replay); it changes nothing and fails when there is none.
func LookupEventLog(ctx context.Context, js jetstream.JetStream, cluster string) (*EventLog, error) {
	name := cluster + "_events"
	st, err := js.Stream(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("jsstore: event log stream %s: %w", name, err)
	}
	return &EventLog{js: js, stream: st, cluster: cluster}, nil
}

func (l *EventLog) subject(sessionID string) string {
	return l.cluster + ".events." + token(sessionID)
}

// Writer returns the writer of one session's frames.
func (l *EventLog) Writer(sessionID string) *EventWriter {
	return &EventWriter{js: l.js, subject: l.subject(sessionID)}
}

// EventWriter appends one session's frames to the event log, in the order
// of the Write calls: they are published asynchronously on one connection,
// which keeps their order, and Flush (or Close) waits for JetStream to have
// stored them all.
type EventWriter struct {
	js      jetstream.JetStream
	subject string

	mu      sync.Mutex // guards the fields below and the order of publishes
	pending []jetstream.PubAckFuture
	err     error // the first failed publish, reported by the next Flush
	closed  bool
}

// maxUnacked bounds the frames a Writer has in flight before a Write
// waits for them (below the connection's 4,000 for all writers).
const maxUnacked = 1000

// Write appends one frame (one JSON-RPC line without its newline). It does
// not keep frame.
func (w *EventWriter) Write(frame []byte) error {
	if bytes.IndexByte(frame, '\n') >= 0 {
		return errors.New("jsstore: event log: a frame contains a newline")
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return fmt.Errorf("jsstore: event log: write: %w", fs.ErrClosed)
	}
	if len(w.pending) >= maxUnacked {
		if err := w.waitLocked(context.Background()); err != nil {
			return err
		}
	}
	fs, err := publishParts(w.js, w.subject, bytes.Clone(frame))
	w.pending = append(w.pending, fs...)
	if err != nil {
		return fmt.Errorf("jsstore: event log: %w", err)
	}
	return nil
}

// waitLocked waits for the frames in flight; it reports the first that
// failed, once.
func (w *EventWriter) waitLocked(ctx context.Context) error {
	for _, f := range w.pending {
		select {
		case <-f.Ok():
		case err := <-f.Err():
			if w.err == nil {
				w.err = fmt.Errorf("jsstore: event log: %w", err)
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	w.pending = w.pending[:0]
	err := w.err
	w.err = nil
	return err
}

// Flush waits until JetStream stored every frame written so far.
func (w *EventWriter) Flush(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.waitLocked(ctx)
}

// Sync is Flush with a deadline, for the session at the end of a turn.
func (w *EventWriter) Sync() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return fmt.Errorf("jsstore: event log: sync: %w", fs.ErrClosed)
	}
	return w.waitLocked(ctx)
}

// Close flushes and ends the writer.
func (w *EventWriter) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	return w.waitLocked(ctx)
}

// Reader returns a session's frames as NDJSON, one frame a line in the
// order they were written, as `gateway replay` reads a log file.
func (l *EventLog) Reader(ctx context.Context, sessionID string) (io.Reader, error) {
	var buf bytes.Buffer
	err := readStream(ctx, l.stream, l.subject(sessionID), func(_ string, data []byte) error {
		buf.Write(data)
		buf.WriteByte('\n')
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("jsstore: read the event log of session %q: %w", sessionID, err)
	}
	if buf.Len() == 0 {
		return nil, fmt.Errorf("jsstore: the event log (stream %s) holds no frame of session %q", l.stream.CachedInfo().Config.Name, sessionID)
	}
	return &buf, nil
}
