package web

import (
	"strings"
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/chromedp/chromedp"
)

// TestBrowserToolDetails opens a tool line with a click to show what the
// tool showed: its input, its diff coloured, its output (which came in a
// later update) and its locations; Enter closes it again.
func TestBrowserToolDetails(t *testing.T) {
	ctx := browser(t)
	a := New(Options{Listen: "127.0.0.1:0"})
	serve(t, a, nil)
	th := a.st.mustCreate("tools")
	r := ref(th.ID)
	p := page{t: t, ctx: ctx}
	p.do("open the thread", desktopView, chromedp.Navigate(a.URL()+"#"+th.ID), chromedp.WaitVisible(chromedp.CSS("#prompt")))

	// The details come before the line is posted, and after.
	a.ToolDetail(r, "call_1", channels.ToolDetail{Input: `{"file_path":"main.go"}`, Locations: []string{"main.go:3"},
		Diffs: []channels.Diff{{Path: "main.go", Old: "x := 1\n", New: "x := 2\ny := 3\n"}}})
	line, _ := a.Post(ctx, r, channels.Message{Kind: channels.KindTool, Key: "call_1", Text: "✏️ Edit main.go · running"})
	plain, _ := a.Post(ctx, r, channels.Message{Kind: channels.KindTool, Key: "call_2", Text: "🔍 Search · done"})
	a.ToolDetail(r, "call_1", channels.ToolDetail{Output: "edited 1 file"})
	a.Edit(ctx, line, channels.Message{Kind: channels.KindTool, Key: "call_1", Text: "✏️ Edit main.go · done"})
	a.ToolDetail(channels.ThreadRef{Platform: "discord", Channel: "c", Thread: th.ID}, "call_2", channels.ToolDetail{Input: "{}"}) // not the web chat's: ignored

	text := msgSel(line, " .text")
	p.waitFor("the finished line with its details", `document.querySelector(`+text+`)?.textContent.includes("done") && document.querySelector(`+msgSel(line, " .tool-detail")+`)?.textContent.includes("edited 1 file")`)
	if !eval[bool](p, `document.querySelector(`+msgSel(line, " .tool-detail")+`).hidden`) {
		t.Error("the details are open before a click")
	}
	if eval[bool](p, `document.querySelector(`+msgSel(plain, " .tool-detail")+`) !== null || document.querySelector(`+msgSel(plain, " .text")+`).getAttribute("role") !== null`) {
		t.Error("a tool line without details opens")
	}
	p.do("click the line", chromedp.Click(chromedp.CSS(`.msg[data-id="`+string(line.ID)+`"] .text`)))
	p.waitFor("the details shown", `!document.querySelector(`+msgSel(line, " .tool-detail")+`).hidden && document.querySelector(`+text+`).getAttribute("aria-expanded") === "true"`)
	got := eval[string](p, `document.querySelector(`+msgSel(line, " .tool-detail")+`).innerText`)
	for _, want := range []string{"Input", `{"file_path":"main.go"}`, "Diff · main.go", "- x := 1", "+ x := 2", "+ y := 3", "Output", "edited 1 file", "Locations", "main.go:3"} {
		if !strings.Contains(got, want) {
			t.Errorf("the details leave out %q:\n%s", want, got)
		}
	}
	bg := eval[[]string](p, `[".gd", ".gi"].map(c => getComputedStyle(document.querySelector(`+msgSel(line, " .tool-detail ")+` + c)).backgroundColor)`)
	if bg[0] == bg[1] || bg[0] == "rgba(0, 0, 0, 0)" {
		t.Errorf("diff backgrounds removed/added = %q, want two colours", bg)
	}
	p.shot("desktop-tool-details")
	p.do("close with Enter", chromedp.Focus(chromedp.CSS(`.msg[data-id="`+string(line.ID)+`"] .text`)), chromedp.KeyEvent("\r"))
	p.waitFor("the details closed", `document.querySelector(`+msgSel(line, " .tool-detail")+`).hidden`)
}
