package tooldisplay

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rivo/uniseg"
)

const (
	womanTechnologist = "👩\u200d💻" // 3 code points, one cluster
	flagDE            = "🇩🇪"       // 2 code points, one cluster
	eAcute            = "e\u0301"  // 2 code points, one cluster
)

func TestCut(t *testing.T) {
	tests := []struct {
		name string
		in   string
		max  int
		want string
	}{
		{"no cut when short", "hello", 10, "hello"},
		{"no cut at exact length", "hello", 5, "hello"},
		{"max zero means no cut", "hello", 0, "hello"},
		{"max negative means no cut", "hello", -3, "hello"},
		{"empty", "", 3, ""},
		{"cut", "hello world", 8, "hello w…"},
		{"space before ellipsis dropped", "hello world", 7, "hello…"},
		{"max one", "hello", 1, "…"},
		{"multibyte", "héllo wörld", 4, "hél…"},
		{"zwj sequence not split", "ab" + womanTechnologist + "cd", 5, "ab…"},
		{"zwj sequence kept whole", "ab" + womanTechnologist + "cd", 6, "ab" + womanTechnologist + "…"},
		{"flag not split", "a" + flagDE + flagDE, 3, "a…"},
		{"flag kept whole", "a" + flagDE + flagDE, 4, "a" + flagDE + "…"},
		{"combining accent not split", "caf" + eAcute + "s", 4, "caf…"},
		{"combining accent kept whole", "caf" + eAcute + "st", 6, "caf" + eAcute + "…"},
		{"cluster wider than max", womanTechnologist + womanTechnologist, 2, "…"},
		{"invalid utf-8 replaced", "ab\xffcd", 0, "ab\uFFFDcd"},
		{"invalid utf-8 cut", "ab\xff\xfecdef", 4, "ab\uFFFD…"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Cut(tc.in, tc.max)
			if got != tc.want {
				t.Errorf("Cut(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
			}
		})
	}
}

func TestCutMiddle(t *testing.T) {
	tests := []struct {
		name string
		in   string
		max  int
		want string
	}{
		{"no cut when short", "hello", 10, "hello"},
		{"no cut at exact length", "hello", 5, "hello"},
		{"max zero means no cut", "hello", 0, "hello"},
		{"cut", "abcdefghij", 5, "ab…ij"},
		{"odd budget favours the start", "abcdefghij", 6, "abc…ij"},
		{"max one", "hello", 1, "…"},
		{"max two", "hello", 2, "h…"},
		{"path", "/home/me/src/gateway/main.go", 15, "/home/m…main.go"},
		{"zwj sequence not split", "ab" + womanTechnologist + "xyz" + womanTechnologist + "cd", 7, "ab…cd"},
		{"zwj sequences kept whole", womanTechnologist + "abcdef" + womanTechnologist, 8, womanTechnologist + "a…" + womanTechnologist},
		{"flags not split", flagDE + flagDE + flagDE + flagDE, 5, flagDE + "…" + flagDE},
		{"combining accents not split", eAcute + "xxxxxx" + eAcute, 5, eAcute + "…" + eAcute},
		{"combining accent at the cut", "ab" + eAcute + "xxxxxxxx", 5, "ab…xx"},
		{"tail takes what the head leaves", womanTechnologist + "abcdefghijk", 5, "…hijk"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := CutMiddle(tc.in, tc.max)
			if got != tc.want {
				t.Errorf("CutMiddle(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
			}
		})
	}
}

// checkCut reports whether got is a valid result of cutting in to max code
// points: valid UTF-8, within max, equal to in when short enough, else the
// concatenation of a prefix of in ending at a grapheme cluster boundary, "…",
// and (for a middle cut) a suffix of in starting at one.
func checkCut(t *testing.T, fn string, in string, max int, got string, middle bool) {
	t.Helper()
	in = strings.ToValidUTF8(in, "\uFFFD")
	if !utf8.ValidString(got) {
		t.Fatalf("%s(%q, %d) = %q, invalid UTF-8", fn, in, max, got)
	}
	if max <= 0 || utf8.RuneCountInString(in) <= max {
		if got != in {
			t.Fatalf("%s(%q, %d) = %q, want the input unchanged", fn, in, max, got)
		}
		return
	}
	if n := utf8.RuneCountInString(got); n > max {
		t.Fatalf("%s(%q, %d) = %q, %d code points", fn, in, max, got, n)
	}
	boundary := map[int]bool{0: true}
	pos, state := 0, -1
	for rest := in; rest != ""; {
		var c string
		c, rest, _, state = uniseg.FirstGraphemeClusterInString(rest, state)
		pos += len(c)
		boundary[pos] = true
	}
	// The input may itself contain "…": some occurrence must split got.
	for i := 0; i <= len(got)-len(ellipsis); i++ {
		if !strings.HasPrefix(got[i:], ellipsis) {
			continue
		}
		head, tail := got[:i], got[i+len(ellipsis):]
		if !strings.HasPrefix(in, head) || !boundary[len(head)] {
			continue
		}
		if middle {
			if strings.HasSuffix(in, tail) && boundary[len(in)-len(tail)] && len(head)+len(tail) <= len(in) {
				return
			}
		} else if tail == "" {
			return
		}
	}
	t.Fatalf("%s(%q, %d) = %q, not a cut of the input at cluster boundaries", fn, in, max, got)
}

func FuzzCut(f *testing.F) {
	for _, s := range []string{"", "hello world", womanTechnologist + flagDE + eAcute + "abc", "a…b…c", "ab\xffcd", "\u0600 x", strings.Repeat("é", 40)} {
		f.Add(s, 5)
	}
	f.Fuzz(func(t *testing.T, s string, max int) {
		max %= 200
		checkCut(t, "Cut", s, max, Cut(s, max), false)
		checkCut(t, "CutMiddle", s, max, CutMiddle(s, max), true)
	})
}

func BenchmarkCut(b *testing.B) {
	s := strings.Repeat("go test ./... "+womanTechnologist+" ", 30)
	b.ReportAllocs()
	for b.Loop() {
		Cut(s, 320)
		Cut(s, 100)
	}
}

func BenchmarkCutMiddle(b *testing.B) {
	s := strings.Repeat("go test ./... "+womanTechnologist+" ", 30)
	b.ReportAllocs()
	for b.Loop() {
		CutMiddle(s, 120)
	}
}
