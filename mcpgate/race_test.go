package mcpgate_test

import (
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/acpgw/gateway/mcpgate"
)

// TestSendFileSwapRace: while the agent swaps a directory of its
// workspace for a symlink to a directory outside, and back, over and
// over, send_file through the real socket never sends the outside file
// (the open goes through an os.Root of the workspace).
func TestSendFileSwapRace(t *testing.T) {
	ws, outside := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "f"), []byte("SECRET"), 0o600); err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(ws, "d.real")
	if err := os.Mkdir(real, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(real, "f"), []byte("inside"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(ws, "d.link")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	d := filepath.Join(ws, "d")
	if err := os.Rename(real, d); err != nil {
		t.Fatal(err)
	}
	th := &mcpgate.FakeThread{}
	s, err := mcpgate.Open(mcpgate.Options{Dir: filepath.Join(t.TempDir(), "mcp"), Root: ws, MaxFileBytes: 1024, Command: "/bin/gateway"}, th)
	if err != nil {
		t.Fatal(err)
	}
	s.SetAgent(os.Getpid()) // the test is the agent
	defer s.Close()

	// The swapper: d is the real directory, then the symlink, then the
	// real directory again, until the sends are done.
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() {
		for !stop.Load() {
			os.Rename(d, real)
			os.Rename(link, d)
			os.Rename(d, link)
			os.Rename(real, d)
		}
	})
	const n = 1500
	var sent, refused atomic.Int64
	var senders sync.WaitGroup
	for range 4 {
		senders.Go(func() {
			for range n / 4 {
				for _, p := range []string{"d/f", filepath.Join(ws, "d", "f")} {
					_, refusal, err := mcpgate.CallFile(t.Context(), s.SocketPath(), s.Token(), p)
					if err != nil {
						t.Error(err)
						return
					}
					if refusal == "" {
						sent.Add(1)
					} else {
						refused.Add(1)
					}
				}
			}
		})
	}
	senders.Wait()
	stop.Store(true)
	wg.Wait()
	files, _, _ := th.Calls()
	leaked := 0
	for _, f := range files {
		if string(f.Data) != "inside" {
			leaked++
		}
	}
	t.Logf("%d sent, %d refused", sent.Load(), refused.Load())
	if leaked != 0 {
		t.Errorf("%d of %d sends leaked the file outside the workspace, want 0", leaked, 2*n)
	}
	if len(files) == 0 {
		t.Errorf("no send went through; want the file inside sent while d is the real directory")
	}
}
