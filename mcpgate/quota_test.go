package mcpgate_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/acpgw/gateway/mcpgate"
)

// TestSendFileQueueBounded: 40 concurrent sends of 9 MiB through the real
// socket to a thread whose lane takes its time: at most the quota's worth
// waits (the rest is refused, saying why, before it is read); once the
// lane has posted them, each waiting call answers and a new send goes
// through.
func TestSendFileQueueBounded(t *testing.T) {
	ws := t.TempDir()
	const size = 9 << 20
	if err := os.WriteFile(filepath.Join(ws, "big.bin"), make([]byte, size), 0o600); err != nil {
		t.Fatal(err)
	}
	th := &mcpgate.FakeThread{Hold: make(chan struct{}), Held: make(chan mcpgate.File, 40)}
	s, err := mcpgate.Open(mcpgate.Options{Dir: filepath.Join(t.TempDir(), "mcp"), Root: ws, MaxFileBytes: 16 << 20, Command: "/bin/gateway"}, th)
	if err != nil {
		t.Fatal(err)
	}
	s.SetAgent(os.Getpid()) // the test is the agent
	defer s.Close()
	type result struct{ answer, refusal string }
	results := make(chan result, 40)
	var wg sync.WaitGroup
	for range 40 {
		wg.Go(func() {
			a, r, err := mcpgate.CallFile(t.Context(), s.SocketPath(), s.Token(), "big.bin")
			if err != nil {
				t.Error(err)
			}
			results <- result{a, r}
		})
	}
	held, refused := 0, 0
	for held+refused < 40 {
		select {
		case <-th.Held:
			held++
		case r := <-results:
			if !strings.Contains(r.refusal, "still waiting to be posted") {
				t.Fatalf("a send answered %q / %q while the lane held the others; want a refusal for the queue", r.answer, r.refusal)
			}
			refused++
		}
	}
	if held < 1 || held*size > mcpgate.DefaultMaxQueuedBytes {
		t.Errorf("%d files of 9 MiB waited at once, want 1 to %d", held, mcpgate.DefaultMaxQueuedBytes/size)
	}
	close(th.Hold) // the lane posts them
	wg.Wait()
	close(results)
	sent := 0
	for r := range results {
		if strings.HasPrefix(r.answer, "sent big.bin") {
			sent++
		}
	}
	if sent != held {
		t.Errorf("%d of the %d waiting sends answered sent", sent, held)
	}
	if a, r, err := mcpgate.CallFile(t.Context(), s.SocketPath(), s.Token(), "big.bin"); err != nil || !strings.HasPrefix(a, "sent big.bin") {
		t.Errorf("a send once the queue is empty: %q, %q, %v", a, r, err)
	}
}

// TestSendFileNameShowsFormatCharacters: the name of a file the agent
// sends is the thread's to read: its format characters are written
// visibly.
func TestSendFileNameShowsFormatCharacters(t *testing.T) {
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "invoice\u202efdp.exe"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	th := &mcpgate.FakeThread{}
	s, err := mcpgate.Open(mcpgate.Options{Dir: filepath.Join(t.TempDir(), "mcp"), Root: ws, MaxFileBytes: 16, Command: "/bin/gateway"}, th)
	if err != nil {
		t.Fatal(err)
	}
	s.SetAgent(os.Getpid()) // the test is the agent
	defer s.Close()
	if _, r, err := mcpgate.CallFile(t.Context(), s.SocketPath(), s.Token(), "invoice\u202efdp.exe"); err != nil || r != "" {
		t.Fatalf("send: %q, %v", r, err)
	}
	if files, _, _ := th.Calls(); len(files) != 1 || files[0].Name != "invoice[U+202E]fdp.exe" {
		t.Errorf("sent %+v, want the name with [U+202E]", files)
	}
}
