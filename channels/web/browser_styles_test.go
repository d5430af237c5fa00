package web

import (
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/sysmsg"
	"github.com/chromedp/chromedp"
)

// TestBrowserKindsLookApart (issue 29 point 10): a picker (/model, whose
// buttons ask nothing of the agent) does not look like a permission
// prompt, an answered question does not look like a notice (also after a
// reload), and a file the agent sent is a download chip, not a bare link.
func TestBrowserKindsLookApart(t *testing.T) {
	ctx := browser(t)
	a := New(Options{Listen: "127.0.0.1:0", FilesDir: t.TempDir()})
	serve(t, a, nil)
	th := a.st.mustCreate("styles")
	ref := ref(th.ID)
	notice, _ := a.Post(ctx, ref, channels.Message{Kind: channels.KindNotice, Text: sysmsg.Text(sysmsg.Stopped{By: "Ann"})})
	picker, _ := a.Prompt(ctx, ref, channels.Choice{Text: sysmsg.Text(sysmsg.Choices{Option: "model", Command: "/model", Current: "opus", Values: []string{"opus", "sonnet"}, Names: []string{"Opus", "Sonnet"}}),
		Options: []channels.Option{{ID: "m/opus", Label: "Opus"}, {ID: "m/sonnet", Label: "Sonnet"}}})
	perm, _ := a.Prompt(ctx, ref, channels.Choice{Text: "🔐 **Permission needed** — Agent asks: `Write report.txt` (edit)\nFiles:\n• `/w/report.txt`",
		Options: []channels.Option{{ID: "p/allow", Label: "Allow"}, {ID: "p/reject", Label: "Reject"}}})
	q, err := a.Form(ctx, ref, channels.Form{Text: "Which color?", Fields: []channels.Field{{ID: "c", Label: "Color", Kind: channels.FieldChoice, Options: []channels.Option{{ID: "red", Label: "red"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Edit(ctx, q, channels.Message{Kind: channels.KindNotice, Text: "❓ Which color? — ✅ red (Ann)"}); err != nil {
		t.Fatal(err)
	}
	file, _ := a.Upload(ctx, ref, channels.Upload{Name: "notes.txt", Data: []byte("notes\n")})
	p := page{t: t, ctx: ctx}
	style := func(h channels.Handle, rest, prop string) string {
		return eval[string](p, `getComputedStyle(document.querySelector(`+msgSel(h, rest)+`)).`+prop)
	}
	for _, when := range []string{"open", "reloaded"} {
		p.do(when, desktopView, chromedp.Navigate(a.URL()+"#"+th.ID), chromedp.WaitVisible(chromedp.CSS("#prompt")))
		p.waitFor("the file", `document.querySelector(`+msgSel(file, " .attachments .download")+`) !== null`)
		if pc, kc := style(perm, " .card", "borderTopColor"), style(picker, " .card", "borderTopColor"); pc == kc {
			t.Errorf("%s: the /model picker's border is the permission prompt's (%s)", when, pc)
		}
		if nb, qb := style(notice, " .text", "backgroundColor"), style(q, " .text", "backgroundColor"); nb == qb {
			t.Errorf("%s: the answered question looks like a notice (background %s)", when, nb)
		}
		if d, b := style(file, " .attachments .download", "textDecorationLine"), style(file, " .attachments .download", "borderTopStyle"); d != "none" || b != "solid" {
			t.Errorf("%s: the download link is underlined %q with border %q, want a chip", when, d, b)
		}
	}
	p.shot("desktop-kinds")
}
