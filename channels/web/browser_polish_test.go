package web

import (
	"strconv"
	"strings"
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/chromedp/chromedp"
)

// TestBrowserSmallThings on a laptop and a phone: the page has an icon
// of its own; an empty thread offers things to try, which fill the
// composer; a long thread title keeps its agent pill on its line; a
// failed tool line is coloured; a task list's boxes have names; the list
// keeps its size as a turn starts and ends.
func TestBrowserSmallThings(t *testing.T) {
	for _, view := range []struct {
		name string
		act  chromedp.Action[chromedp.Void]
	}{{"desktop", desktopView}, {"phone", phoneView}} {
		t.Run(view.name, func(t *testing.T) { smallThingsIn(t, view.name, view.act) })
	}
}

func smallThingsIn(t *testing.T, name string, view chromedp.Action[chromedp.Void]) {
	ctx := browser(t)
	a := New(Options{Listen: "127.0.0.1:0"})
	serve(t, a, nil)
	long := a.st.mustCreate("a thread with a very long title that goes on and on about the nightly build " + strings.Repeat("and more ", 8))
	a.st.setAgent(long.ID, "claude")
	th := a.st.mustCreate("small things")
	ref := ref(th.ID)
	p := page{t: t, ctx: ctx}
	p.do("open the empty thread", view, chromedp.Navigate(a.URL()+"#"+th.ID), chromedp.WaitVisible(chromedp.CSS("#prompt")))
	p.waitFor("the thread open", `document.querySelector("#thread-title").textContent === "small things"`)

	if icon := eval[string](p, `document.querySelector("link[rel=icon]")?.href ?? ""`); !strings.HasPrefix(icon, "data:image/svg+xml,") {
		t.Errorf("the page's icon = %q, want an SVG of its own (no request for /favicon.ico)", icon)
	}

	p.waitFor("the things to try", `!document.querySelector("#empty").hidden && document.querySelectorAll("#empty .hints button").length === 3`)
	p.shot(name + "-empty-hints")
	p.do("pick /status", chromedp.Click(chromedp.CSS(`#empty .hints button[data-text="/status"]`)))
	p.waitFor("the composer filled", `document.querySelector("#prompt").value === "/status" && document.activeElement === document.querySelector("#prompt")`)
	eval[chromedp.Void](p, `document.querySelector("#prompt").value = "", 0`)

	// The long title: its pill on the same line, inside the button.
	if name == "phone" {
		p.do("open the menu", chromedp.Click(chromedp.CSS("#menu")))
	}
	sel := `#threads button[data-thread="` + long.ID + `"]`
	p.waitFor("the long thread in the list", `document.querySelector(`+strconv.Quote(sel)+`) !== null`)
	if !eval[bool](p, `(() => { const b = document.querySelector(`+strconv.Quote(sel)+`).getBoundingClientRect(), g = document.querySelector(`+strconv.Quote(sel+" .agent")+`).getBoundingClientRect(); return g.right <= b.right + 0.5 && g.bottom <= b.bottom + 0.5 && b.height < 48; })()`) {
		t.Errorf("the agent pill of a long title is not on its line inside the button")
	}
	if name == "phone" {
		p.do("close the menu", chromedp.Click(chromedp.CSS("#scrim")))
	}

	// A failed tool line in the danger colour, a done one not.
	failed, _ := a.Post(ctx, ref, channels.Message{Kind: channels.KindTool, Key: "c1", Text: "🛠️ Run make · failed"})
	done, _ := a.Post(ctx, ref, channels.Message{Kind: channels.KindTool, Key: "c2", Text: "🛠️ Run ls · done"})
	p.waitFor("the tool lines", `document.querySelector(`+msgSel(done, "")+`) !== null`)
	colour := func(h channels.Handle) string {
		return eval[string](p, `getComputedStyle(document.querySelector(`+msgSel(h, " .text")+`)).color`)
	}
	danger := eval[string](p, `(() => { const s = document.createElement("span"); s.style.color = "var(--danger)"; document.body.appendChild(s); const c = getComputedStyle(s).color; s.remove(); return c; })()`)
	if colour(failed) != danger || colour(done) == danger {
		t.Errorf("tool line colours: failed %s, done %s; want the failed one %s and only it", colour(failed), colour(done), danger)
	}

	// A task list's boxes say what they mean.
	tasks, _ := a.Post(ctx, ref, channels.Message{Kind: channels.KindText, Text: "- [x] build\n- [ ] test"})
	p.waitFor("the task list", `document.querySelectorAll(`+msgSel(tasks, " input[type=checkbox]")+`).length === 2`)
	if got := eval[string](p, `[...document.querySelectorAll(`+msgSel(tasks, " input[type=checkbox]")+`)].map(c => c.getAttribute("aria-label")).join(",")`); got != "done,not done" {
		t.Errorf("the task boxes' names = %q, want done,not done", got)
	}

	// A turn starts and ends: the list keeps its height.
	h0 := eval[float64](p, `document.querySelector("#messages").clientHeight`)
	a.Typing(ctx, ref)
	p.waitFor("the turn running", `!document.querySelector("#stop").hidden`)
	p.shot(name + "-working")
	if h := eval[float64](p, `document.querySelector("#messages").clientHeight`); h != h0 {
		t.Errorf("the list is %vpx high while a turn runs, %vpx before: the page jumps", h, h0)
	}
	a.StopTyping(ctx, ref)
	p.waitFor("the turn over", `document.querySelector("#stop").hidden`)
	if h := eval[float64](p, `document.querySelector("#messages").clientHeight`); h != h0 {
		t.Errorf("the list is %vpx high after the turn, %vpx before", h, h0)
	}
}
