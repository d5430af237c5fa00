// Package metrics exposes the gateway's Prometheus metrics: turns, ACP
// updates by tag, updates the projector suppressed, posts and edits by
// platform, rate-limit hits, the event-to-delivery latency, running
// agent processes and live threads, with the Go runtime and process
// collectors. It has its own registry, served by Handler.
package metrics

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/acpgw/gateway/channels"
)

// Metrics holds the gateway's collectors. Its methods are safe for
// concurrent use.
type Metrics struct {
	reg        *prometheus.Registry
	turns      *prometheus.CounterVec
	updates    *prometheus.CounterVec
	suppressed *prometheus.CounterVec
	delivered  *prometheus.CounterVec
	rateLimits *prometheus.CounterVec
	latency    *prometheus.HistogramVec
	agents     prometheus.Gauge

	// A cluster role's (cluster.go), nil until it registers them.
	claims, inbound, operations *prometheus.CounterVec
	leasesLost                  prometheus.Counter
}

// New returns Metrics registered in a fresh registry (with the Go runtime
// and process collectors).
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		turns: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gateway_turns_total", Help: "Prompt turns that ended, by platform and ACP stop reason (\"error\" when the prompt failed).",
		}, []string{"platform", "stop_reason"}),
		updates: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gateway_acp_updates_total", Help: "ACP session/update notifications received, by sessionUpdate tag.",
		}, []string{"tag"}),
		suppressed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gateway_acp_updates_suppressed_total", Help: "Updates that produced nothing visible, by reason.",
		}, []string{"reason"}),
		delivered: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gateway_messages_total", Help: "Messages posted, edited or prompted, by platform, operation and kind.",
		}, []string{"platform", "op", "kind"}),
		rateLimits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gateway_rate_limited_total", Help: "Rate-limit answers from chat platforms, by platform and scope.",
		}, []string{"platform", "scope"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "gateway_delivery_latency_seconds",
			Help:    "Time from an agent event reaching the thread's lane to the platform showing it.",
			Buckets: []float64{.01, .05, .1, .25, .5, 1, 2, 5, 10, 30},
		}, []string{"platform", "op"}),
		agents: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "gateway_agent_processes", Help: "Agent processes running.",
		}),
	}
	m.reg.MustRegister(m.turns, m.updates, m.suppressed, m.delivered, m.rateLimits, m.latency, m.agents,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// Turn counts an ended turn.
func (m *Metrics) Turn(platform, stopReason string, err error) {
	if err != nil {
		stopReason = "error"
	}
	if stopReason == "" {
		stopReason = "unknown"
	}
	m.turns.WithLabelValues(platform, stopReason).Inc()
}

// Update counts an ACP update by its raw tag.
func (m *Metrics) Update(tag string) { m.updates.WithLabelValues(tag).Inc() }

// Suppressed counts updates that showed nothing, by reason.
func (m *Metrics) Suppressed(reason string, n int) {
	m.suppressed.WithLabelValues(reason).Add(float64(n))
}

// Agent moves the running-agents gauge by delta.
func (m *Metrics) Agent(delta int) { m.agents.Add(float64(delta)) }

// Connected exports, as gateway_channel_connected{platform}, whether the
// platform's adapter is connected (1) or not (0), asking check at each
// scrape. Call it once per platform.
func (m *Metrics) Connected(platform string, check func() error) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name:        "gateway_channel_connected",
		Help:        "Whether the platform's adapter is connected to the platform (or listening, for the web chat).",
		ConstLabels: prometheus.Labels{"platform": platform},
	}, func() float64 {
		if check() != nil {
			return 0
		}
		return 1
	}))
}

// Threads exports, as gateway_threads_live, how many threads the gateway
// holds in memory, asking count at each scrape. Call it once.
func (m *Metrics) Threads(count func() int) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "gateway_threads_live",
		Help: "Threads the gateway holds in memory (each with its own goroutines), busy or idle.",
	}, func() float64 { return float64(count()) }))
}

// Channel returns the delivery observer of one platform (a
// dispatch.Observer).
func (m *Metrics) Channel(platform string) *Channel { return &Channel{m: m, platform: platform} }

// Channel counts one platform's deliveries.
type Channel struct {
	m        *Metrics
	platform string
}

// Delivered implements dispatch.Observer.
func (c *Channel) Delivered(op string, kind channels.Kind, latency time.Duration) {
	c.m.delivered.WithLabelValues(c.platform, op, string(kind)).Inc()
	c.m.latency.WithLabelValues(c.platform, op).Observe(latency.Seconds())
}

// RateLimited implements dispatch.Observer.
func (c *Channel) RateLimited(scope string) {
	if scope == "" {
		scope = "unknown"
	}
	c.m.rateLimits.WithLabelValues(c.platform, scope).Inc()
}
