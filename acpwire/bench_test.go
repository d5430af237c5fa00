package acpwire

import (
	"encoding/json"
	"testing"
)

// benchStreams are the recordings the benchmarks decode.
var benchStreams = []struct{ name, file string }{
	{"long-markdown", "testdata/claude-agent-acp.long-markdown.ndjson"},
	{"tool-storm", "testdata/synthetic.tool-storm.ndjson"},
}

// BenchmarkDecode decodes every line of a stream with one reused Frame.
func BenchmarkDecode(b *testing.B) {
	for _, s := range benchStreams {
		lines := readLines(b, s.file)
		b.Run(s.name, func(b *testing.B) {
			var f Frame
			size := 0
			for _, l := range lines {
				size += len(l)
			}
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				for _, l := range lines {
					if err := Decode(l, &f); err != nil {
						b.Fatal(err)
					}
				}
			}
			reportPerFrame(b, len(lines))
		})
	}
}

// BenchmarkEnvelopeJSON decodes only the JSON-RPC envelope of every line
// with encoding/json, for comparison: params and result stay raw.
func BenchmarkEnvelopeJSON(b *testing.B) {
	type envelope struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	for _, s := range benchStreams {
		lines := readLines(b, s.file)
		b.Run(s.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, l := range lines {
					var e envelope
					if err := json.Unmarshal(l, &e); err != nil {
						b.Fatal(err)
					}
				}
			}
			reportPerFrame(b, len(lines))
		})
	}
}

func reportPerFrame(b *testing.B, frames int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(frames), "ns/frame")
}
