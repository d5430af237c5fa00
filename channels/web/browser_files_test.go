package web

import (
	"strings"
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/chromedp/chromedp"
)

// TestBrowserGatewayFiles: files the gateway puts into a thread (the
// agent's) show in the page: an image inline, a text file as a download
// link that works with the page's token, also after a reload.
func TestBrowserGatewayFiles(t *testing.T) {
	ctx := browser(t)
	a := New(Options{Listen: "127.0.0.1:0", Token: "s3cret", FilesDir: t.TempDir()})
	serve(t, a, nil)
	th := a.st.mustCreate("files")
	p := page{t: t, ctx: ctx}
	p.do("open the thread", desktopView, chromedp.Navigate(a.URL()+"#"+th.ID), chromedp.WaitVisible(chromedp.CSS("#prompt")))

	img, err := a.Upload(t.Context(), ref(th.ID), channels.Upload{Name: "chart.png", Data: testPNG(t, 600, 400, 255), Caption: "The **chart**."})
	if err != nil {
		t.Fatal(err)
	}
	const report = "line 1\nline 2 — é\n"
	txt, err := a.Upload(t.Context(), ref(th.ID), channels.Upload{Name: "report.txt", Data: []byte(report)})
	if err != nil {
		t.Fatal(err)
	}
	image := `document.querySelector(` + msgSel(img, " .attachments img") + `)`
	p.waitFor("the image shown inline", image+`?.naturalWidth === 240 && `+image+`.alt === "chart.png"`)
	if got := eval[string](p, `document.querySelector(`+msgSel(img, " .text")+`).innerHTML`); !strings.Contains(got, "<strong>chart</strong>") {
		t.Errorf("the caption reads %q, want it rendered as markdown", got)
	}
	link := `document.querySelector(` + msgSel(txt, " .attachments a.download") + `)`
	p.waitFor("the download link", link+` !== null`)
	if got := eval[string](p, link+`.download + " | " + `+link+`.textContent`); got != "report.txt | ⬇ report.txt (21 bytes)" {
		t.Errorf("the link is %q, want report.txt with its size", got)
	}
	p.shot("desktop-gateway-files")
	eval[chromedp.Void](p, `fetch(`+link+`.href).then(r => r.text().then(text => { window.got = {status: r.status, disp: r.headers.get("Content-Disposition"), type: r.headers.get("Content-Type"), text: text}; })), 0`)
	p.waitFor("the download", `window.got !== undefined`)
	if got := eval[string](p, `[window.got.status, window.got.disp, window.got.type, window.got.text].join(" | ")`); got != `200 | attachment; filename=report.txt | text/plain; charset=utf-8 | `+report {
		t.Errorf("downloading the link gave %q, want the file as an attachment", got)
	}
	p.do("reloaded", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#prompt")))
	p.waitFor("the image again", image+`?.naturalWidth === 240 && `+link+` !== null`)
}

// TestBrowserImageLightbox (issue 29 point 3): the preview of a picture
// the agent sent opens it whole over the page, on a desktop and on a
// phone, where it fits the screen; Escape, or a tap, closes it.
func TestBrowserImageLightbox(t *testing.T) {
	ctx := browser(t)
	a := New(Options{Listen: "127.0.0.1:0", Token: "s3cret", FilesDir: t.TempDir()})
	serve(t, a, nil)
	th := a.st.mustCreate("pictures")
	img, err := a.Upload(t.Context(), ref(th.ID), channels.Upload{Name: "chart.png", Data: testPNG(t, 1600, 1000, 255)})
	if err != nil {
		t.Fatal(err)
	}
	p := page{t: t, ctx: ctx}
	open := `document.querySelector(` + msgSel(img, " .attachments button.open") + `)`
	box := `document.getElementById("lightbox")`
	for _, view := range []struct {
		name string
		vp   chromedp.Action[chromedp.Void]
		w    int
	}{{"desktop", desktopView, 1280}, {"phone", phoneView, 390}} {
		p.do("open the thread on a "+view.name, view.vp, chromedp.Navigate(a.URL()+"#"+th.ID), chromedp.WaitVisible(chromedp.CSS("#prompt")))
		p.waitFor("the preview", open+`?.querySelector("img")?.naturalWidth === 240`)
		eval[chromedp.Void](p, open+`.click(), 0`)
		p.waitFor("the whole picture over the page", box+`?.open && `+box+`.querySelector("img").naturalWidth === 1600`)
		if w := eval[float64](p, box+`.querySelector("img").getBoundingClientRect().width`); w > float64(view.w) || w < float64(view.w)/2 {
			t.Errorf("%s: the picture is %.0f px wide on a %d px screen, want it to fit and fill", view.name, w, view.w)
		}
		p.shot(view.name + "-lightbox")
		p.do("Escape", chromedp.KeyEvent("\x1b"))
		p.waitFor("the lightbox closed", `!`+box+`.open`)
		eval[chromedp.Void](p, open+`.click(), 0`)
		p.waitFor("open again", box+`.open`)
		eval[chromedp.Void](p, box+`.querySelector("img").click(), 0`)
		p.waitFor("closed by a tap", `!`+box+`.open`)
	}
}
