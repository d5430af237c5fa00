package store

import "testing"

// BenchmarkSetOpenMessages is one write of a thread's open messages (what
// a tool line that starts, or ends, costs once coalesced): three tool
// lines, set and then forgotten, alternately.
func BenchmarkSetOpenMessages(b *testing.B) {
	s := openTest(b)
	ctx := b.Context()
	ms := []OpenMessage{
		{Key: "tool:a", ID: "1700000000.000100", Lines: []OpenLine{{Key: "a", Text: "🛠️ go test ./... · cancelled"}}},
		{Key: "tool:b", ID: "1700000000.000200", Lines: []OpenLine{{Key: "b", Text: "📖 main.go · cancelled"}}},
		{Key: "tool:c", ID: "1700000000.000300", Lines: []OpenLine{{Key: "c", Text: "✏️ main.go · cancelled"}}},
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		set := ms
		if i%2 == 1 {
			set = nil
		}
		if err := s.SetOpenMessages(ctx, benchThread(i%100), set); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
