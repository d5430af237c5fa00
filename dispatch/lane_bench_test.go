package dispatch_test

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/acpgw/gateway/acpwire"
	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/dispatch"
	"github.com/acpgw/gateway/projector"
)

// nopEditor posts and edits without I/O, numbering the messages.
type nopEditor struct{ n *int }

func (nopEditor) Run(ctx context.Context, _ func(context.Context, channels.Inbound)) error {
	<-ctx.Done()
	return nil
}
func (a nopEditor) Post(_ context.Context, t channels.ThreadRef, _ channels.Message) (channels.Handle, error) {
	*a.n++
	return channels.Handle{Thread: t, ID: channels.MessageID(strconv.Itoa(*a.n))}, nil
}
func (nopEditor) Edit(context.Context, channels.Handle, channels.Message) error { return nil }
func (nopEditor) Limits() channels.Limits                                       { return channels.Limits{MaxMessageChars: 2000} }

func benchUpdates(b *testing.B, name string) []projector.Update {
	data, err := os.ReadFile("../replay/testdata/streams/" + name + ".ndjson")
	if err != nil {
		b.Fatal(err)
	}
	var ups []projector.Update
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var f acpwire.Frame
		if err := acpwire.Decode(sc.Bytes(), &f); err != nil {
			b.Fatal(err)
		}
		if f.Method == "session/update" {
			ups = append(ups, f.Update)
		}
	}
	return ups
}

// benchToolTurns runs a recorded tool storm through the projector and a
// lane (an editing adapter without I/O), one turn per iteration, each
// output pushed and stepped at once on a virtual clock a second apart.
func benchToolTurns(b *testing.B, onOpen func([]dispatch.Open)) {
	ups := benchUpdates(b, "synthetic.tool-storm")
	o := dispatch.Options{Adapter: nopEditor{n: new(int)}, Thread: channels.ThreadRef{Platform: "p", Channel: "c", Thread: "t"},
		Stream: projector.DefaultSettings(), Typing: never}
	setOpen(&o, onOpen)
	lane := dispatch.NewLane(o)
	p := projector.New(projector.DefaultSettings())
	out := make([]projector.Output, 0, 64)
	now := time.Unix(0, 0)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		lane.BeginTurn(now)
		out = p.BeginTurn(out[:0])
		for i := range ups {
			out = p.Apply(&ups[i], out[:0])
			lane.Push(now, out...)
			now = now.Add(time.Second)
			lane.Step(ctx, now)
		}
		out = p.EndTurn("end_turn", "", out[:0])
		lane.Push(now, out...)
		now = now.Add(time.Second)
		lane.Step(ctx, now)
	}
	b.ReportMetric(float64(b.N*len(ups))/b.Elapsed().Seconds(), "events/s")
}

func BenchmarkLaneToolTurn(b *testing.B) { benchToolTurns(b, nil) }

// BenchmarkLaneToolTurnOpen is BenchmarkLaneToolTurn with the open
// messages reported (what a thread owner does).
func BenchmarkLaneToolTurnOpen(b *testing.B) {
	n := 0
	benchToolTurns(b, func(o []dispatch.Open) { n += len(o) })
}

func setOpen(o *dispatch.Options, f func([]dispatch.Open)) { o.OnOpen = f }
