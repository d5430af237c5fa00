package web

import (
	"fmt"
	"strings"
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/chromedp/chromedp"
)

// TestBrowserFollowsAndGrows on a laptop and a phone: the list stays at
// its newest message when the session line appears after the page
// loaded and while the composer grows; the composer grows with its text
// up to 40 % of the screen (no resize handle, no scrolling inside
// itself before that) and shrinks back when emptied; a reply growing
// below a reader who scrolled up shows "New messages ↓"; a selection in
// the paragraph being written stays while it grows.
func TestBrowserFollowsAndGrows(t *testing.T) {
	for _, view := range []struct {
		name string
		act  chromedp.Action[chromedp.Void]
	}{{"desktop", desktopView}, {"phone", phoneView}} {
		t.Run(view.name, func(t *testing.T) { followIn(t, view.name, view.act) })
	}
}

func followIn(t *testing.T, name string, view chromedp.Action[chromedp.Void]) {
	ctx := browser(t)
	a := New(Options{Listen: "127.0.0.1:0"})
	serve(t, a, nil)
	th := a.st.mustCreate("follow")
	ref := ref(th.ID)
	for i := range 30 {
		a.st.addMessage(th.ID, message{Role: roleUser, Author: "ann", Kind: "text", Text: fmt.Sprintf("question %d", i)})
		a.Post(ctx, ref, channels.Message{Kind: channels.KindText, Text: fmt.Sprintf("answer %d: %s", i, strings.Repeat("words ", 20))})
	}
	last, _ := a.Post(ctx, ref, channels.Message{Kind: channels.KindText, Text: "the newest answer"})
	p := page{t: t, ctx: ctx}
	p.do("open the thread", view, chromedp.Navigate(a.URL()+"#"+th.ID), chromedp.WaitVisible(chromedp.CSS("#prompt")))
	p.waitFor("the newest message", `document.querySelector(`+msgSel(last, "")+`) !== null`)
	p.waitFor("the list at its newest message", atEnd)

	// The session line comes after the page scrolled to the end.
	a.ShowSession(ref, demoSession())
	p.waitFor("the session line", `!document.querySelector("#session").hidden`)
	p.waitFor("the newest message still in view, not under the composer", atEnd)

	// The composer grows with its text, the list keeping to its end.
	const prompt = `document.querySelector("#prompt")`
	h0 := eval[float64](p, prompt+`.offsetHeight`)
	if r := eval[string](p, `getComputedStyle(`+prompt+`).resize`); r != "none" {
		t.Errorf("the composer has resize %q, want none (it grows by itself)", r)
	}
	eval[chromedp.Void](p, `(() => { const p = `+prompt+`; p.value = "one\ntwo\nthree\nfour\nfive"; p.dispatchEvent(new Event("input")); })(), 0`)
	p.waitFor("the composer grown to its five lines", prompt+`.offsetHeight > `+fmt.Sprint(h0)+` && `+prompt+`.scrollHeight <= `+prompt+`.clientHeight`)
	p.waitFor("the list at its end above the grown composer", atEnd)
	p.shot(name + "-composer-grown")
	eval[chromedp.Void](p, `(() => { const p = `+prompt+`; p.value = Array(200).fill("line").join("\n"); p.dispatchEvent(new Event("input")); })(), 0`)
	p.waitFor("the composer at most 40 % of the screen, scrolling inside", prompt+`.offsetHeight <= innerHeight * 0.4 + 1 && getComputedStyle(`+prompt+`).overflowY === "auto"`)
	eval[chromedp.Void](p, `(() => { const p = `+prompt+`; p.value = ""; p.dispatchEvent(new Event("input")); })(), 0`)
	p.waitFor("the composer back to its size", prompt+`.offsetHeight === `+fmt.Sprint(h0))

	// A reader selects words of the paragraph being written: the
	// selection stays while the paragraph grows.
	h, _ := a.Post(ctx, ref, channels.Message{Kind: channels.KindText, Text: "Selected words here, then"})
	p.waitFor("the paragraph being written", `document.querySelector(`+msgSel(h, " .text p")+`) !== null`)
	eval[chromedp.Void](p, `(() => { const t = document.querySelector(`+msgSel(h, " .text p")+`).firstChild; getSelection().setBaseAndExtent(t, 0, t, 14); })(), 0`)
	for i := range 3 {
		if err := a.Edit(ctx, h, channels.Message{Kind: channels.KindText, Text: "Selected words here, then" + strings.Repeat(" more", i+1)}); err != nil {
			t.Fatal(err)
		}
		p.waitFor("the paragraph grown", fmt.Sprintf(`document.querySelector(`+msgSel(h, " .text")+`).textContent.endsWith("then%s")`, strings.Repeat(" more", i+1)))
		if got := eval[string](p, `getSelection().toString()`); got != "Selected words" {
			t.Fatalf("after %d edits the selection is %q, want %q", i+1, got, "Selected words")
		}
	}
	eval[chromedp.Void](p, `getSelection().removeAllRanges(), 0`)
	last = h

	// A burst of edits (a reply streamed at the web chat's pace) is shown
	// once per animation frame, ending in its last state.
	burst, _ := a.Post(ctx, ref, channels.Message{Kind: channels.KindText, Text: "burst"})
	p.waitFor("the burst's message", `document.querySelector(`+msgSel(burst, " .text")+`) !== null`)
	eval[chromedp.Void](p, `(() => {
		const t = document.querySelector(`+msgSel(burst, " .text")+`);
		window.renders = 0; window.frames = 0;
		new MutationObserver(() => window.renders++).observe(t, {subtree: true, childList: true, characterData: true});
		const tick = () => { window.frames++; if (window.frames < 100000) requestAnimationFrame(tick); };
		requestAnimationFrame(tick);
	})(), 0`)
	const pieces = 40
	for i := range pieces {
		if err := a.Edit(ctx, burst, channels.Message{Kind: channels.KindText, Text: "burst" + strings.Repeat(" more", i+1)}); err != nil {
			t.Fatal(err)
		}
	}
	p.waitFor("the burst's last state", `document.querySelector(`+msgSel(burst, " .text")+`).textContent.endsWith("burst`+strings.Repeat(" more", pieces)+`")`)
	if got := eval[[]float64](p, `[window.renders, window.frames]`); got[0] > got[1]+1 {
		t.Errorf("%d edits rendered %v times in %v frames, want at most once a frame", pieces, got[0], got[1])
	}
	last = burst

	// A reader scrolls up; the newest reply grows below them.
	eval[chromedp.Void](p, `(() => { const m = document.querySelector("#messages"); m.scrollTop = 0; m.dispatchEvent(new Event("scroll")); })(), 0`)
	if err := a.Edit(ctx, last, channels.Message{Kind: channels.KindText, Text: "the newest answer, " + strings.Repeat("growing ", 80)}); err != nil {
		t.Fatal(err)
	}
	p.waitFor("the grown reply", `document.querySelector(`+msgSel(last, " .text")+`)?.textContent.includes("growing")`)
	p.waitFor("the new-messages button", inView("#jump"))
	if top := eval[float64](p, `document.querySelector("#messages").scrollTop`); top != 0 {
		t.Errorf("the list moved to %v while the reader was reading above", top)
	}
}
