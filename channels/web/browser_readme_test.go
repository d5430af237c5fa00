package web

import (
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/chromedp/chromedp"
)

// TestBrowserShowcase lays out a typical conversation (a question, tool
// lines, an answered permission card, a reply with code and a table)
// and saves it as the screenshot "readme" (docs/web-chat.png comes from
// it): every part is shown and nothing overflows.
func TestBrowserShowcase(t *testing.T) {
	ctx := browser(t)
	a := New(Options{Listen: "127.0.0.1:0"})
	serve(t, a, nil)
	a.st.mustCreate("Why is the build red?")
	a.st.mustCreate("Add a dark theme")
	th := a.st.mustCreate("")
	r := ref(th.ID)
	a.st.addMessage(th.ID, message{Role: roleUser, Author: "Ann", Kind: "text", Text: "Count the lines of Go in this repository, and fix the typo in main.go"})
	a.SetTitle(ctx, r, "Count Go lines and fix a typo")
	a.Post(ctx, r, channels.Message{Kind: channels.KindTool, Key: "c1", Text: "🛠️ Run `find . -name '*.go' | xargs wc -l` · done"})
	prompt, _ := a.Prompt(ctx, r, channels.Choice{Text: "🔐 **Permission needed** — Edit main.go (edit)\nFiles:\n• `main.go`\n" +
		"Input: `{\"file_path\":\"main.go\",\"old_string\":\"Helo\",\"new_string\":\"Hello\"}`\n`main.go`\n```diff\n- \tfmt.Println(\"Helo\")\n+ \tfmt.Println(\"Hello\")\n```",
		Options: []channels.Option{{ID: "a", Label: "Allow once", Style: "primary"}, {ID: "r", Label: "Reject", Style: "danger"}}})
	a.Edit(ctx, prompt, channels.Message{Kind: channels.KindPermission, Text: "🔐 **Permission needed** — Edit main.go (edit)\nFiles:\n• `main.go`\n" +
		"Input: `{\"file_path\":\"main.go\",\"old_string\":\"Helo\",\"new_string\":\"Hello\"}`\n`main.go`\n```diff\n- \tfmt.Println(\"Helo\")\n+ \tfmt.Println(\"Hello\")\n```\n\n✅ Allow once — chosen by Ann"})
	a.Post(ctx, r, channels.Message{Kind: channels.KindTool, Key: "c2", Text: "✏️ Edit main.go · done"})
	last, _ := a.Post(ctx, r, channels.Message{Kind: channels.KindText, Text: "Fixed the typo. The repository has **12,480** lines of Go:\n\n" +
		"| package | files | lines |\n|---|--:|--:|\n| session | 14 | 4,210 |\n| channels | 22 | 5,630 |\n| dispatch | 9 | 2,640 |\n\n" +
		"```go\nfunc main() {\n\tfmt.Println(\"Hello\")\n}\n```"})

	p := page{t: t, ctx: ctx}
	p.do("open the thread", chromedp.EmulateViewport(1100, 760), chromedp.Navigate(a.URL()+"#"+th.ID), chromedp.WaitVisible(chromedp.CSS("#prompt")))
	p.waitFor("the whole conversation", `document.querySelector(`+msgSel(last, " table")+`) !== null && document.querySelector(".perm-done") !== null && document.querySelector("#thread-title").textContent === "Count Go lines and fix a typo"`)
	if !eval[bool](p, noSideScroll) {
		t.Error("the conversation overflows sideways")
	}
	eval[chromedp.Void](p, `document.querySelector("#prompt").value = "Now run the tests", 0`)
	p.shot("readme")
}
