package web

import (
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/chromedp/chromedp"
)

// TestBrowserPhoneTapTargets (issue 29 point 10): on a phone every button
// a person taps (the composer's, the header's, a prompt's options, a code
// block's Copy, a tool line that opens, a file's download link, the
// threads in the menu) is at least 44 px high, and the buttons at least
// 44 px wide.
func TestBrowserPhoneTapTargets(t *testing.T) {
	ctx := browser(t)
	a := New(Options{Listen: "127.0.0.1:0", FilesDir: t.TempDir()})
	serve(t, a, nil)
	th := a.st.mustCreate("taps")
	ref := ref(th.ID)
	a.Post(ctx, ref, channels.Message{Kind: channels.KindText, Text: "Some code:\n\n```go\nfmt.Println(1)\n```"})
	tool, _ := a.Post(ctx, ref, channels.Message{Kind: channels.KindTool, Key: "c1", Text: "🛠️ Run ls · done"})
	a.ToolDetail(ref, "c1", channels.ToolDetail{Input: `{"command":"ls"}`, Output: "a\nb"})
	a.Upload(ctx, ref, channels.Upload{Name: "notes.txt", Data: []byte("notes\n")})
	a.Prompt(ctx, ref, channels.Choice{Text: "Pick one", Options: []channels.Option{{ID: "a", Label: "A"}, {ID: "b", Label: "B"}}})
	p := page{t: t, ctx: ctx}
	p.do("open the thread on a phone", phoneView, chromedp.Navigate(a.URL()+"#"+th.ID), chromedp.WaitVisible(chromedp.CSS("#prompt")))
	p.waitFor("the prompt's options", `document.querySelectorAll(".msg .options button").length === 2`)
	p.waitFor("the tool line that opens", `document.querySelector(`+msgSel(tool, ` .text[role="button"]`)+`) !== null`)
	p.waitFor("the download link", `document.querySelector(".attachments .download") !== null`)
	small := eval[[]string](p, `(() => {
		const out = [];
		const check = (e, wide) => {
			const r = e.getBoundingClientRect();
			if (r.width === 0 && r.height === 0) return; // not shown
			if (r.height < 44 || (wide && r.width < 44)) out.push((e.id || e.className || e.tagName) + " " + (e.textContent || "").trim().slice(0, 20) + ": " + Math.round(r.width) + "×" + Math.round(r.height));
		};
		document.querySelectorAll("#composer .btn, #thread-header .btn, .msg .options button, .text .code-copy").forEach(e => check(e, true));
		document.querySelectorAll(".attachments .download, .msg[data-kind=tool] .text[role=button]").forEach(e => check(e, false));
		return out;
	})()`)
	if len(small) != 0 {
		t.Errorf("tap targets under 44 px on a phone: %q", small)
	}
	eval[chromedp.Void](p, `document.querySelector("#menu").click(), 0`)
	p.waitFor("the thread list", `document.querySelector("#threads button")?.getBoundingClientRect().width > 0`)
	if h := eval[float64](p, `document.querySelector("#threads button").getBoundingClientRect().height`); h < 44 {
		t.Errorf("a thread in the menu is %.0f px high, want at least 44", h)
	}
	p.shot("phone-tap-targets")
}
