package web

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCardFor(t *testing.T) {
	c := cardFor("permission", permissionText+"\n\n❌ Reject — chosen by Bob")
	want := &permCard{
		Mark: "✏️", Title: "Edit main.go", Kind: "edit",
		Files:   []cardFile{{Path: "/etc/app/main.go", Note: "⚠️ outside the working directory"}},
		Fields:  []cardField{{"old_string", "x := 1"}, {"new_string", "x := 2\n\tfmt.Println(x)"}, {"replace_all", "false"}},
		Outcome: "❌ Reject — chosen by Bob",
	}
	if c == nil {
		t.Fatal("no card")
	}
	if !strings.Contains(c.HTML, `class="gd"`) || strings.Contains(c.HTML, "main.go") {
		t.Errorf("rest = %s, want the diff without the repeated path", c.HTML)
	}
	c.HTML = ""
	if d := cmp.Diff(want, c); d != "" {
		t.Errorf("card (-want +got):\n%s", d)
	}

	// An input that is not an object is shown as it is; two files keep
	// the diffs' path lines.
	c = cardFor("permission", "🔐 **Permission needed** — Run ls\nFiles:\n• `a`\n• ``b`c`` line 3\nInput: `[1,2]`\n`a`")
	if c == nil || c.Kind != "" || c.Mark != "🔧" || c.Input != "[1,2]" || c.Fields != nil ||
		len(c.Files) != 2 || c.Files[1] != (cardFile{Path: "b`c", Note: "line 3"}) || !strings.Contains(c.HTML, "<code>a</code>") {
		t.Errorf("card = %+v", c)
	}
	for _, text := range []string{"Allow `ls`?", "🔐 **Permission needed** — x\nInput: `{\"a\":1", "🔐 **Permission needed** — x\nFiles:\n• no code"} {
		if c := cardFor("permission", text); c != nil {
			t.Errorf("cardFor(%q) = %+v, want none (shown as text)", text, c)
		}
	}
	if c := cardFor("text", permissionText); c != nil {
		t.Errorf("a text message got a card")
	}
}

// FuzzCardFor: any text either gets no card or one whose files and
// fields all come from the text.
func FuzzCardFor(f *testing.F) {
	f.Add(permissionText)
	f.Add("🔐 **Permission needed** — Run ls (execute)\nInput: `{\"command\":\"ls\"}`\n\n✅ Allow — chosen by x")
	f.Fuzz(func(t *testing.T, text string) {
		c := cardFor("permission", text)
		if c == nil {
			return
		}
		for _, file := range c.Files {
			if !strings.Contains(text, file.Path) {
				t.Errorf("file %q not in the text", file.Path)
			}
		}
		for _, fl := range c.Fields {
			if !strings.Contains(text, fl.Name) {
				t.Errorf("field %q not in the text", fl.Name)
			}
		}
	})
}
