package web

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserAttachments drops an image and a text file onto the thread:
// both are attached (the image with a preview in the composer), sent with
// the message, and the sent message shows the image's thumbnail, also
// after a reload.
func TestBrowserAttachments(t *testing.T) {
	ctx := browser(t)
	a := New(Options{Listen: "127.0.0.1:0"})
	in := serve(t, a, nil)
	th := a.st.mustCreate("files")
	p := page{t: t, ctx: ctx}
	p.do("open the thread", desktopView, chromedp.Navigate(a.URL()+"#"+th.ID), chromedp.WaitVisible(chromedp.CSS("#prompt")))
	eval[chromedp.Void](p, `localStorage.setItem("acpgw.author", "Ann"), localStorage.setItem("acpgw.asked", "1"), document.querySelector("#author").value = "Ann", 0`)

	png := base64.StdEncoding.EncodeToString(testPNG(t, 600, 400, 255))
	eval[chromedp.Void](p, `(() => {
		const bytes = Uint8Array.from(atob("`+png+`"), c => c.charCodeAt(0)), dt = new DataTransfer();
		dt.items.add(new File([bytes], "chart.png", {type: "image/png"}));
		dt.items.add(new File(["a,b\n1,2\n"], "data.csv", {type: "text/csv"}));
		const target = document.querySelector("#messages");
		for (const type of ["dragenter", "dragover", "drop"]) target.dispatchEvent(new DragEvent(type, {dataTransfer: dt, bubbles: true, cancelable: true}));
	})(), 0`)
	p.waitFor("both files attached, the image with a preview", `document.querySelectorAll("#files .file").length === 2 && document.querySelector("#files .file img")?.naturalWidth === 600`)
	if eval[bool](p, `document.querySelector("#main").classList.contains("dropping")`) {
		t.Errorf("the drop highlight stays after the drop")
	}
	p.shot("desktop-attachments-composer")
	p.do("send", chromedp.SendKeys(chromedp.CSS("#prompt"), "look at these\r"))
	ev := in.next(t)
	if ev.Text != "look at these" || len(ev.Files) != 2 || ev.Files[0].Name != "chart.png" || ev.Files[0].Data == nil || !strings.Contains(ev.Files[1].Text, "1,2") {
		t.Fatalf("inbound = %q with %d files (%+v), want the image and the text file", ev.Text, len(ev.Files), ev.Files)
	}
	thumb := `document.querySelector('.msg[data-role="user"] .thumbs img')`
	p.waitFor("the thumbnail in the thread", thumb+`?.naturalWidth === 240 && `+thumb+`.alt === "chart.png" && document.querySelectorAll(".thumbs img").length === 1`)
	if got := eval[string](p, `document.querySelector('.msg[data-role="user"] .text').textContent`); got != "look at these\n📎 chart.png\n📎 data.csv" {
		t.Errorf("the message reads %q, want its text and the two files' names", got)
	}
	p.shot("desktop-attachments")
	p.do("on a phone, reloaded", phoneView, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#prompt")))
	p.waitFor("the thumbnail again", thumb+`?.naturalWidth === 240 && `+noSideScroll)
	p.shot("phone-attachments")
}
