package testlog

import (
	"fmt"
	"testing"
)

// recorder is a testing.TB that keeps what Errorf reports.
type recorder struct {
	testing.TB
	errors []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func TestFailOnError(t *testing.T) {
	r := &recorder{TB: t}
	log := FailOnError(r)
	log.Info("fine")
	log.Warn("still fine")
	log.Error("failed to queue notification; closing connection", "capacity", 1024)
	if len(r.errors) != 1 {
		t.Fatalf("errors reported = %q, want one", r.errors)
	}
	if want := `logged: ERROR "failed to queue notification; closing connection" capacity=1024`; r.errors[0] != want {
		t.Errorf("report = %q, want %q", r.errors[0], want)
	}
}

func TestFailOnSDKError(t *testing.T) {
	r := &recorder{TB: t}
	log := FailOnSDKError(r)
	log.Error("the gateway's own error, logged on purpose")
	log.With("component", "other").Error("not the SDK")
	log.With("agent", "demo").With("component", SDKComponent).WithGroup("g").Error("failed to parse incoming message")
	if len(r.errors) != 1 {
		t.Fatalf("errors reported = %q, want only the SDK's", r.errors)
	}
	if want := `logged: ERROR "failed to parse incoming message" agent=demo component=acp-sdk`; r.errors[0] != want {
		t.Errorf("report = %q, want %q", r.errors[0], want)
	}
}
