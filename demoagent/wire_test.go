package demoagent

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestIsAnswer(t *testing.T) {
	tests := []struct {
		line string
		want bool
	}{
		{`{"jsonrpc":"2.0","method":"session/update","params":{}}`, false},
		{`{"jsonrpc":"2.0","id":3,"method":"session/request_permission","params":{}}`, false},
		{`{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}`, true},
		{`{"jsonrpc":"2.0","id":"a\",\"method\":\"x","error":{"code":-32603,"message":"m"}}`, true},
		{`not json`, false},
	}
	for _, tc := range tests {
		if got := isAnswer([]byte(tc.line)); got != tc.want {
			t.Errorf("isAnswer(%s) = %v, want %v", tc.line, got, tc.want)
		}
	}
}

func TestWire(t *testing.T) {
	var out bytes.Buffer
	w := newWire(&out)
	seen, unwatch := w.watchFor(`"method":"m"`, `"id":"x"`)
	defer unwatch()
	w.Write([]byte(`{"method":"m","id":"y"}` + "\n"))
	select {
	case <-seen:
		t.Fatalf("watch fired on a line that lacks a needle")
	default:
	}
	w.Write([]byte(`{"method":"m","id":"x"}` + "\n"))
	select {
	case <-seen:
	default:
		t.Fatalf("watch did not fire on a matching line")
	}

	w.expectAnswer()
	w.close()
	if _, err := w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n")); !errors.Is(err, errWireClosed) {
		t.Errorf("write after close = %v, want errWireClosed", err)
	}
	w.waitAnswers() // the dropped answer settled the debt
	if got := strings.Count(out.String(), "\n"); got != 2 {
		t.Errorf("wrote %d lines, want 2 (none after close)", got)
	}
}

func TestRunStateDirError(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o600)
	err := Run(t.Context(), strings.NewReader(""), &bytes.Buffer{}, Options{StateDir: filepath.Join(file, "dir")})
	if err == nil || !strings.Contains(err.Error(), "create state dir") {
		t.Errorf("Run with a state dir under a file = %v, want a create state dir error", err)
	}
}
