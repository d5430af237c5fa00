package split

import (
	"os"
	"strings"
	"testing"
)

// BenchmarkSplit splits a 4,500-character reply with code fences into
// Discord-sized parts.
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

// BenchmarkSplitHard splits about 100 KB without a single space or line
// break, so that every part is a hard cut.
func BenchmarkSplitHard(b *testing.B) {
	s := strings.Repeat("abcdefghij", 10_000)
	lim := Limits{MaxChars: 2000}
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		Split(s, lim)
	}
}
