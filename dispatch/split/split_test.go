package split

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// bodies returns the Body of every part, for tests about where breaks fall.
func bodies(parts []Part) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p.Body)
	}
	return out
}

func TestSplitBreaks(t *testing.T) {
	tests := []struct {
		name string
		in   string
		lim  Limits
		want []string // bodies
	}{
		{
			name: "empty",
			in:   "",
			lim:  Limits{MaxChars: 10},
			want: nil,
		},
		{
			name: "fits",
			in:   "short\n\ntext",
			lim:  Limits{MaxChars: 11, MaxLines: 3},
			want: []string{"short\n\ntext"},
		},
		{
			name: "no limits",
			in:   strings.Repeat("word ", 1000),
			lim:  Limits{},
			want: []string{strings.Repeat("word ", 1000)},
		},
		{
			name: "paragraph separator stays before the break",
			in:   "A\n\nB",
			lim:  Limits{MaxChars: 3},
			want: []string{"A\n\n", "B"},
		},
		{
			name: "last paragraph break that fits",
			in:   "Alpha beta gamma.\n\nDelta epsilon zeta.\n\nEta theta.",
			lim:  Limits{MaxChars: 42},
			want: []string{"Alpha beta gamma.\n\nDelta epsilon zeta.\n\n", "Eta theta."},
		},
		{
			name: "paragraph preferred to a later sentence",
			in:   "Alpha beta gamma delta.\n\nOne. Two. Three. Four.",
			lim:  Limits{MaxChars: 40},
			want: []string{"Alpha beta gamma delta.\n\n", "One. Two. Three. Four."},
		},
		{
			name: "tiny paragraph gives way to a later sentence",
			in:   "Hi.\n\nOne two three. Four five six. Seven eight nine.",
			lim:  Limits{MaxChars: 40},
			want: []string{"Hi.\n\nOne two three. Four five six. ", "Seven eight nine."},
		},
		{
			name: "tiny paragraph gives way to a later line",
			in:   "Hi.\n\nOne two three\nfour five six\nseven eight nine",
			lim:  Limits{MaxChars: 40},
			want: []string{"Hi.\n\nOne two three\nfour five six\n", "seven eight nine"},
		},
		{
			name: "tiny paragraph kept when only words follow",
			in:   "Hi.\n\none two three four five six seven eight nine",
			lim:  Limits{MaxChars: 40},
			want: []string{"Hi.\n\n", "one two three four five six seven eight ", "nine"},
		},
		{
			name: "line",
			in:   "line one\nline two\nline three\nline four",
			lim:  Limits{MaxChars: 20},
			want: []string{"line one\nline two\n", "line three\nline four"},
		},
		{
			name: "sentence",
			in:   "One two. Three four. Five six seven.",
			lim:  Limits{MaxChars: 25},
			want: []string{"One two. Three four. ", "Five six seven."},
		},
		{
			name: "question and exclamation",
			in:   "Is it? Yes it is! And then some more",
			lim:  Limits{MaxChars: 20},
			want: []string{"Is it? Yes it is! ", "And then some more"},
		},
		{
			name: "word",
			in:   "alpha beta gamma delta epsilon",
			lim:  Limits{MaxChars: 12},
			want: []string{"alpha beta ", "gamma delta ", "epsilon"},
		},
		{
			name: "hard cut",
			in:   "abcdefghijklmnopqrstuvwxyz",
			lim:  Limits{MaxChars: 10},
			want: []string{"abcdefghij", "klmnopqrst", "uvwxyz"},
		},
		{
			name: "hard cut counts code points",
			in:   "ééééééé",
			lim:  Limits{MaxChars: 3},
			want: []string{"ééé", "ééé", "é"},
		},
		{
			name: "CJK sentence",
			in:   "今日は晴れです。明日は雨でしょう。",
			lim:  Limits{MaxChars: 10},
			want: []string{"今日は晴れです。", "明日は雨でしょう。"},
		},
		{
			name: "CJK question and exclamation",
			in:   "本当ですか？はい！そうです",
			lim:  Limits{MaxChars: 9},
			want: []string{"本当ですか？はい！", "そうです"},
		},
		{
			name: "CJK without punctuation",
			in:   "一二三四五六七八九十一二三",
			lim:  Limits{MaxChars: 5},
			want: []string{"一二三四五", "六七八九十", "一二三"},
		},
		{
			name: "emoji with skin tone not split",
			in:   "👍🏽👍🏽👍🏽",
			lim:  Limits{MaxChars: 3},
			want: []string{"👍🏽", "👍🏽", "👍🏽"},
		},
		{
			name: "ZWJ sequence not split",
			in:   "ab👨‍👩‍👧",
			lim:  Limits{MaxChars: 6},
			want: []string{"ab", "👨‍👩‍👧"},
		},
		{
			name: "flags not split",
			in:   "🇫🇷🇩🇪🇯🇵",
			lim:  Limits{MaxChars: 3},
			want: []string{"🇫🇷", "🇩🇪", "🇯🇵"},
		},
		{
			name: "combining marks not split",
			in:   "e\u0301e\u0301e\u0301",
			lim:  Limits{MaxChars: 3},
			want: []string{"e\u0301", "e\u0301", "e\u0301"},
		},
		{
			name: "no word break before a combining mark",
			in:   "aaaa \u0301bbbb",
			lim:  Limits{MaxChars: 8},
			want: []string{"aaaa \u0301bb", "bb"},
		},
		{
			name: "grapheme longer than the limit is cut between code points",
			in:   "👨‍👩‍👧",
			lim:  Limits{MaxChars: 2},
			want: []string{"👨\u200d", "👩\u200d", "👧"},
		},
		{
			name: "CRLF kept together",
			in:   "ab\r\ncd",
			lim:  Limits{MaxChars: 3},
			want: []string{"ab", "\r\n", "cd"},
		},
		{
			name: "invalid UTF-8 bytes count as one code point each",
			in:   "ab\xff\xfecd",
			lim:  Limits{MaxChars: 3},
			want: []string{"ab\xff", "\xfecd"},
		},
		{
			name: "heading kept with what follows",
			in:   "Intro text here.\n\n# Title\nBody of the section goes on.",
			lim:  Limits{MaxChars: 30},
			want: []string{"Intro text here.\n\n", "# Title\nBody of the section ", "goes on."},
		},
		{
			name: "heading and blank line kept with what follows",
			in:   "Some words here\n\n## Title\n\nmore words here",
			lim:  Limits{MaxChars: 32},
			want: []string{"Some words here\n\n", "## Title\n\nmore words here"},
		},
		{
			name: "short text before a heading still breaks before it",
			in:   "Some text\n# Heading\nmore words here",
			lim:  Limits{MaxChars: 22},
			want: []string{"Some text\n", "# Heading\nmore words ", "here"},
		},
		{
			name: "hashes without a space are not a heading",
			in:   "aaaa bbbb\n#hashtag\ncccc dddd",
			lim:  Limits{MaxChars: 22},
			want: []string{"aaaa bbbb\n#hashtag\n", "cccc dddd"},
		},
		{
			name: "no part starts with a fence run",
			in:   "use the ```go syntax here",
			lim:  Limits{MaxChars: 12},
			want: []string{"use ", "the ```go ", "syntax here"},
		},
		{
			name: "no part starts with a heading marker",
			in:   "see # 5 and more",
			lim:  Limits{MaxChars: 8},
			want: []string{"see # 5 ", "and more"},
		},
		{
			name: "a line that starts like a fence is not cut inside",
			in:   "# H\n```   a`b",
			lim:  Limits{MaxChars: 10},
			want: []string{"# H\n", "```   a`b"},
		},
		{
			name: "max lines",
			in:   "a\nb\nc\nd\ne",
			lim:  Limits{MaxLines: 2},
			want: []string{"a\nb\n", "c\nd\n", "e"},
		},
		{
			name: "max lines is soft for a long line",
			in:   "one two three four\nfive",
			lim:  Limits{MaxChars: 100, MaxLines: 1},
			want: []string{"one two three four\n", "five"},
		},
		{
			name: "max lines and max chars",
			in:   "aaaa aaaa\nbb\ncc\ndd",
			lim:  Limits{MaxChars: 8, MaxLines: 2},
			want: []string{"aaaa ", "aaaa\nbb\n", "cc\ndd"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			parts := Split(tc.in, tc.lim)
			if diff := cmp.Diff(tc.want, bodies(parts)); diff != "" {
				t.Errorf("Split(%q, %+v) bodies (-want +got):\n%s", tc.in, tc.lim, diff)
			}
			for i, p := range parts {
				if p.Open != "" || p.Close != "" {
					t.Errorf("part %d = %+v, want no Open or Close", i, p)
				}
			}
		})
	}
}

func TestSplitFences(t *testing.T) {
	tests := []struct {
		name string
		in   string
		lim  Limits
		want []Part
	}{
		{
			name: "closed and re-opened with language",
			in:   "Intro:\n\n```go\nline1\nline2\nline3\nline4\n```\nDone.",
			lim:  Limits{MaxChars: 30},
			want: []Part{
				{Body: "Intro:\n\n```go\nline1\nline2\n", Close: "```"},
				{Open: "```go\n", Body: "line3\nline4\n```\nDone."},
			},
		},
		{
			name: "break before the fence when the text before is long enough",
			in:   "Some intro text here.\n```\ncode\n```\nAfter the code.",
			lim:  Limits{MaxChars: 32},
			want: []Part{
				{Body: "Some intro text here.\n"},
				{Body: "```\ncode\n```\nAfter the code."},
			},
		},
		{
			name: "blank line in code preferred",
			in:   "```\na()\n\nb()\nc()\nd()\n```",
			lim:  Limits{MaxChars: 22},
			want: []Part{
				{Body: "```\na()\n\nb()\nc()\n", Close: "```"},
				{Open: "```\n", Body: "d()\n```"},
			},
		},
		{
			name: "tilde fence",
			in:   "~~~\none\ntwo\nthree\nfour\n~~~",
			lim:  Limits{MaxChars: 20},
			want: []Part{
				{Body: "~~~\none\ntwo\n", Close: "~~~"},
				{Open: "~~~\n", Body: "three\nfour\n~~~"},
			},
		},
		{
			name: "longer fence contains a shorter one",
			in:   "````md\n```go\nx := 1\n```\ny\n````",
			lim:  Limits{MaxChars: 24},
			want: []Part{
				{Body: "````md\n```go\nx := 1\n", Close: "````"},
				{Open: "````md\n", Body: "```\ny\n````"},
			},
		},
		{
			name: "tilde fence contains backtick lines",
			in:   "~~~\n```\nabc\n```\ndef\n~~~",
			lim:  Limits{MaxChars: 18},
			want: []Part{
				{Body: "~~~\n```\nabc\n", Close: "~~~"},
				{Open: "~~~\n", Body: "```\ndef\n~~~"},
			},
		},
		{
			name: "indented fence",
			in:   "   ```py\nprint(1)\nprint(2)\nprint(3)\n   ```",
			lim:  Limits{MaxChars: 32},
			want: []Part{
				{Body: "   ```py\nprint(1)\nprint(2)\n", Close: "```"},
				{Open: "   ```py\n", Body: "print(3)\n   ```"},
			},
		},
		{
			name: "four spaces is not a fence",
			in:   "    ```\naaaa bbbb\ncccc dddd",
			lim:  Limits{MaxChars: 20},
			want: []Part{
				{Body: "    ```\naaaa bbbb\n"},
				{Body: "cccc dddd"},
			},
		},
		{
			name: "long code line cut inside",
			in:   "```\nalpha beta gamma delta\n```",
			lim:  Limits{MaxChars: 20},
			want: []Part{
				{Body: "```\nalpha beta ", Close: "\n```"},
				{Open: "```\n", Body: "gamma delta\n```"},
			},
		},
		{
			name: "unclosed fence is not closed at the end",
			in:   "```sh\necho 1\necho 2\necho 3",
			lim:  Limits{MaxChars: 20},
			want: []Part{
				{Body: "```sh\necho 1\n", Close: "```"},
				{Open: "```sh\n", Body: "echo 2\necho 3"},
			},
		},
		{
			name: "no empty code block before the closing line",
			in:   "```\naaaa\nbbbb\n```\nafter it",
			lim:  Limits{MaxChars: 16},
			want: []Part{
				{Body: "```\naaaa\n", Close: "```"},
				{Open: "```\n", Body: "bbbb\n```\n"},
				{Body: "after it"},
			},
		},
		{
			name: "max lines counts the fence lines",
			in:   "```\n1\n2\n3\n4\n```",
			lim:  Limits{MaxLines: 4},
			want: []Part{
				{Body: "```\n1\n2\n", Close: "```"},
				{Open: "```\n", Body: "3\n4\n```"},
			},
		},
		{
			name: "fence line too long to re-open",
			in:   "```a-very-long-info-string\none\ntwo\n```",
			lim:  Limits{MaxChars: 34},
			want: []Part{
				{Body: "```a-very-long-info-string\none\n"},
				{Body: "two\n```"},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Split(tc.in, tc.lim)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Split(%q, %+v) (-want +got):\n%s", tc.in, tc.lim, diff)
			}
		})
	}
}

func TestPartText(t *testing.T) {
	p := Part{Open: "```go\n", Body: "x := 1", Close: "\n```"}
	if got, want := p.Text(), "```go\nx := 1\n```"; got != want {
		t.Errorf("Text() = %q, want %q", got, want)
	}
	p = Part{Body: "plain"}
	if got, want := p.Text(), "plain"; got != want {
		t.Errorf("Text() = %q, want %q", got, want)
	}
}

func TestFits(t *testing.T) {
	tests := []struct {
		name string
		in   string
		lim  Limits
		want bool
	}{
		{"empty", "", Limits{MaxChars: 1, MaxLines: 1}, true},
		{"no limits", strings.Repeat("x\n", 100), Limits{}, true},
		{"negative limits mean none", "abc\ndef", Limits{MaxChars: -1, MaxLines: -1}, true},
		{"exactly max chars", "héllo", Limits{MaxChars: 5}, true},
		{"one code point over", "héllo!", Limits{MaxChars: 5}, false},
		{"bytes over but code points fit", "ééééé", Limits{MaxChars: 5}, true},
		{"exactly max lines", "a\nb\n", Limits{MaxLines: 2}, true},
		{"trailing text is a line", "a\nb\nc", Limits{MaxLines: 2}, false},
		{"blank lines count", "a\n\n\nb", Limits{MaxLines: 3}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Fits(tc.in, tc.lim); got != tc.want {
				t.Errorf("Fits(%q, %+v) = %v, want %v", tc.in, tc.lim, got, tc.want)
			}
		})
	}
}
