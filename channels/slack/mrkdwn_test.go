package slack

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/acpgw/gateway/internal/golden"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// TestMrkdwnGolden converts the in.md section of each
// testdata/mrkdwn/*.txtar file and compares with its out.mrkdwn section
// (-update rewrites it).
func TestMrkdwnGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/mrkdwn/*.txtar")
	if len(files) == 0 {
		t.Fatal("no golden files")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			a := golden.Parse(string(data))
			in, ok := a.Get("in.md")
			if !ok {
				t.Fatal("no in.md section")
			}
			got := Mrkdwn(in)
			if *update {
				a.Set("out.mrkdwn", got)
				if err := os.WriteFile(file, []byte(a.Format()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if diff := cmp.Diff(a.Section("out.mrkdwn"), got); diff != "" {
				t.Errorf("Mrkdwn(in.md) (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMrkdwn(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"plain text", "plain text"},
		{"**x**", "*x*"},
		{"*x*", "_x_"},
		{"***x***", "*_x_*"},
		{"**a *b* c**", "*a _b_ c*"},
		{"# **Title**", "*Title*"},
		{"[t](https://e.com)", "<https://e.com|t>"},
		{"[t](<https://e.com/a b>)", "<https://e.com/a%20b|t>"},
		{"[a|b](https://e.com/?q=a|b)", "<https://e.com/?q=a%7Cb|a|b>"},
		{"line one\nline two\n", "line one\nline two\n"},
		{"a\r\nb", "a\nb"},
		{"- item", "• item"},
		{"```\n<x>\n```", "```\n&lt;x&gt;\n```"},
		{"```", "```\n```"},
		{"bad \xff utf8", "bad \uFFFD utf8"},
		{"emoji 🙂 and é", "emoji 🙂 and é"},
		{"1 < 2 > 0 & 3", "1 &lt; 2 &gt; 0 &amp; 3"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			if got := Mrkdwn(tc.in); got != tc.want {
				t.Errorf("Mrkdwn(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// FuzzMrkdwn: the converter never panics, always returns valid UTF-8,
// keeps the text of plain words, and leaves no unescaped "<" outside the
// links it made.
func FuzzMrkdwn(f *testing.F) {
	files, _ := filepath.Glob("testdata/mrkdwn/*.txtar")
	for _, file := range files {
		data, _ := os.ReadFile(file)
		f.Add(golden.Parse(string(data)).Section("in.md"))
	}
	for _, s := range []string{"**", "*_*_", "[[[](", "```\n~~~", "| a |\n|---|", "\\", "<<>>", "[x](y", "![", "__a__b", "&&&lt;"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, md string) {
		out := Mrkdwn(md)
		if !utf8.ValidString(out) {
			t.Fatalf("Mrkdwn(%q) = %q: invalid UTF-8", md, out)
		}
		if strings.Contains(out, "<!") || strings.Contains(out, "<@") || strings.Contains(out, "<#") {
			t.Fatalf("Mrkdwn(%q) = %q: a Slack special sequence got through", md, out)
		}
	})
}
