package clustertest

import (
	"context"
	"os"
	"strconv"
	"testing"
)

// Threads is how many threads prompt at once in a harness test:
// CLUSTER_THREADS, or 8, a size CI affords.
func Threads(t testing.TB) int {
	s := os.Getenv("CLUSTER_THREADS")
	if s == "" {
		return 8
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 2 {
		t.Fatalf("CLUSTER_THREADS=%q: want a number of threads, at least 2", s)
	}
	return n
}

// WaitCtx is the test's context bounded by WaitTimeout.
func WaitCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), WaitTimeout)
	t.Cleanup(cancel)
	return ctx
}

// LogLevel is the log level of the harness's roles: CLUSTER_LOG_LEVEL
// (debug to follow every remote operation), info by default.
func LogLevel() string {
	if l := os.Getenv("CLUSTER_LOG_LEVEL"); l != "" {
		return l
	}
	return "info"
}
