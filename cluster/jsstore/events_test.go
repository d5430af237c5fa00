package jsstore_test

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpgw/gateway/cluster"
	"github.com/acpgw/gateway/cluster/clustertest"
	"github.com/acpgw/gateway/cluster/jsstore"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func jsFor(t testing.TB, url string) jetstream.JetStream {
	t.Helper()
	nc, err := cluster.Connect(cluster.Config{NATS: cluster.NATS{URL: url}}, t.Name())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

func openEvents(t testing.TB, js jetstream.JetStream, maxBytes int64) *jsstore.EventLog {
	t.Helper()
	l, err := jsstore.OpenEventLog(t.Context(), js, jsstore.EventLogOptions{Cluster: "gw", MaxAge: time.Hour, MaxBytes: maxBytes})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func frame(session string, i int, pad int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":%q,"n":%d,"pad":%q}}`, session, i, strings.Repeat("x", pad))
}

func readAll(t *testing.T, l *jsstore.EventLog, session string) string {
	t.Helper()
	r, err := l.Reader(t.Context(), session)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Every frame written is read back, in order, on its session's subject
// only; a session id that is not a subject token is fine.
func TestEventLogOrder(t *testing.T) {
	n := clustertest.StartNode(t)
	l := openEvents(t, jsFor(t, n.ClientURL()), 64<<20)
	sessions := []string{"s.1", "s *>2"}
	ws := []*jsstore.EventWriter{l.Writer(sessions[0]), l.Writer(sessions[1])}
	var want [2]strings.Builder
	for i := range 3000 {
		k := i % 3 % 2
		f := frame(sessions[k], i, i%50)
		if err := ws[k].Write([]byte(f)); err != nil {
			t.Fatal(err)
		}
		want[k].WriteString(f + "\n")
	}
	if err := ws[0].Write([]byte("two\nlines")); err == nil {
		t.Error("a frame with a newline was written")
	}
	for _, w := range ws {
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	for k, s := range sessions {
		if got := readAll(t, l, s); got != want[k].String() {
			t.Errorf("session %q: read %d bytes, want %d (in write order)", s, len(got), want[k].Len())
		}
	}
	if _, err := l.Reader(t.Context(), "unknown"); err == nil || !strings.Contains(err.Error(), `no frame of session "unknown"`) {
		t.Errorf("reading an unknown session: %v", err)
	}
	if err := ws[0].Write([]byte("{}")); err == nil {
		t.Error("a write after Close was taken")
	}
}

// The stream keeps what cluster.eventLog allows: past maxBytes the oldest
// frames go, and reopening with other limits applies them.
func TestEventLogRetention(t *testing.T) {
	n := clustertest.StartNode(t)
	js := jsFor(t, n.ClientURL())
	l := openEvents(t, js, 1<<20)
	w := l.Writer("s")
	var frames []string
	for i := range 300 { // ~2.4 MiB
		f := frame("s", i, 8<<10)
		frames = append(frames, f)
		if err := w.Write([]byte(f)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(readAll(t, l, "s"), "\n"), "\n")
	if len(got) >= len(frames) || len(got) < 50 {
		t.Fatalf("kept %d of %d frames over a 1 MiB limit", len(got), len(frames))
	}
	if tail := frames[len(frames)-len(got):]; strings.Join(got, "\n") != strings.Join(tail, "\n") {
		t.Fatal("the frames kept are not the newest, in order")
	}
	openEvents(t, js, 2<<20)
	st, err := js.Stream(context.Background(), "gw_events")
	if err != nil {
		t.Fatal(err)
	}
	if c := st.CachedInfo().Config; c.MaxBytes != 2<<20 || c.MaxAge != time.Hour {
		t.Fatalf("stream limits after reopening: %d bytes, %v", c.MaxBytes, c.MaxAge)
	}
	if _, err := jsstore.OpenEventLog(t.Context(), js, jsstore.EventLogOptions{Cluster: "gw"}); err == nil {
		t.Error("an event log without limits was opened")
	}
}

// A frame larger than the server's maximum payload (1 MiB; an agent's
// line may be 10 MiB) goes in parts and reads back whole; a record whose
// parts are not all there (a write cut off) is skipped, the rest kept.
func TestEventLogLargeFrame(t *testing.T) {
	n := clustertest.StartNode(t)
	js := jsFor(t, n.ClientURL())
	l := openEvents(t, js, 64<<20)
	w := l.Writer("s")
	big := frame("s", 1, 3<<20+17)
	want := frame("s", 0, 10) + "\n" + big + "\n"
	for _, f := range []string{frame("s", 0, 10), big} {
		if err := w.Write([]byte(f)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	// A torn record: two of three parts, then a part out of place.
	for _, part := range []string{"1/3", "2/3", "3/4"} {
		m := nats.NewMsg("gw.events._cw")
		m.Header.Set("Gateway-Part", part)
		m.Data = []byte("torn")
		if _, err := js.PublishMsg(t.Context(), m); err != nil {
			t.Fatal(err)
		}
	}
	last := frame("s", 2, 10)
	if err := w.Write([]byte(last)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want += last + "\n"
	if got := readAll(t, l, "s"); got != want {
		t.Fatalf("read %d bytes, want %d: the large frame did not come back whole and in place", len(got), len(want))
	}
}

// Many sessions writing at once on one connection (up to 8,000 frames
// unacknowledged, over the connection's 4,000): every session's frames are
// all there, in order. (A write that finds the connection stalled waits
// for acks and tries again; on an idle machine the acks come before the
// stall, so this does not force that path: a loaded one did, in
// BenchmarkEventWrite.)
func TestEventLogManyWriters(t *testing.T) {
	n := clustertest.StartNode(t)
	l := openEvents(t, jsFor(t, n.ClientURL()), 256<<20)
	const writers, frames = 8, 1500
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for k := range writers {
		wg.Go(func() {
			w := l.Writer(fmt.Sprint("s", k))
			for i := range frames {
				if err := w.Write([]byte(frame(fmt.Sprint("s", k), i, 100))); err != nil {
					errs[k] = err
					return
				}
			}
			errs[k] = w.Close()
		})
	}
	wg.Wait()
	for k, err := range errs {
		if err != nil {
			t.Fatalf("writer %d: %v", k, err)
		}
	}
	for k := range writers {
		var want strings.Builder
		for i := range frames {
			want.WriteString(frame(fmt.Sprint("s", k), i, 100) + "\n")
		}
		if got := readAll(t, l, fmt.Sprint("s", k)); got != want.String() {
			t.Fatalf("session s%d: the frames read back differ from those written", k)
		}
	}
}
