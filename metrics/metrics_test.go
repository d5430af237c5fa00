package metrics

import (
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
)

func TestExposition(t *testing.T) {
	m := New()
	m.Turn("web", "end_turn", nil)
	m.Turn("web", "", errors.New("agent exited"))
	m.Update("agent_message_chunk")
	m.Update("agent_message_chunk")
	m.Suppressed("duplicate", 3)
	m.Agent(1)
	threads := 3
	m.Threads(func() int { return threads })
	c := m.Channel("discord")
	c.Delivered("post", channels.KindText, 30*time.Millisecond)
	c.Delivered("edit", channels.KindTool, 2*time.Second)
	c.RateLimited("edit")

	rr := httptest.NewRecorder()
	m.Handler().ServeHTTP(rr, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rr.Body)
	for _, want := range []string{
		`gateway_turns_total{platform="web",stop_reason="end_turn"} 1`,
		`gateway_turns_total{platform="web",stop_reason="error"} 1`,
		`gateway_acp_updates_total{tag="agent_message_chunk"} 2`,
		`gateway_acp_updates_suppressed_total{reason="duplicate"} 3`,
		`gateway_messages_total{kind="text",op="post",platform="discord"} 1`,
		`gateway_messages_total{kind="tool",op="edit",platform="discord"} 1`,
		`gateway_rate_limited_total{platform="discord",scope="edit"} 1`,
		`gateway_delivery_latency_seconds_bucket{op="edit",platform="discord",le="2"} 1`,
		`gateway_delivery_latency_seconds_bucket{op="edit",platform="discord",le="1"} 0`,
		`gateway_agent_processes 1`,
		`gateway_threads_live 3`,
		`go_goroutines`,
		`process_resident_memory_bytes`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	// The gauge asks at each scrape.
	threads = 1
	rr = httptest.NewRecorder()
	m.Handler().ServeHTTP(rr, httptest.NewRequest("GET", "/metrics", nil))
	if body, _ := io.ReadAll(rr.Body); !strings.Contains(string(body), "gateway_threads_live 1\n") {
		t.Errorf("after the count changed, metrics lack gateway_threads_live 1")
	}
}
