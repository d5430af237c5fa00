package web

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/google/go-cmp/cmp"
)

// TestBrowserSteer uses the session header, the command palette, a
// form and a reaction on a laptop and a phone: the palette opens at "/",
// filters, is walked with the arrows and picks with Enter; a header menu
// sends its command; the form's answer arrives with its values; the new
// elements keep a contrast of 4.5:1 in both themes.
func TestBrowserSteer(t *testing.T) {
	for _, view := range []struct {
		name string
		act  chromedp.Action[chromedp.Void]
	}{{"desktop", desktopView}, {"phone", phoneView}} {
		t.Run(view.name, func(t *testing.T) { steerIn(t, view.name, view.act) })
	}
}

func steerIn(t *testing.T, name string, view chromedp.Action[chromedp.Void]) {
	ctx := browser(t)
	a := New(Options{Listen: "127.0.0.1:0"})
	in := serve(t, a, nil)
	th := a.st.mustCreate("steer")
	ref := ref(th.ID)
	p := page{t: t, ctx: ctx}
	p.do("open the thread", view, chromedp.Navigate(a.URL()+"#"+th.ID), chromedp.WaitVisible(chromedp.CSS("#prompt")))
	p.waitFor("the thread open", `document.querySelector("#thread-title").textContent === "steer"`)
	eval[chromedp.Void](p, `localStorage.setItem("acpgw.asked", "1"), 0`)

	// The header.
	a.ShowSession(ref, demoSession())
	p.waitFor("the session header", `!document.querySelector("#session").hidden && document.querySelector("#session").textContent.includes("21% context")`)
	if got := eval[string](p, `document.querySelector("#session").textContent`); !strings.Contains(got, "demo") || !strings.Contains(got, "Fast ▾") || !strings.Contains(got, "Ask ▾") || !strings.Contains(got, "$0.21") {
		t.Errorf("header = %q, want demo · Fast · Ask · … · 21%% context · $0.21", got)
	}
	if w := eval[bool](p, `document.scrollingElement.scrollWidth <= innerWidth`); !w {
		t.Error("the page overflows sideways with the session header")
	}

	// A session without settings shows its values as text.
	a.ShowSession(ref, channels.SessionInfo{Agent: "demo", Model: "Opus", Mode: "Plan"})
	p.waitFor("the plain session", `document.querySelector("#session").textContent === "demoOpusPlan"`)
	a.ShowSession(ref, demoSession())
	p.waitFor("the session again", `document.querySelector("#session").textContent.includes("21% context")`)

	// A header menu, by keyboard: the current value is marked and
	// focused; Down and Enter pick the next one.
	p.do("open the model menu", chromedp.Focus(chromedp.CSS(`#session [data-setting="model"]`)), chromedp.KeyEvent("\r"))
	p.waitFor("the menu open", `document.activeElement.getAttribute("role") === "menuitemradio"`)
	if got := eval[string](p, `[...document.querySelectorAll("#session [role=menuitemradio]")].map(i => i.textContent + ":" + i.getAttribute("aria-checked")).join(" ")`); got != "Fast:true Deep:false" {
		t.Errorf("model menu = %q, want Fast checked, Deep not", got)
	}
	p.shot(name + "-session-menu")
	p.do("pick Deep", chromedp.KeyEvent(kb.ArrowDown), chromedp.KeyEvent("\r"))
	ev := in.next(t)
	if want := (&channels.Command{Name: "model", Args: "deep"}); ev.Intent() != channels.IntentCommand || !cmp.Equal(ev.Command, want) || ev.Thread != ref {
		t.Errorf("the menu sent %v %+v in %v, want %+v", ev.Intent(), ev.Command, ev.Thread, want)
	}
	p.waitFor("the menu closed, focus back on its button", `!document.querySelector("#session .menu") && document.activeElement.dataset.setting === "model"`)
	p.do("pick a verbosity by click", chromedp.Click(chromedp.CSS(`#session [data-setting="verbosity"]`)))
	if r := eval[bool](p, `document.querySelector("#session .menu").getBoundingClientRect().right <= innerWidth`); !r {
		t.Error("the rightmost menu goes past the screen's edge")
	}
	p.do("click chatty", chromedp.Click(chromedp.CSS(`#session .menu [data-value="chatty"]`)))
	if ev := in.next(t); !cmp.Equal(ev.Command, &channels.Command{Name: "set", Args: "verbosity chatty"}) {
		t.Errorf("the verbosity menu sent %+v, want /set verbosity chatty", ev.Command)
	}

	// The palette: "/" opens it with the gateway's and the agent's
	// commands; typing filters; arrows walk; Enter puts the command in
	// the composer; Escape closes without stopping anything.
	p.do("type /", chromedp.Focus(chromedp.CSS("#prompt")), chromedp.KeyEvent("/"))
	p.waitFor("the palette open", `!document.querySelector("#palette").hidden`)
	opts := eval[string](p, `[...document.querySelectorAll("#palette [role=option]")].map(o => o.textContent).join("|")`)
	for _, want := range []string{"/stop", "/model model", "/compact", "agent"} {
		if !strings.Contains(opts, want) {
			t.Errorf("palette = %q, want it to list %q", opts, want)
		}
	}
	if got := eval[string](p, `document.querySelector("#prompt").getAttribute("aria-activedescendant") + " " + document.querySelector("#pal-0").getAttribute("aria-selected")`); got != "pal-0 true" {
		t.Errorf("active option = %q, want pal-0 selected", got)
	}
	p.shot(name + "-palette")
	p.do("filter by co", chromedp.KeyEvent("co"))
	p.waitFor("filtered", `[...document.querySelectorAll("#palette [role=option]")].every(o => o.textContent.includes("co"))`)
	if n := eval[int](p, `document.querySelectorAll("#palette [role=option]").length`); n != 1 {
		t.Errorf("after /co the palette has %d options, want 1 (compact)", n)
	}
	p.do("erase the filter", chromedp.KeyEvent("\b\b"))
	// The gateway's commands (the session's /model among them) and the
	// agent's compact.
	p.waitFor("all again", fmt.Sprintf(`document.querySelectorAll("#palette [role=option]").length === %d`, len(channels.Commands())+1))
	p.do("walk down twice and up once", chromedp.KeyEvent(kb.ArrowDown), chromedp.KeyEvent(kb.ArrowDown), chromedp.KeyEvent(kb.ArrowUp))
	picked := eval[string](p, `document.querySelector("#" + document.querySelector("#prompt").getAttribute("aria-activedescendant") + " b").textContent.split(" ")[0]`)
	p.do("Enter picks", enterDown)
	p.waitFor("the palette closed", `document.querySelector("#palette").hidden`)
	if got := eval[string](p, `document.querySelector("#prompt").value`); got != picked+" " {
		t.Errorf("composer after the pick = %q, want %q", got, picked+" ")
	}
	in.empty(t) // Enter picked; it did not send
	eval[chromedp.Void](p, `document.querySelector("#prompt").value = "", 0`)
	p.do("/ and Escape", chromedp.KeyEvent("/"), chromedp.KeyEvent("\u001b"))
	p.waitFor("the palette closed by Escape", `document.querySelector("#palette").hidden`)
	eval[chromedp.Void](p, `document.querySelector("#prompt").value = "", 0`)
	// A complete command: its exact name comes first (before /model,
	// which it starts), and one Enter sends it as typed.
	p.do("type /mode", chromedp.KeyEvent("/mode"))
	p.waitFor("the palette on /mode", `document.querySelector("#pal-0 b")?.textContent.startsWith("/mode ")`)
	p.do("Enter sends /mode", enterDown)
	if ev := in.next(t); ev.Intent() != channels.IntentCommand || !cmp.Equal(ev.Command, &channels.Command{Name: "mode"}) {
		t.Errorf("Enter on /mode sent %v %+v, want the command /mode", ev.Intent(), ev.Command)
	}
	p.waitFor("the composer emptied, the palette closed", `document.querySelector("#prompt").value === "" && document.querySelector("#palette").hidden`)

	// A form, answered.
	a.React(ctx, channels.Handle{Thread: ref, ID: "none"}, "👀") // nothing to show
	h, err := a.Form(ctx, ref, demoForm())
	if err != nil {
		t.Fatal(err)
	}
	p.waitFor("the form", `document.querySelector(`+msgSel(h, " form.qform")+`) !== null`)
	a.React(ctx, h, "👀")
	p.waitFor("the reaction", `document.querySelector(`+msgSel(h, " .reactions")+`)?.textContent === "👀"`)
	eval[chromedp.Void](p, `window.scrollTo(0, 0), 0`)
	for _, scheme := range []string{"light", "dark"} {
		p.do(scheme+" theme", colorScheme(scheme))
		p.waitFor(scheme+" theme applied", fmt.Sprintf(`matchMedia("(prefers-color-scheme: %s)").matches`, scheme))
		p.do("open the model menu", chromedp.Click(chromedp.CSS(`#session [data-setting="model"]`)))
		if bad := eval[[]string](p, contrastFailures); len(bad) > 0 {
			t.Errorf("%s theme: texts under 4.5:1:\n%s", scheme, strings.Join(bad, "\n"))
		}
		p.do("close the menu", chromedp.KeyEvent("\u001b"))
		p.shot(name + "-form-" + scheme)
	}
	p.do("type a name", chromedp.SendKeys(chromedp.CSS(`#q`+string(h.ID)+`-name`), "web"))
	p.do("set the replicas", chromedp.SetValue(chromedp.CSS(`#q`+string(h.ID)+`-count`), "3"))
	for _, v := range []string{"prod", "eu", "ap"} {
		p.do("tick "+v, chromedp.Click(chromedp.CSS(msgSelCSS(h, ` input[value="`+v+`"]`))))
	}
	p.do("submit", chromedp.Click(chromedp.CSS(msgSelCSS(h, ` button[type="submit"]`))))
	ev = in.next(t)
	want := &channels.FormAnswer{Form: h, Action: channels.FormAccept, Values: map[string][]string{
		"name": {"web"}, "count": {"3"}, "env": {"prod"}, "regions": {"eu", "ap"}, "dry": {"false"},
	}}
	if !cmp.Equal(ev.Form, want) {
		t.Errorf("form answer (-want +got):\n%s", cmp.Diff(want, ev.Form))
	}
	a.Edit(ctx, h, channels.Message{Kind: channels.KindNotice, Text: "✅ Answered by guest: web, 3, Production"})
	p.waitFor("the form folded", `document.querySelector(`+msgSel(h, " form")+`) === null && document.querySelector(`+msgSel(h, "")+`).textContent.includes("Answered by")`)
}

// enterDown presses Enter as a browser does when the page takes the
// keydown (preventDefault): no character follows. (chromedp's KeyEvent
// sends the character as an event of its own.)
var enterDown = chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
	for _, typ := range []string{"rawKeyDown", "keyUp"} {
		if err := t.Call(ctx, "Input.dispatchKeyEvent", map[string]any{"type": typ, "key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13}, nil); err != nil {
			return err
		}
	}
	return nil
})

// msgSelCSS is the CSS selector of message id, unquoted.
func msgSelCSS(h channels.Handle, rest string) string {
	return `.msg[data-id="` + string(h.ID) + `"]` + rest
}
