package discord

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels/channeltest/e2e"
)

// TestClusterOfEdgesAndWorkers runs the cluster case on Discord: the 2
// edges are shards 0 and 1 of 2, each shard its own identify bucket (the
// edges start together), the fake counting rate limits in real time and
// the threads in guilds of both shards.
func TestClusterOfEdgesAndWorkers(t *testing.T) {
	f := newFake(t)
	f.shard(2, 2)
	f.limitRates(time.Now)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the fake: %d answered 429, violations %q", f.tooManyRequests(), f.Violations())
		}
	})
	e2e.RunCluster(t, &clusterDriver{f: f})
}

// clusterDriver is the cluster case's hands and eyes on the fake Discord.
type clusterDriver struct {
	f       *fakeDiscord
	mu      sync.Mutex // guards threads
	threads []string   // the bot's threads, one in a guild of each shard in turn
}

var _ e2e.ClusterDriver = (*clusterDriver)(nil)

func (d *clusterDriver) Platform() string { return Platform }

func (d *clusterDriver) Places(t *testing.T, n int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i := range n {
		_, th := d.f.addGuild(i % 2)
		d.threads = append(d.threads, th)
	}
}

func (d *clusterDriver) Channel(i int) string {
	return fmt.Sprintf(`channels:
  discord:
    token: test-token
    apiBaseURL: %s
    shard: {id: %d, count: 2}
`, d.f.URL(), i)
}

func (d *clusterDriver) UserID(p e2e.Person) string { return person(p).ID }

func (d *clusterDriver) Live(t *testing.T, ctx context.Context) {
	d.f.waitFor(ctx, "both shards live", func() bool {
		live := map[int]bool{}
		for c := range d.f.conns {
			if c.live {
				live[c.shard] = true
			}
		}
		return live[0] && live[1]
	})
}

func (d *clusterDriver) Say(_ context.Context, i int, text string) (string, error) {
	d.mu.Lock()
	th := d.threads[i]
	d.mu.Unlock()
	d.f.say(ann, th, text, false)
	return th, nil
}

// Said is the bot's messages as Discord shows them: without the white
// space around them (a streamed answer's last edit may end with a space;
// Discord trims it).
func (d *clusterDriver) Said(th string) []string {
	var out []string
	for _, m := range d.f.botMessages(th) {
		out = append(out, strings.TrimSpace(m.Content))
	}
	return out
}

func (d *clusterDriver) Changed() <-chan struct{} { return driver{d.f}.Changed() }

func (d *clusterDriver) Posts(th string) int {
	return len(d.f.requestsMatching("POST", "/channels/"+th+"/messages"))
}

func (d *clusterDriver) EdgeStopped(*testing.T, context.Context) {}

func (d *clusterDriver) Check(t *testing.T) {
	if got := d.f.tooManyRequests(); got != 0 {
		t.Errorf("the fake answered %d requests with 429: %q", got, d.f.limitedRequests())
	}
	for _, v := range d.f.Violations() {
		t.Errorf("protocol violation: %s", v)
	}
}

func (d *clusterDriver) Requests() int {
	d.f.mu.Lock()
	defer d.f.mu.Unlock()
	return len(d.f.requests)
}
