package tooldisplay

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func FuzzSummary(f *testing.F) {
	f.Add("execute", "Terminal", `{"command":"go test ./..."}`, "in_progress", "/w/a.go")
	f.Add("execute", "", `{"command":["bash","-lc","ls\nls"]}`, "completed", "")
	f.Add("read", "Read File", `{"file_path":"/a/b/c"}`, "", "")
	f.Add("move", "", `{"path":"a","destination":"b"}`, "failed", "")
	f.Add("fetch", "Fetch", `{"url":"https://u:p@x/?token=1"}`, "pending", "")
	f.Add("", "line\none\u2028two", `not json`, "weird", "x\ny")
	f.Add("other", "`x`", `{"command":"`+"``"+`"}`, "cancelled", "\xff")
	f.Fuzz(func(t *testing.T, kind, title, raw, status, loc string) {
		c := Call{Kind: kind, Title: title, RawInput: []byte(raw), Status: status}
		if loc != "" {
			c.Locations = []string{loc}
		}
		got := Summary(c)
		if !utf8.ValidString(got) {
			t.Fatalf("Summary(%s) = %q, invalid UTF-8", formatCall(c), got)
		}
		if i := strings.IndexAny(got, "\n\r\v\f\u0085\u2028\u2029"); i >= 0 {
			t.Fatalf("Summary(%s) = %q, not a single line", formatCall(c), got)
		}
		if !strings.HasPrefix(got, mark(kind)+" ") {
			t.Fatalf("Summary(%s) = %q, want it to start with %q", formatCall(c), got, mark(kind)+" ")
		}
		label := Label(c)
		if strings.TrimSpace(label) == "" || !strings.Contains(got, label) {
			t.Fatalf("Summary(%s) = %q, want it to contain the non-empty label %q", formatCall(c), got, label)
		}
	})
}
