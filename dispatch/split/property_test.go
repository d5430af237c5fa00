package split

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rivo/uniseg"
)

// fenceLines returns the lines of text that open or close a code fence,
// following CommonMark, and whether a fence is still open at the end. It is
// written apart from the splitter's own scanner so that it checks it.
func fenceLines(text string) (lines []string, open bool) {
	var ch byte
	var n int
	for _, line := range strings.SplitAfter(text, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if len(line)-len(trimmed) > 3 || trimmed == "" {
			continue
		}
		c := trimmed[0]
		if c != '`' && c != '~' {
			continue
		}
		run := len(trimmed) - len(strings.TrimLeft(trimmed, string(c)))
		rest := trimmed[run:]
		switch {
		case !open && run >= 3 && (c == '~' || !strings.Contains(rest, "`")):
			open, ch, n = true, c, run
			lines = append(lines, line)
		case open && c == ch && run >= n && strings.TrimRight(rest, " \t\r\n") == "":
			open = false
			lines = append(lines, line)
		}
	}
	return lines, open
}

// checkSplit checks the invariants of Split(in, lim) that hold for every
// input and every limit, and the ones that hold for well-formed input.
func checkSplit(t *testing.T, in string, lim Limits) {
	t.Helper()
	parts := Split(in, lim)
	if in == "" {
		if parts != nil {
			t.Fatalf("Split(%q, %+v) = %q, want nil", in, lim, parts)
		}
		return
	}
	if Fits(in, lim) != (len(parts) == 1) {
		t.Errorf("Split(%q, %+v): Fits = %v but %d parts", in, lim, Fits(in, lim), len(parts))
	}
	if len(parts) == 1 && parts[0] != (Part{Body: in}) {
		t.Errorf("Split(%q, %+v) = %q, want one part with the input as Body", in, lim, parts)
	}
	// Fits counts no further than the limits, and means what it says.
	wantFits := (lim.MaxChars <= 0 || utf8.RuneCountInString(in) <= lim.MaxChars) && (lim.MaxLines <= 0 || countLines(in) <= lim.MaxLines)
	if Fits(in, lim) != wantFits {
		t.Errorf("Fits(%q, %+v) = %v with %d code points and %d lines", in, lim, !wantFits, utf8.RuneCountInString(in), countLines(in))
	}
	// First is Split's first part, without the rest.
	first, more, open := First(in, lim)
	want, wantOpen := parts[0], ""
	if len(parts) > 1 {
		wantOpen = parts[1].Open
	}
	if first != want || more != (len(parts) > 1) || open != wantOpen {
		t.Errorf("First(%q, %+v) = %q, %v, %q; Split gives %q, %d parts, next Open %q", in, lim, first, more, open, want, len(parts), wantOpen)
	}

	var concat strings.Builder
	for _, p := range parts {
		concat.WriteString(p.Body)
	}
	if got := concat.String(); got != in {
		t.Fatalf("Split(%q, %+v): bodies concatenate to %q, want the input", in, lim, got)
	}

	// Conditions under which the splitter promises more: it keeps fences
	// balanced when it never has to cut a line that starts like a fence or
	// a run of backticks or tildes, which it does only when such a line or
	// run is too long for a part.
	_, inputOpen := fenceLines(in)
	shortFences := true
	for _, line := range strings.SplitAfter(in, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if len(line)-len(trimmed) <= 3 && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")) &&
			lim.MaxChars > 0 && utf8.RuneCountInString(line) > lim.MaxChars/4 {
			shortFences = false
		}
	}
	run := 0
	for i := range len(in) {
		if in[i] == '`' || in[i] == '~' {
			run++
		} else {
			run = 0
		}
		if lim.MaxChars > 0 && run > lim.MaxChars/4 {
			shortFences = false
		}
	}
	maxCluster := 0
	boundaries := map[int]bool{0: true}
	for state, pos, rest := -1, 0, in; rest != ""; {
		var c string
		c, rest, _, state = uniseg.StepString(rest, state)
		pos += len(c)
		boundaries[pos] = true
		maxCluster = max(maxCluster, utf8.RuneCountInString(c))
	}

	pos := 0
	for i, p := range parts {
		text := p.Text()
		if p.Body == "" {
			t.Errorf("Split(%q, %+v): part %d has an empty body", in, lim, i)
		}
		if text != p.Open+p.Body+p.Close {
			t.Errorf("part %d: Text() = %q, want Open+Body+Close", i, text)
		}
		if n := utf8.RuneCountInString(text); lim.MaxChars > 0 && n > lim.MaxChars {
			t.Errorf("Split(%q, %+v): part %d %q has %d code points, want <= %d", in, lim, i, text, n, lim.MaxChars)
		}
		if lim.MaxLines > 0 {
			extra := 0
			if p.Open != "" {
				extra++
			}
			if p.Close != "" {
				extra++
			}
			if n := countLines(p.Body); n > max(1, lim.MaxLines-extra) {
				t.Errorf("Split(%q, %+v): part %d %q has %d body lines, want <= %d", in, lim, i, text, n, max(1, lim.MaxLines-extra))
			}
		}
		if utf8.ValidString(in) && !utf8.ValidString(text) {
			t.Errorf("Split(%q, %+v): part %d %q is not valid UTF-8", in, lim, i, text)
		}
		pos += len(p.Body)
		if lim.MaxChars > 0 && maxCluster <= lim.MaxChars/2 && !boundaries[pos] {
			t.Errorf("Split(%q, %+v): part %d %q ends inside a grapheme cluster", in, lim, i, text)
		}
		if !inputOpen && shortFences {
			if _, open := fenceLines(text); open {
				t.Errorf("Split(%q, %+v): part %d %q leaves a code fence open", in, lim, i, text)
			}
		}
	}
}

// genText returns a random markdown text made of paragraphs, headings and
// code fences, with emoji, combining marks and CJK text mixed in. Its
// fences are balanced.
func genText(r *rand.Rand) string {
	words := []string{
		"alpha", "beta", "gamma", "δέλτα", "naïve", "x", "I", "supercalifragilistic",
		"👍🏽", "👨‍👩‍👧", "🇫🇷", "e\u0301", "今日は晴れです", "。", "？", "#tag", "`code`", "~",
	}
	seps := []string{" ", " ", " ", " ", "  ", ". ", "! ", "? ", ", ", "\n", "\n\n", "\r\n", "\t"}
	var b strings.Builder
	paragraph := func() {
		for range 1 + r.IntN(40) {
			b.WriteString(words[r.IntN(len(words))])
			b.WriteString(seps[r.IntN(len(seps))])
		}
	}
	for range 1 + r.IntN(8) {
		switch r.IntN(6) {
		case 0:
			b.WriteString(strings.Repeat("#", 1+r.IntN(6)) + " A heading\n")
			if r.IntN(2) == 0 {
				b.WriteString("\n")
			}
		case 1, 2:
			fences := []struct{ open, close string }{
				{"```go\n", "```\n"},
				{"```\n", "```"},
				{"~~~\n", "~~~\n"},
				{"  ```py\n", "  ```\n"},
				{"````md\n```go\n", "```\n````\n"},
				{"~~~~\n```\n", "```\n~~~~~\n"},
			}
			f := fences[r.IntN(len(fences))]
			if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
				b.WriteString("\n")
			}
			b.WriteString(f.open)
			for range r.IntN(12) {
				for range r.IntN(8) {
					b.WriteString(words[r.IntN(len(words)-2)]) // no "~"
					b.WriteString(" ")
				}
				b.WriteString("\n")
			}
			b.WriteString(f.close)
		default:
			paragraph()
		}
	}
	return b.String()
}

func TestSplitProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	n := 3000
	if testing.Short() {
		n = 300
	}
	for range n {
		in := genText(r)
		lim := Limits{MaxChars: 20 + r.IntN(300)}
		switch r.IntN(4) {
		case 0:
			lim.MaxLines = 1 + r.IntN(12)
		case 1:
			lim.MaxChars, lim.MaxLines = 0, 1+r.IntN(12)
		}
		checkSplit(t, in, lim)
		if t.Failed() {
			return
		}
	}
}

func FuzzSplit(f *testing.F) {
	f.Add("Intro:\n\n```go\nline1\nline2\nline3\nline4\n```\nDone.", 30, 0)
	f.Add("# Title\n\nSome words. More words! 今日は晴れです。👨‍👩‍👧 e\u0301", 20, 2)
	f.Add("````md\n```go\nx := 1\n```\ny\n````\n~~~\nz\n~~~", 24, 3)
	f.Add("a\r\nb\n\n\n  ```\n\xff\xfe\n  ```", 5, 1)
	f.Fuzz(func(t *testing.T, in string, maxChars, maxLines int) {
		// Keep limits small enough to cut often; any limit must work.
		lim := Limits{MaxChars: maxChars % 1000, MaxLines: maxLines % 50}
		checkSplit(t, in, lim)
	})
}
