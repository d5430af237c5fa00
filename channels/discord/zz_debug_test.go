package discord

import (
	"testing"

	"github.com/acpgw/gateway/channels/channeltest/e2e"
)

func TestZZDebug(t *testing.T) {
	e2e.Run(t, demoAgentEnv, func(t *testing.T) e2e.Driver {
		d := newDriver(t)
		f := d.f
		t.Cleanup(func() {
			f.mu.Lock()
			defer f.mu.Unlock()
			for _, m := range f.msgs {
				t.Logf("msg %s ch=%s author=%s reply=%s %q", m.ID, m.Channel, m.Author.Name, m.ReplyTo, m.Content)
			}
		})
		return d
	})
}
