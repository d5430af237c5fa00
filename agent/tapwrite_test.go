package agent

import (
	"log/slog"
	"testing"

	"github.com/acpgw/gateway/projector"
)

// stuckStdin is an agent's stdin that takes nothing until released (the
// agent reads it only once its stdout was read).
type stuckStdin struct {
	entered, release chan struct{}
}

func (s stuckStdin) Write(p []byte) (int, error) {
	close(s.entered)
	<-s.release
	return len(p), nil
}

// TestTapReadsWhileAWriteWaits: while a write to the agent's stdin waits
// (a large prompt into a full pipe), the agent's output is still read and
// handled; holding the tap's lock through the write would stop the reader
// and, with an agent that waits for its output to be read, both sides.
func TestTapReadsWhileAWriteWaits(t *testing.T) {
	in := stuckStdin{entered: make(chan struct{}), release: make(chan struct{})}
	var updates int
	tp := &tap{
		log: slog.New(slog.DiscardHandler), stdin: in, done: make(chan struct{}),
		onUpdate: func(projector.Update) { updates++ }, onAnswered: func(string) {},
		onRequest: func([]byte, string, []byte) {}, onElicit: func(_, _ []byte) {}, onComplete: func([]byte) {},
	}
	wrote := make(chan error, 1)
	go func() {
		_, err := tp.Write([]byte(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}` + "\n"))
		wrote <- err
	}()
	<-in.entered
	if !tp.mu.TryLock() {
		close(in.release)
		t.Fatal("the tap's lock is held while the write waits for the agent: the reader would stop")
	}
	tp.mu.Unlock()
	tp.line([]byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}`))
	if updates != 1 {
		t.Errorf("%d updates handled while the write waited; want 1", updates)
	}
	close(in.release)
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
}
