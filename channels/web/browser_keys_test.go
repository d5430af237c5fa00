package web

import (
	"strings"
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/chromedp/chromedp"
)

// focused is a JavaScript expression: a short name of the focused
// element ("#id", or the tag with its text), and whether its focus can be
// seen (a computed outline or box shadow), as "name|visible".
const focused = `(() => {
	const e = document.activeElement;
	if (!e || e === document.body) return "body|";
	let name = e.id ? "#" + e.id : e.tagName.toLowerCase() + ":" + (e.getAttribute("aria-label") || e.textContent).trim().slice(0, 24);
	if (e.closest("#threads")) name = "thread:" + e.dataset.thread;
	else if (e.closest(".msg")) name = "msg:" + name;
	const s = getComputedStyle(e);
	const outline = s.outlineStyle !== "none" && parseFloat(s.outlineWidth) > 0;
	const shadow = s.boxShadow !== "none";
	return name + "|" + (outline || shadow ? "visible" : "");
})()`

// walk presses Tab (or Shift+Tab) from the top of the page until the
// focus comes back to where it started, and returns the names of the
// elements it reached; every one must show its focus.
func walk(p page, back bool) []string {
	p.t.Helper()
	// Sequential navigation starts at the focused element: the body for
	// Tab, a mark after everything for Shift+Tab.
	eval[chromedp.Void](p, `document.querySelector("#walk-end")?.remove(), document.body.tabIndex = -1, document.body.focus(), 0`)
	if back {
		eval[chromedp.Void](p, `(() => { const m = document.createElement("span"); m.id = "walk-end"; m.tabIndex = -1; document.body.append(m); m.focus(); })(), 0`)
	}
	var opts []chromedp.KeyOption
	if back {
		opts = append(opts, chromedp.KeyModifiers(chromedp.ModifierShift))
	}
	var names []string
	for range 60 {
		p.do("press Tab", chromedp.KeyEvent("\t", opts...))
		name, visible, _ := strings.Cut(eval[string](p, focused), "|")
		if name == "body" || name == "#walk-end" || len(names) > 0 && name == names[0] {
			return names
		}
		if visible == "" {
			p.t.Errorf("the focus on %s cannot be seen (no outline, no shadow)", name)
		}
		names = append(names, name)
	}
	p.t.Fatalf("Tab never came back to the start: %v", names)
	return nil
}

// TestBrowserKeyboardWalk walks the whole page with Tab and Shift+Tab
// from the top: every control is reached, in a sensible order (threads,
// the thread's buttons, the messages' controls, the composer, attach,
// send), and every focus is visible. Then without a mouse: Enter opens a
// thread from the list, the composer sends with Enter and adds a line
// with Shift+Enter, Escape in an empty composer stops the running turn,
// and the delete question is answered with the keyboard.
func TestBrowserKeyboardWalk(t *testing.T) {
	ctx := browser(t)
	a := New(Options{Listen: "127.0.0.1:0", Agents: []string{"demo", "claude"}})
	in := serve(t, a, nil)
	older := a.st.mustCreate("older")
	th := a.st.mustCreate("keys")
	ref := ref(th.ID)
	a.Post(ctx, ref, channels.Message{Kind: channels.KindText, Text: "Some code:\n\n```go\nfmt.Println(1)\n```"})
	a.ToolDetail(ref, "call_1", channels.ToolDetail{Input: `{"command":"ls"}`, Output: "main.go"})
	a.Post(ctx, ref, channels.Message{Kind: channels.KindTool, Key: "call_1", Text: "🛠️ Run ls · done"})
	a.Prompt(ctx, ref, channels.Choice{Text: "Allow `ls`?", Options: []channels.Option{{ID: "allow", Label: "Allow", Style: "primary"}, {ID: "reject", Label: "Reject", Style: "danger"}}})
	p := page{t: t, ctx: ctx}
	p.do("open the thread", desktopView, chromedp.Navigate(a.URL()+"#"+th.ID), chromedp.WaitVisible(chromedp.CSS("#prompt")))
	eval[chromedp.Void](p, `localStorage.setItem("acpgw.asked", "1"), 0`)
	p.waitFor("the thread and its messages", `document.querySelector("#thread-title").textContent === "keys" && document.querySelectorAll(".msg").length === 3`)

	forward := walk(p, false)
	want := []string{"#new-thread", "thread:" + th.ID, "thread:" + older.ID, "#author", "#rename-btn", "#delete-btn"}
	if len(forward) < len(want) || strings.Join(forward[:len(want)], " ") != strings.Join(want, " ") {
		t.Errorf("Tab from the top reaches %v, want it to begin with %v", forward, want)
	}
	tail := []string{"#prompt", "#attach", "#send"}
	if len(forward) < len(tail) || strings.Join(forward[len(forward)-len(tail):], " ") != strings.Join(tail, " ") {
		t.Errorf("Tab from the top reaches %v, want it to end with %v", forward, tail)
	}
	inMessages := strings.Join(forward, " ")
	for _, c := range []string{"msg:button:Copy", "msg:div:🛠️ Run ls · done", "msg:button:Allow", "msg:button:Reject"} {
		if !strings.Contains(inMessages, c) {
			t.Errorf("Tab never reaches %s: %v", c, forward)
		}
	}
	if !strings.Contains(inMessages, "msg:") || strings.Count(inMessages, "msg:") < 4 {
		t.Errorf("Tab reaches too few of the messages' controls (code copy, tool line, Allow, Reject): %v", forward)
	}
	backward := walk(p, true)
	for i, j := 0, len(backward)-1; i < j; i, j = i+1, j-1 {
		backward[i], backward[j] = backward[j], backward[i]
	}
	if strings.Join(backward, " ") != strings.Join(forward, " ") {
		t.Errorf("Shift+Tab walks\n%v\nnot the reverse of Tab's\n%v", backward, forward)
	}
	p.shot("desktop-keyboard-walk")

	// A new thread: the agent choice is in the walk, before the composer.
	p.do("focus New thread", chromedp.Focus(chromedp.CSS("#new-thread")), chromedp.KeyEvent("\r"))
	p.waitFor("a new thread, the composer focused", `document.querySelector("#thread-title").textContent === "New thread" && document.activeElement.id === "prompt"`)
	fresh := walk(p, false)
	if got := strings.Join(fresh, " "); !strings.Contains(got, "#author #pick-agent #prompt #attach #send") {
		t.Errorf("Tab in a new thread reaches %v, want the agent choice between the name and the composer", fresh)
	}

	// Enter on a thread of the list opens it.
	p.do("Tab to the list", chromedp.Focus(chromedp.CSS("#new-thread")), chromedp.KeyEvent("\t"), chromedp.KeyEvent("\t"))
	p.waitFor("the second thread focused", `document.activeElement.dataset.thread === "`+older.ID+`"`)
	p.do("Enter", chromedp.KeyEvent("\r"))
	p.waitFor("the thread opened", `document.querySelector("#thread-title").textContent === "older"`)
	// The list is drawn again when threads change; the focus stays.
	eval[chromedp.Void](p, `document.querySelector('#threads button[data-thread="`+th.ID+`"]').focus(), 0`)
	a.Post(ctx, channels.ThreadRef{Platform: Platform, Channel: Channel, Thread: older.ID}, channels.Message{Kind: channels.KindText, Text: "more"})
	p.waitFor("the list redrawn, the focus kept", `document.querySelector("#threads button").dataset.thread === "`+older.ID+`" && document.activeElement.dataset.thread === "`+th.ID+`"`)
	p.do("Enter", chromedp.KeyEvent("\r"))
	p.waitFor("the thread opened again", `document.querySelector("#thread-title").textContent === "keys"`)

	// Shift+Enter adds a line; Enter sends.
	p.do("write two lines", chromedp.Focus(chromedp.CSS("#prompt")), chromedp.KeyEvent("one"), chromedp.KeyEvent("\r", chromedp.KeyModifiers(chromedp.ModifierShift)), chromedp.KeyEvent("two"))
	if got := eval[string](p, `document.querySelector("#prompt").value`); got != "one\ntwo" {
		t.Errorf("after Shift+Enter the composer holds %q, want two lines", got)
	}
	p.do("Enter", chromedp.KeyEvent("\r"))
	if ev := in.next(t); ev.Text != "one\ntwo" || ev.Thread != ref {
		t.Fatalf("inbound = %+v, want the two lines in %v", ev, ref)
	}
	p.waitFor("the composer empty", `document.querySelector("#prompt").value === "" && document.activeElement.id === "prompt"`)

	// Escape in the empty composer stops the running turn.
	a.Typing(ctx, ref)
	p.waitFor("Stop shown", `!document.querySelector("#stop").hidden`)
	p.do("Escape", chromedp.KeyEvent("\u001b"))
	if ev := in.next(t); !ev.Stop || ev.Thread != ref {
		t.Fatalf("inbound = %+v, want an explicit stop in %v", ev, ref)
	}
	a.StopTyping(ctx, ref)

	// The delete question, with the keyboard: Cancel has the focus, and
	// Shift+Tab reaches Delete.
	p.do("Tab to delete", chromedp.Focus(chromedp.CSS("#rename-btn")), chromedp.KeyEvent("\t"))
	p.waitFor("delete focused", `document.activeElement.id === "delete-btn"`)
	p.do("Enter", chromedp.KeyEvent("\r"))
	p.waitFor("the question, Cancel focused", `!document.querySelector("#confirm").hidden && document.activeElement.id === "confirm-no"`)
	p.shot("desktop-keyboard-delete")
	p.do("Shift+Tab", chromedp.KeyEvent("\t", chromedp.KeyModifiers(chromedp.ModifierShift)))
	p.waitFor("Delete focused", `document.activeElement.id === "confirm-yes"`)
	p.do("Enter", chromedp.KeyEvent("\r"))
	if ev := in.next(t); !ev.Closed || ev.Thread != ref {
		t.Fatalf("inbound = %+v, want the thread closed", ev)
	}
	p.waitFor("the other thread shown, the composer focused", `document.querySelector("#thread-title").textContent === "older" && document.activeElement.id === "prompt"`)
	if a.st.hasThread(th.ID) {
		t.Error("the thread is still there after Delete")
	}

	// On a phone the thread list is behind the menu button: closed, Tab
	// skips it; Enter opens it with the focus on the first thread; Tab
	// out of it closes it.
	p.do("on a phone", phoneView, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#prompt")))
	p.waitFor("the thread open", `document.querySelector("#thread-title").textContent === "older"`)
	phone := walk(p, false)
	if len(phone) == 0 || phone[0] != "#menu" || strings.Contains(strings.Join(phone, " "), "thread:") || strings.Contains(strings.Join(phone, " "), "#new-thread") {
		t.Errorf("Tab on a phone reaches %v, want the menu button first and not the hidden list", phone)
	}
	p.do("Enter on the menu", chromedp.Focus(chromedp.CSS("#menu")), chromedp.KeyEvent("\r"))
	p.waitFor("the list open, its thread focused", `document.querySelector("#menu").getAttribute("aria-expanded") === "true" && document.activeElement.dataset.thread === "`+older.ID+`"`)
	p.waitFor("the list slid in", `document.querySelector("#sidebar").getBoundingClientRect().left >= 0`)
	p.shot("phone-keyboard-menu")
	p.do("Tab twice", chromedp.KeyEvent("\t"), chromedp.KeyEvent("\t"))
	p.waitFor("out of the list: closed, on the menu button", `document.activeElement.id === "menu" && document.querySelector("#menu").getAttribute("aria-expanded") === "false"`)
}
