package replay

import (
	"bytes"
	"io"
	"os"
	"runtime"
	"testing"
)

// loopStream repeats a recorded stream until it has at least n frames.
func loopStream(tb testing.TB, name string, n int) ([]byte, int) {
	tb.Helper()
	data, err := os.ReadFile("testdata/streams/" + name + ".ndjson")
	if err != nil {
		tb.Fatal(err)
	}
	per := bytes.Count(data, []byte("\n"))
	var b bytes.Buffer
	frames := 0
	for frames < n {
		b.Write(data)
		frames += per
	}
	return b.Bytes(), frames
}

// BenchmarkReplay measures `gateway replay` end to end (decode, project,
// dispatch into the recording channel, JSON output) on
// claude-agent-acp.long-markdown looped to about 50,000 frames, once per
// --limits preset: the platforms' costs side by side on the same stream,
// with the allocations per frame of each.
func BenchmarkReplay(b *testing.B) {
	for _, preset := range []string{"web", "discord", "slack", "none"} {
		b.Run(preset, func(b *testing.B) {
			in, frames := loopStream(b, "claude-agent-acp.long-markdown", 50_000)
			o := Options{Stream: defaultStream(), Preset: testPresets[preset], FrameInterval: DefaultFrameInterval}
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for b.Loop() {
				if _, err := Run(b.Context(), bytes.NewReader(in), io.Discard, o); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*frames)/b.Elapsed().Seconds(), "frames/s")
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(b.N*frames), "allocs/frame")
		})
	}
}
