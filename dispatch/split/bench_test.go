package split

import (
	"os"
	"strings"
	"testing"
)

func BenchmarkSplit(b *testing.B) {
	data, err := os.ReadFile("testdata/reply.md")
	if err != nil {
		b.Fatal(err)
	}
	s := string(data)
	lim := Limits{MaxChars: 2000}
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		Split(s, lim)
	}
}

// BenchmarkSplitLarge splits about 100 KB of markdown into Discord-sized parts.
func BenchmarkSplitLarge(b *testing.B) {
	data, err := os.ReadFile("testdata/reply.md")
	if err != nil {
		b.Fatal(err)
	}
	s := strings.Repeat(string(data), 100_000/len(data)+1)
	lim := Limits{MaxChars: 2000, MaxLines: 40}
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		Split(s, lim)
	}
}
