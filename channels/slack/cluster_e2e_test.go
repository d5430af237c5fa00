package slack

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/acpgw/gateway/channels/channeltest/e2e"
)

// TestClusterOfEdgesAndWorkers runs the cluster case on Slack: the 2
// edges share the app's Socket Mode connections (the fake sends each
// event to one at random and, after an edge stopped, sends again what was
// not acknowledged), each message mentions the app (an edge keeps no
// store, so it knows a thread once it saw it mentioned), and the fake
// holds posts to Slack's limit of a channel.
func TestClusterOfEdgesAndWorkers(t *testing.T) {
	f := newFake(t, fakeOptions{sockets: true, channelLimit: true})
	f.addUser(ann, "Ann")
	e2e.RunCluster(t, &clusterDriver{f: f, inChan: map[string]string{}})
}

// clusterDriver is the cluster case's hands and eyes on the fake Slack.
type clusterDriver struct {
	f        *fakeSlack
	channels int // the threads share channels two by two, as a team's do

	mu      sync.Mutex        // guards the fields below
	threads map[int]string    // i → its thread's ts, once opened
	inChan  map[string]string // thread → its channel
}

var _ e2e.ClusterDriver = (*clusterDriver)(nil)

func (d *clusterDriver) Platform() string { return Platform }

// Places adds the channels: Slack's post limit is a channel's, which its
// threads share.
func (d *clusterDriver) Places(t *testing.T, n int) {
	d.channels = n / 2
	for i := range d.channels {
		d.f.addChannel(fmt.Sprintf("C0CHAN%d", i))
	}
	d.threads = map[int]string{}
}

func (d *clusterDriver) Channel(int) string {
	return fmt.Sprintf(`channels:
  slack:
    appToken: %s
    botToken: %s
    apiURL: %s/api/
    streaming: edits
`, d.f.appToken, d.f.botToken, d.f.srv.URL)
}

func (d *clusterDriver) UserID(p e2e.Person) string { return person(p) }

func (d *clusterDriver) Live(t *testing.T, ctx context.Context) {
	if err := d.f.waitFor(ctx, "both edges' sockets", func() bool { return len(d.f.sockets.open) >= 2 }); err != nil {
		t.Fatal(err)
	}
}

// Say mentions the app in the message; the first opens the thread.
func (d *clusterDriver) Say(ctx context.Context, i int, text string) (string, error) {
	channel := fmt.Sprintf("C0CHAN%d", i%d.channels)
	d.mu.Lock()
	th := d.threads[i]
	d.mu.Unlock()
	s, err := d.f.say(ctx, sayOptions{user: ann, channel: channel, thread: th, text: text, mention: true})
	if err != nil {
		return "", err
	}
	if th == "" {
		th = s.ts
		d.mu.Lock()
		d.threads[i], d.inChan[th] = th, channel
		d.mu.Unlock()
	}
	return th, nil
}

func (d *clusterDriver) Said(th string) []string {
	d.mu.Lock()
	c := d.inChan[th]
	d.mu.Unlock()
	var out []string
	for _, m := range d.f.thread(c, th) {
		out = append(out, m.Text)
	}
	return out
}

func (d *clusterDriver) Changed() <-chan struct{} { return driver{d.f}.Changed() }

// Posts counts th's chat.postMessage calls.
func (d *clusterDriver) Posts(th string) int {
	n := 0
	for _, c := range d.f.callsTo("chat.postMessage") {
		if c.Form.Get("thread_ts") == th {
			n++
		}
	}
	return n
}

// EdgeStopped has Slack send again what the edge did not acknowledge
// before it stopped.
func (d *clusterDriver) EdgeStopped(t *testing.T, ctx context.Context) {
	if _, err := d.f.redeliverUnacked(ctx); err != nil {
		t.Fatal(err)
	}
}

// Check: Slack's posting limit is the channel's, and the edges between
// them keep to it (one edge performs a channel's posts).
func (d *clusterDriver) Check(t *testing.T) {
	if got := d.f.limitedCount(); got != 0 {
		t.Errorf("the fake answered %d posts with 429", got)
	}
}

func (d *clusterDriver) Requests() int {
	d.f.mu.Lock()
	defer d.f.mu.Unlock()
	return len(d.f.calls)
}
