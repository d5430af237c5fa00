package tooldisplay

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rivo/uniseg"
)

func TestSummaryKinds(t *testing.T) {
	tests := []struct {
		kind string
		want string
	}{
		{"execute", "🛠️ Run it · done"},
		{"read", "📖 Run it · done"},
		{"edit", "✏️ Run it · done"},
		{"delete", "🗑️ Run it · done"},
		{"move", "📦 Run it · done"},
		{"search", "🔍 Run it · done"},
		{"think", "💭 Run it · done"},
		{"fetch", "🌐 Run it · done"},
		{"switch_mode", "🔀 Run it · done"},
		{"other", "🔧 Run it · done"},
		{"", "🔧 Run it · done"},
		{"brand_new_kind", "🔧 Run it · done"},
		{" Execute ", "🛠️ Run it · done"},
	}
	for _, tc := range tests {
		t.Run(tc.kind, func(t *testing.T) {
			got := Summary(Call{Kind: tc.kind, Title: "Run it", Status: "completed"})
			if got != tc.want {
				t.Errorf("Summary(kind %q) = %q, want %q", tc.kind, got, tc.want)
			}
		})
	}
}

func TestMarksAreOneCluster(t *testing.T) {
	for kind, m := range marks {
		if n := uniseg.GraphemeClusterCount(m); n != 1 {
			t.Errorf("mark of %q = %q is %d grapheme clusters, want 1", kind, m, n)
		}
	}
}

func TestSummaryStatus(t *testing.T) {
	tests := []struct {
		status string
		want   string
	}{
		{"pending", "🛠️ `ls` · pending"},
		{"in_progress", "🛠️ `ls` · running"},
		{"completed", "🛠️ `ls` · done"},
		{"failed", "🛠️ `ls` · failed"},
		{"cancelled", "🛠️ `ls` · cancelled"},
		{"", "🛠️ `ls`"},
		{"COMPLETED", "🛠️ `ls` · done"},
		{"exploded", "🛠️ `ls`"},
	}
	for _, tc := range tests {
		t.Run(tc.status, func(t *testing.T) {
			got := Summary(Call{Kind: "execute", RawInput: []byte(`{"command":"ls"}`), Status: tc.status})
			if got != tc.want {
				t.Errorf("Summary(status %q) = %q, want %q", tc.status, got, tc.want)
			}
		})
	}
}

func TestLabel(t *testing.T) {
	tests := []struct {
		name string
		call Call
		want string
	}{
		// Titles.
		{"title wins", Call{Kind: "execute", Title: "Run the tests", RawInput: []byte(`{"command":"go test ./..."}`)}, "Run the tests"},
		{"markdown title kept", Call{Kind: "execute", Title: "`go vet ./...`"}, "`go vet ./...`"},
		{"title trimmed", Call{Title: "  Plan  "}, "Plan"},

		// Generic titles give way to the input.
		{"Terminal", Call{Kind: "execute", Title: "Terminal", RawInput: []byte(`{"command":"go test ./..."}`)}, "`go test ./...`"},
		{"terminal lower case", Call{Kind: "execute", Title: "terminal", RawInput: []byte(`{"command":"make"}`)}, "`make`"},
		{"Bash", Call{Kind: "execute", Title: "Bash", RawInput: []byte(`{"cmd":"make"}`)}, "`make`"},
		{"Read File", Call{Kind: "read", Title: "Read File", RawInput: []byte(`{"file_path":"/home/me/proj/notes.txt"}`)}, "Read `proj/notes.txt`"},
		{"Read", Call{Kind: "read", Title: "READ", RawInput: []byte(`{"path":"notes.txt"}`)}, "Read `notes.txt`"},
		{"Write", Call{Kind: "edit", Title: "Write", RawInput: []byte(`{"filePath":"hello.txt","content":"hi"}`)}, "Edit `hello.txt`"},
		{"Edit", Call{Kind: "edit", Title: "Edit", RawInput: []byte(`{"notebook_path":"/w/a/b.ipynb"}`)}, "Edit `a/b.ipynb`"},
		{"Tool", Call{Kind: "other", Title: "Tool", RawInput: []byte(`{"url":"https://go.dev"}`)}, "Fetch `https://go.dev`"},
		{"Fetch", Call{Kind: "fetch", Title: "Fetch", RawInput: []byte(`{"url":"https://go.dev/doc"}`)}, "Fetch `https://go.dev/doc`"},
		{"Search", Call{Kind: "search", Title: "Search", RawInput: []byte(`{"pattern":"TODO"}`)}, "Search `TODO`"},
		{"generic kept without input", Call{Kind: "execute", Title: "Terminal"}, "Terminal"},
		{"generic kept with useless input", Call{Kind: "execute", Title: "Terminal", RawInput: []byte(`{"timeout":5}`)}, "Terminal"},

		// Input by kind.
		{"execute array", Call{Kind: "execute", RawInput: []byte(`{"command":["git","commit","-m","fix it"]}`)}, "`git commit -m 'fix it'`"},
		{"execute shell wrapper", Call{Kind: "execute", RawInput: []byte(`{"command":["/bin/bash","-lc","go test ./... | tail"]}`)}, "`go test ./... | tail`"},
		{"execute empty command", Call{Kind: "execute", RawInput: []byte(`{"command":"  ","cmd":"ls"}`)}, "`ls`"},
		{"delete", Call{Kind: "delete", RawInput: []byte(`{"path":"/tmp/x/old.log"}`)}, "Delete `x/old.log`"},
		{"move", Call{Kind: "move", RawInput: []byte(`{"path":"a.txt","destination":"/w/old/a.txt"}`)}, "Move `a.txt` → `old/a.txt`"},
		{"move source only", Call{Kind: "move", RawInput: []byte(`{"path":"a.txt"}`)}, "Move `a.txt`"},
		{"move destination only", Call{Kind: "move", RawInput: []byte(`{"destination":"b.txt"}`)}, "Move to `b.txt`"},
		{"search query", Call{Kind: "search", RawInput: []byte(`{"query":"func main"}`)}, "Search `func main`"},
		{"windows path", Call{Kind: "read", RawInput: []byte(`{"path":"C:\\Users\\me\\proj\\main.go"}`)}, "Read `proj/main.go`"},
		{"other with command", Call{Kind: "other", RawInput: []byte(`{"command":"ls"}`)}, "`ls`"},
		{"other with path", Call{RawInput: []byte(`{"path":"/a/b/c.go"}`)}, "`b/c.go`"},
		{"other with query", Call{RawInput: []byte(`{"query":"x"}`)}, "Search `x`"},
		{"think ignores input", Call{Kind: "think", RawInput: []byte(`{"command":"ls"}`)}, "tool call"},

		// Fallbacks.
		{"location", Call{Kind: "read", Locations: []string{"/w/proj/README.md", "/w/other"}}, "Read `proj/README.md`"},
		{"location skips blanks", Call{Kind: "edit", Locations: []string{" ", "x.go"}}, "Edit `x.go`"},
		{"location before generic title", Call{Kind: "read", Title: "Read File", Locations: []string{"a.go"}}, "Read `a.go`"},
		{"execute location is its directory", Call{Kind: "execute", Title: "bash", RawInput: []byte(`{"cwd":"/workspace"}`), Locations: []string{"/workspace"}}, "bash"},
		{"input before location", Call{Kind: "read", RawInput: []byte(`{"path":"in.go"}`), Locations: []string{"loc.go"}}, "Read `in.go`"},
		{"nothing", Call{}, "tool call"},
		{"empty object", Call{Kind: "execute", RawInput: []byte(`{}`)}, "tool call"},
		{"input not an object", Call{Kind: "execute", RawInput: []byte(`["ls"]`)}, "tool call"},
		{"input not json", Call{Kind: "execute", RawInput: []byte(`{"command":`), Title: "Terminal"}, "Terminal"},
		{"input null", Call{Kind: "execute", RawInput: []byte(`null`)}, "tool call"},
		{"id title hidden", Call{Title: "toolu_01AbCdEfGhIjKlMn"}, "tool call"},
		{"call id title gives way", Call{Kind: "execute", Title: "call_abc123def456", RawInput: []byte(`{"command":"ls"}`)}, "`ls`"},
		{"uuid title hidden", Call{Title: "0b8f5a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b"}, "tool call"},

		// Single line.
		{"multiline title", Call{Title: "Run\nthe\r\n  tests\t now"}, "Run the tests now"},
		{"multiline command", Call{Kind: "execute", RawInput: []byte(`{"command":"cd /w &&\n  go test \\\n  ./..."}`)}, "`cd /w && go test \\ ./...`"},
		{"control characters dropped", Call{Title: "red\x1b[31m text\x00"}, "red[31m text"},
		{"unicode line separators", Call{Title: "a\u2028b\u0085c"}, "a b c"},
		{"bidi override dropped", Call{Title: "abc\u202Edef"}, "abcdef"},
		{"invalid utf-8 replaced", Call{Title: "bad\xffbyte"}, "bad\uFFFDbyte"},

		// Markdown safety.
		{"command with backtick", Call{Kind: "execute", RawInput: []byte("{\"command\":\"echo `date`\"}")}, "`` echo `date` ``"},
		{"command with double backticks", Call{Kind: "execute", RawInput: []byte("{\"command\":\"a `` b\"}")}, "```a `` b```"},
		{"command starting with backtick", Call{Kind: "execute", RawInput: []byte("{\"command\":\"`x` y\"}")}, "`` `x` y ``"},
		{"path with markdown", Call{Kind: "read", RawInput: []byte(`{"path":"pkg/__init__.py"}`)}, "Read `pkg/__init__.py`"},

		// Secrets.
		{"secret in command", Call{Kind: "execute", RawInput: []byte(`{"command":"curl -H 'Authorization: Bearer abc.def' https://x"}`)}, "`curl -H 'Authorization: Bearer •••' https://x`"},
		{"secret in title", Call{Title: "Run GITHUB_TOKEN=ghp_abc make"}, "Run GITHUB_TOKEN=••• make"},
		{"secret in url", Call{Kind: "fetch", RawInput: []byte(`{"url":"https://me:hunter2@example.com/"}`)}, "Fetch `https://me:•••@example.com/`"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Label(tc.call); got != tc.want {
				t.Errorf("Label(%s) = %q, want %q", formatCall(tc.call), got, tc.want)
			}
		})
	}
}

func TestLabelLongValuesCutInTheMiddle(t *testing.T) {
	long := "echo start " + strings.Repeat("x", 500) + " end"
	got := Label(Call{Kind: "execute", RawInput: []byte(`{"command":"` + long + `"}`)})
	inner := strings.Trim(got, "`")
	if n := utf8.RuneCountInString(inner); n != maxValueChars {
		t.Errorf("label has %d code points inside the code span, want %d: %q", n, maxValueChars, got)
	}
	if !strings.HasPrefix(inner, "echo start ") || !strings.HasSuffix(inner, " end") || !strings.Contains(inner, "…") {
		t.Errorf("label = %q, want start and end of the command around …", got)
	}

	title := strings.Repeat("word ", 100)
	if n := utf8.RuneCountInString(Label(Call{Title: title})); n > maxValueChars {
		t.Errorf("title label has %d code points, want at most %d", n, maxValueChars)
	}
}

func TestLabelRedactsBeforeCutting(t *testing.T) {
	// The token sits where the middle cut would otherwise leave half of it.
	cmd := strings.Repeat("a", 50) + " --token " + strings.Repeat("s", 100) + " " + strings.Repeat("b", 50)
	got := Label(Call{Kind: "execute", RawInput: []byte(`{"command":"` + cmd + `"}`)})
	if strings.Contains(got, "ss") {
		t.Errorf("Label = %q, leaks part of the token", got)
	}
}

func TestSummaryNeverShowsToolCallID(t *testing.T) {
	for _, title := range []string{"toolu_01ABCDEFGHIJKLMNOP", "call_0123456789", "fc_68a1b2c3d4e5f6"} {
		if got := Summary(Call{Title: title, Status: "pending"}); strings.Contains(got, title) {
			t.Errorf("Summary(title %q) = %q, shows the id", title, got)
		}
	}
}

func BenchmarkSummary(b *testing.B) {
	calls := []Call{
		{Kind: "execute", Title: "Terminal", Status: "in_progress", RawInput: []byte(`{"command":"go test -race ./... 2>&1 | tail -n 50","description":"Run the tests"}`)},
		{Kind: "read", Title: "Read File", Status: "completed", RawInput: []byte(`{"file_path":"/home/me/src/gateway/projector/projector.go"}`)},
		{Kind: "edit", Title: "Edit `projector/projector.go`", Status: "failed", Locations: []string{"/home/me/src/gateway/projector/projector.go"}},
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		Summary(calls[i%len(calls)])
	}
}

// formatCall formats c for test messages, with RawInput as text.
func formatCall(c Call) string {
	return fmt.Sprintf("{Kind:%q Title:%q RawInput:%q Status:%q Locations:%q}", c.Kind, c.Title, c.RawInput, c.Status, c.Locations)
}

func TestClipKeepsWhatLabelsShow(t *testing.T) {
	var mixed strings.Builder
	for i := 0; mixed.Len() < 20<<10; i++ {
		mixed.WriteString([]string{"word ", womanTechnologist, flagDE, eAcute, "\n", "--token abc ", "ab"}[i%7])
	}
	tests := []struct {
		name string
		in   string
	}{
		{"ascii", "echo START " + strings.Repeat("x", 20<<10) + " END"},
		{"mixed", mixed.String()},
		{"flags only", strings.Repeat(flagDE, 4000)},
		{"flags after text", "ab" + strings.Repeat(flagDE, 4000) + "cd" + strings.Repeat("🇫", 3)},
		{"combining marks", "a" + strings.Repeat("\u0301", 4000) + strings.Repeat("b", 20000) + strings.Repeat("\u0301", 4000)},
		{"secret at the end", strings.Repeat("x ", 10000) + "GITHUB_TOKEN=abcdef"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := CutMiddle(Redact(oneLine(tc.in)), maxValueChars)
			want := CutMiddle(Redact(collapse(tc.in)), maxValueChars)
			if got != want {
				t.Errorf("label of clipped text = %q, want %q", got, want)
			}
		})
	}
}
