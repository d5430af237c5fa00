package agent_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/internal/testlog"
)

// liveThreads is how many threads BenchmarkLiveThreadHeap keeps open.
const liveThreads = 200

// BenchmarkLiveThreadHeap starts 200 demo agents, each with a session that
// has run one turn, and reports the gateway heap each such thread holds
// (HeapInuse after a GC, its growth over the 200, divided by 200; the
// agent processes are apart from it). Run it with -benchtime=1x: one
// iteration starts 200 processes.
func BenchmarkLiveThreadHeap(b *testing.B) {
	spec := demoSpec(b.TempDir())
	log := testlog.FailOnSDKError(b)
	var perThread float64
	for b.Loop() {
		before := heapInuse()
		procs := make([]*agent.Process, 0, liveThreads)
		sessions := make([]*agent.Session, 0, liveThreads)
		for range liveThreads {
			p, err := agent.Start(b.Context(), spec, agent.Options{Logger: log})
			if err != nil {
				b.Fatalf("Start: %v", err)
			}
			procs = append(procs, p)
			var rec recorder
			s, err := p.NewSession(b.Context(), b.TempDir(), &rec)
			if err != nil {
				b.Fatalf("NewSession: %v", err)
			}
			if _, err := s.Prompt(b.Context(), "echo hi"); err != nil {
				b.Fatalf("Prompt: %v", err)
			}
			sessions = append(sessions, s)
		}
		after := heapInuse()
		perThread = float64(int64(after)-int64(before)) / liveThreads
		runtime.KeepAlive(sessions)
		b.StopTimer()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		for _, p := range procs {
			if err := p.Stop(ctx); err != nil {
				b.Errorf("Stop: %v", err)
			}
		}
		cancel()
		b.StartTimer()
	}
	b.ReportMetric(perThread/1024, "KiB/thread")
}

// heapInuse is the heap in use after a collection.
func heapInuse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}
