package edge

import (
	"context"
	"encoding/json"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/cluster/wire"
	"github.com/acpgw/gateway/sysmsg"
)

// notPassed is why a file fetched here is left out of what the worker
// gets, for the agent.
const notPassed = "too large to pass between the gateway's machines"

// payloadRoom is what an answer keeps of a NATS message for its headers
// and the rest of the result.
const payloadRoom = 64 << 10

// fetched fits the files an event's Fetch read into one answer: a NATS
// message holds at most the server's max_payload (1 MiB by default), and
// an answer larger than that never reaches the worker, which then waits
// out its give-up and starts the turn without any of the files. The
// largest files' contents are left out (Skipped says so, for the agent)
// until the rest fits, and the thread is told of each, once per event
// (sysmsg.FileNotPassed).
func (e *Edge) fetched(ctx context.Context, event channels.MessageID, in channels.Inbound, files []channels.File) []channels.File {
	most := int(e.o.Conn.MaxPayload()) - payloadRoom
	size := func(fs []channels.File) int {
		b, err := json.Marshal(wire.Result{Files: fs, Edge: e.o.ID})
		if err != nil {
			return 0
		}
		return len(b)
	}
	if size(files) <= most {
		return files
	}
	files = append([]channels.File(nil), files...)
	var left []sysmsg.FileNotPassed
	for size(files) > most {
		big, n := -1, 0
		for i, f := range files {
			if c := len(f.Data) + len(f.Text); c > n {
				big, n = i, c
			}
		}
		if big < 0 {
			break // names and links alone: nothing more to leave out
		}
		f := files[big]
		if f.Size <= 0 {
			f.Size = n
		}
		alone := size([]channels.File{f}) <= most
		f.Data, f.Text, f.Skipped = nil, "", notPassed
		files[big] = f
		left = append(left, sysmsg.FileNotPassed{Name: f.Name, Size: f.Size, Limit: most / 4 * 3, Together: alone})
	}
	if len(left) > 0 && e.firstRefusal(event) {
		for _, f := range left {
			m := channels.Message{Kind: channels.KindNotice, Text: sysmsg.Text(f)}
			if _, err := e.o.Adapter.Post(ctx, in.Thread, m); err != nil {
				e.o.Log.Warn("edge: telling the thread of a file too large to pass", "thread", in.Thread, "file", f.Name, "err", err)
			}
		}
	}
	return files
}

// firstRefusal reports whether the files of event were not told too large
// yet (a worker's retry of the fetch reads them again), and marks them so.
func (e *Edge) firstRefusal(event channels.MessageID) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	c, ok := e.callbacks[event]
	if !ok || c.refused {
		return false
	}
	c.refused = true
	e.callbacks[event] = c
	return true
}
