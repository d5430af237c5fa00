package metrics

import "github.com/prometheus/client_golang/prometheus"

// The metrics of gateway edge and gateway worker (package cluster), each
// registered by the role that has them, so that gateway run shows none.

// Node exports, for an edge or a worker, gateway_cluster_connected
// (whether the node is connected to NATS) and gateway_cluster_draining
// (whether it is stopping), asking at each scrape. Call it once.
func (m *Metrics) Node(connected, draining func() bool) {
	m.reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "gateway_cluster_connected", Help: "Whether this edge or worker is connected to the cluster's NATS.",
		}, func() float64 { return b2f(connected()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "gateway_cluster_draining", Help: "Whether this edge or worker is stopping (a worker lets its turns finish, an edge its operations).",
		}, func() float64 { return b2f(draining()) }),
	)
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// Worker exports a worker's threads: gateway_cluster_threads_owned (the
// leases it holds, asking owned at each scrape),
// gateway_cluster_claims_total{result} and
// gateway_cluster_leases_lost_total, which Claim and LeaseLost count.
// Call it once, before those.
func (m *Metrics) Worker(owned func() int) {
	m.claims = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gateway_cluster_claims_total", Help: "Claims of a free thread by this worker: won, or lost to another worker that claimed it first.",
	}, []string{"result"})
	m.leasesLost = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "gateway_cluster_leases_lost_total", Help: "Threads whose lease this worker could not renew (another worker may own them now).",
	})
	m.claims.WithLabelValues("won")
	m.claims.WithLabelValues("lost")
	m.reg.MustRegister(m.claims, m.leasesLost, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "gateway_cluster_threads_owned", Help: "Threads this worker holds the lease of.",
	}, func() float64 { return float64(owned()) }))
}

// Claim counts a claim this worker made: won, or lost to another worker.
func (m *Metrics) Claim(won bool) {
	m.claims.WithLabelValues(map[bool]string{true: "won", false: "lost"}[won]).Inc()
}

// LeaseLost counts a lease this worker lost.
func (m *Metrics) LeaseLost() { m.leasesLost.Inc() }

// Edge exports an edge's work: gateway_edge_inbound_total{platform,
// result} and gateway_edge_operations_total{platform, op, result}, which
// Published and Performed count (m is then a cluster/edge Observer).
// Call it once, before those.
func (m *Metrics) Edge() {
	m.inbound = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gateway_edge_inbound_total",
		Help: "Inbound events this edge put on the cluster's stream, by platform and result: stored, duplicate (dropped by the duplicate window), error (a try that failed; it is tried again).",
	}, []string{"platform", "result"})
	m.operations = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gateway_edge_operations_total",
		Help: "Operations the workers asked of this edge, by platform, operation and result: ok, error, deduplicated (answered with the result of an earlier try), busy (another edge is performing it).",
	}, []string{"platform", "op", "result"})
	m.reg.MustRegister(m.inbound, m.operations)
}

// Published counts an inbound event's publish.
func (m *Metrics) Published(platform, result string) {
	m.inbound.WithLabelValues(platform, result).Inc()
}

// Performed counts an operation answered.
func (m *Metrics) Performed(platform, op, result string) {
	m.operations.WithLabelValues(platform, op, result).Inc()
}
