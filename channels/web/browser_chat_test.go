package web

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/chromedp/chromedp"
)

// The two screens the page is checked at: a laptop and a phone.
var (
	desktopView = chromedp.EmulateViewport(1280, 900)
	phoneView   = chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile, chromedp.EmulateScale(2))
)

// shot saves a screenshot of the page as name.png in $WEB_SCREENSHOTS
// (for a person to look at), else in the test's temporary directory.
func (p page) shot(name string) {
	p.t.Helper()
	dir := os.Getenv("WEB_SCREENSHOTS")
	if dir == "" {
		dir = p.t.TempDir()
	}
	png, err := chromedp.Run(p.ctx, chromedp.CaptureScreenshot())
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644)
	}
	if err != nil {
		p.t.Errorf("screenshot %s: %v", name, err)
	}
}

// inView is a JavaScript expression: element sel is shown whole inside
// the viewport.
func inView(sel string) string {
	return fmt.Sprintf(`(() => { const e = document.querySelector(%q); if (!e || e.offsetParent === null) return false;
		const r = e.getBoundingClientRect();
		return r.width > 0 && r.left >= 0 && r.top >= 0 && r.right <= innerWidth && r.bottom <= innerHeight; })()`, sel)
}

// noSideScroll is a JavaScript expression: nothing overflows sideways.
const noSideScroll = `document.scrollingElement.scrollWidth <= innerWidth`

// atEnd is a JavaScript expression: the message list shows its newest
// message.
const atEnd = `(() => { const m = document.querySelector("#messages"); return m.scrollHeight - m.scrollTop - m.clientHeight < 2; })()`

// TestBrowserPhone uses the page on a 390×844 phone: the message list
// scrolls inside itself and opens at its newest message, the composer
// with Send and Stop stays in the viewport, nothing overflows sideways,
// streaming is followed unless the reader scrolled up (then a "new
// messages" button), and the thread list sits behind a menu button.
func TestBrowserPhone(t *testing.T) {
	ctx := browser(t)
	a := New(Options{Listen: "127.0.0.1:0"})
	serve(t, a, nil)
	p := page{t: t, ctx: ctx}

	other := a.st.mustCreate("an older thread")
	th := a.st.mustCreate("a long thread")
	ref := ref(th.ID)
	for i := range 40 {
		a.st.addMessage(th.ID, message{Role: roleUser, Author: "ann", Kind: "text", Text: fmt.Sprintf("question %d", i)})
		a.Post(ctx, ref, channels.Message{Kind: channels.KindText, Text: fmt.Sprintf("answer %d: %s", i, strings.Repeat("words ", 20))})
	}
	a.Post(ctx, ref, channels.Message{Kind: channels.KindText, Text: "a long line: " + strings.Repeat("x", 300) +
		"\n\n```\n" + strings.Repeat("wide code ", 40) + "\n```\n\nhttps://example.com/" + strings.Repeat("path/", 40)})
	last, _ := a.Post(ctx, ref, channels.Message{Kind: channels.KindText, Text: "the newest answer"})

	p.do("open the thread on a phone", phoneView, chromedp.Navigate(a.URL()+"#"+th.ID), chromedp.WaitVisible(chromedp.CSS("#prompt")))
	p.waitFor("the newest message", `document.querySelector(`+msgSel(last, "")+`) !== null`)
	p.waitFor("the list at its newest message", atEnd)
	if !eval[bool](p, `(() => { const m = document.querySelector("#messages"); return m.scrollHeight > m.clientHeight; })()`) {
		t.Errorf("the message list does not scroll inside itself")
	}
	if got := eval[[]float64](p, `[document.scrollingElement.scrollWidth, document.scrollingElement.scrollHeight, innerWidth, innerHeight]`); got[0] > got[2] || got[1] > got[3] {
		t.Errorf("page scroll size %v×%v, viewport %v×%v: the page itself scrolls", got[0], got[1], got[2], got[3])
	}
	if !eval[bool](p, inView("#send")) || !eval[bool](p, inView("#prompt")) {
		t.Errorf("the composer is not inside the viewport")
	}
	if eval[bool](p, inView("#threads")) || !eval[bool](p, inView("#menu")) {
		t.Errorf("the thread list is not behind the menu button")
	}
	p.shot("phone-thread")

	// A turn runs: Stop and Send both fit.
	a.Typing(ctx, ref)
	p.waitFor("Stop shown", `!document.querySelector("#stop").hidden`)
	for _, sel := range []string{"#stop", "#send", "#attach", "#prompt"} {
		if !eval[bool](p, inView(sel)) {
			t.Errorf("%s is not inside the viewport while a turn runs", sel)
		}
	}
	if !eval[bool](p, noSideScroll) {
		t.Errorf("the page overflows sideways while a turn runs")
	}

	// Streaming is followed at the end.
	h, _ := a.Post(ctx, ref, channels.Message{Kind: channels.KindText, Text: "streaming"})
	a.Edit(ctx, h, channels.Message{Kind: channels.KindText, Text: "streaming " + strings.Repeat("more words ", 60)})
	p.waitFor("the streamed text", `document.querySelector(`+msgSel(h, " .text")+`)?.textContent.includes("more words")`)
	p.waitFor("the list following the stream", atEnd)
	p.shot("phone-turn")

	// A reader who scrolled up stays where they are and is told.
	// (The scroll event is dispatched at once: the browser's own comes
	// with the next frame, which may be after the next message.)
	eval[chromedp.Void](p, `(() => { const m = document.querySelector("#messages"); m.scrollTop = 0; m.dispatchEvent(new Event("scroll")); })(), 0`)
	later, _ := a.Post(ctx, ref, channels.Message{Kind: channels.KindText, Text: "while you read"})
	p.waitFor("the new message", `document.querySelector(`+msgSel(later, "")+`) !== null`)
	p.waitFor("the new-messages button", inView("#jump"))
	if top := eval[float64](p, `document.querySelector("#messages").scrollTop`); top != 0 {
		t.Errorf("the list moved to %v while the reader was reading above", top)
	}
	p.shot("phone-new-messages")
	p.do("jump to the new messages", chromedp.Click(chromedp.CSS("#jump")))
	p.waitFor("the list at its end and the button gone", atEnd+` && document.querySelector("#jump").hidden`)

	// The thread list behind the menu.
	p.do("open the menu", chromedp.Click(chromedp.CSS("#menu")))
	p.waitFor("the thread list shown", inView(`#threads button[data-thread="`+other.ID+`"]`))
	p.shot("phone-menu")
	p.do("pick the other thread", chromedp.Click(chromedp.CSS(`#threads button[data-thread="`+other.ID+`"]`)))
	p.waitFor("the other thread open and the menu closed", `document.querySelector("#thread-title").textContent === "an older thread" && document.querySelector("#menu").getAttribute("aria-expanded") === "false"`)
	p.waitFor("the sidebar hidden", `!(`+inView("#threads")+`)`)

	// The laptop: the sidebar is shown and there is no menu button.
	p.do("go back on a laptop", desktopView, chromedp.Navigate("about:blank"), chromedp.Navigate(a.URL()+"#"+th.ID), chromedp.WaitVisible(chromedp.CSS("#prompt")))
	p.waitFor("the newest message", `document.querySelector(`+msgSel(last, "")+`) !== null`)
	p.waitFor("the list at its newest message", atEnd)
	if !eval[bool](p, inView("#threads")) || eval[bool](p, inView("#menu")) || !eval[bool](p, noSideScroll) {
		t.Errorf("on a laptop: want the sidebar shown, no menu button, no sideways overflow")
	}
	p.shot("desktop-thread")
}

// TestBrowserTenTabs opens the page in ten tabs of one browser, each on
// its own thread: all ten stay live (each shows a message posted to its
// thread), and the tenth can send, into its own thread. With an event
// stream per tab, the browser's six connections per host were taken by
// the first six tabs and the others hung.
func TestBrowserTenTabs(t *testing.T) {
	ctx := browser(t)
	a := New(Options{Listen: "127.0.0.1:0"})
	in := serve(t, a, nil)
	const n = 10
	var tabs [n]page
	var ids [n]string
	for i := range n {
		ids[i] = a.st.mustCreate(fmt.Sprintf("thread %d", i+1)).ID
		tctx, cancel := chromedp.NewContext(ctx) // a new tab in the same browser
		t.Cleanup(cancel)
		if err := chromedp.Do(tctx); err != nil { // opens the tab for tctx's whole life
			t.Fatalf("opening tab %d: %v", i+1, err)
		}
		tabs[i] = page{t: t, ctx: tctx}
		tabs[i].do(fmt.Sprintf("open tab %d", i+1), chromedp.Navigate(a.URL()+"#"+ids[i]), chromedp.WaitVisible(chromedp.CSS("#prompt")))
		tabs[i].waitFor(fmt.Sprintf("tab %d on its thread", i+1), fmt.Sprintf(`document.querySelector("#thread-title").textContent === "thread %d"`, i+1))
	}
	eval[chromedp.Void](tabs[0], `localStorage.setItem("acpgw.asked", "1"), 0`) // the name question is for another test
	for i := range n {
		h, err := a.Post(ctx, ref(ids[i]), channels.Message{Kind: channels.KindText, Text: fmt.Sprintf("live in %d", i+1)})
		if err != nil {
			t.Fatal(err)
		}
		tabs[i].waitFor(fmt.Sprintf("tab %d live", i+1), `document.querySelector(`+msgSel(h, " .text")+`)?.textContent === `+fmt.Sprintf("%q", fmt.Sprintf("live in %d", i+1)))
	}
	tabs[n-1].do("send from the tenth tab", chromedp.SendKeys(chromedp.CSS("#prompt"), "from the tenth tab\r"))
	ev := in.next(t)
	if ev.Text != "from the tenth tab" || ev.Thread != ref(ids[n-1]) {
		t.Fatalf("inbound = %q in %v, want the tenth tab's text in %v", ev.Text, ev.Thread, ref(ids[n-1]))
	}
	tabs[n-1].waitFor("the message shown in the tenth tab", `[...document.querySelectorAll('.msg[data-role="user"] .text')].some(e => e.textContent === "from the tenth tab")`)
	tabs[0].do("send from the first tab", chromedp.SendKeys(chromedp.CSS("#prompt"), "from the first tab\r"))
	if ev := in.next(t); ev.Text != "from the first tab" || ev.Thread != ref(ids[0]) {
		t.Fatalf("inbound = %q in %v, want the first tab's text in %v", ev.Text, ev.Thread, ref(ids[0]))
	}
	in.empty(t)
}

// runAdapter runs a until the returned stop is called (or the test ends)
// and waits until it listens.
func runAdapter(t *testing.T, a *Adapter) (inbox, func()) {
	t.Helper()
	in := make(inbox, 64)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- a.Run(ctx, func(ctx context.Context, ev channels.Inbound) {
			select {
			case in <- ev:
			case <-ctx.Done():
			}
		})
	}()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Run = %v", err)
				}
			case <-time.After(testWait):
				t.Errorf("Run did not return within %v", testWait)
			}
		})
	}
	t.Cleanup(stop)
	select {
	case <-a.Ready():
	case err := <-done:
		t.Fatalf("Run returned early: %v", err)
	}
	return in, stop
}

// TestBrowserErrors shows each error in words: a field for the token the
// chat needs (kept in the browser), a text over the limit refused with
// advice and kept in the composer, an agent's error as its message with
// the details folded, and a banner while the gateway cannot be reached
// that clears itself when the page reconnects.
func TestBrowserErrors(t *testing.T) {
	ctx := browser(t)
	state := filepath.Join(t.TempDir(), "web-chat.json")
	opts := Options{Listen: "127.0.0.1:0", Token: "errors-token", StateFile: state}
	a := New(opts)
	in, stop := runAdapter(t, a)
	th := a.st.mustCreate("errors")
	p := page{t: t, ctx: ctx}

	// A wrong token in the address: the page says it is not accepted.
	p.do("open the page with a wrong token", chromedp.Navigate("http://"+a.Addr()+"/?token=old-token#"+th.ID), chromedp.WaitVisible(chromedp.CSS("#auth")))
	p.waitFor("the token refused in words", `document.querySelector("#auth-why").textContent.startsWith("This access token is not accepted here")`)
	eval[chromedp.Void](p, `localStorage.removeItem("acpgw.token"), 0`)

	// No token in the address: the page asks for one.
	p.do("open the page without a token", chromedp.Navigate("http://"+a.Addr()+"/#"+th.ID), chromedp.WaitVisible(chromedp.CSS("#auth")))
	p.shot("token-field")
	p.do("enter the token", chromedp.SendKeys(chromedp.CSS("#token"), "errors-token\r"))
	p.waitFor("the thread open", `document.querySelector("#auth").hidden && document.querySelector("#thread-title").textContent === "errors"`)
	if got := eval[string](p, `localStorage.getItem("acpgw.token")`); got != "errors-token" {
		t.Errorf("kept token = %q, want errors-token", got)
	}

	// A text over the limit stays in the composer, with advice.
	eval[chromedp.Void](p, `document.querySelector("#prompt").value = "x".repeat(70000), 0`)
	p.do("send the long text", chromedp.Click(chromedp.CSS("#send")))
	p.waitFor("the advice", `document.querySelector("#error").textContent.includes("too long for one message — attach it as a file instead (up to 256 KiB)")`)
	if n := eval[float64](p, `document.querySelector("#prompt").value.length`); n != 70000 {
		t.Errorf("the composer holds %v characters after the refusal, want the 70000 kept", n)
	}
	in.empty(t)
	eval[chromedp.Void](p, `document.querySelector("#prompt").value = "", 0`)

	// An agent's error: its message, the raw text folded.
	raw := `{"code":-32603,"message":"Internal error","data":{"details":"model overloaded"}}`
	fail, err := a.Post(ctx, ref(th.ID), channels.Message{Kind: channels.KindNotice, Text: "⚙️ The agent failed: " + raw})
	if err != nil {
		t.Fatal(err)
	}
	p.waitFor("the agent's error in words", `document.querySelector(`+msgSel(fail, " .text p")+`)?.textContent === "⚙️ The agent failed: Internal error: model overloaded"`)
	if !eval[bool](p, `(() => { const d = document.querySelector(`+msgSel(fail, " details")+`); return !d.open && d.querySelector("pre").textContent === `+strconv.Quote(raw)+`; })()`) {
		t.Errorf("the raw error is not folded under the message")
	}
	p.shot("agent-error")

	// The gateway stops while a turn runs: a banner, and the turn's
	// marks go (nobody can say it still runs); it comes back: the
	// banner goes.
	a.ShowSession(ref(th.ID), channels.SessionInfo{Agent: "demo", Model: "Fast", Mode: "Ask"})
	a.ToolDetail(ref(th.ID), "call_9", channels.ToolDetail{Input: `{"command":"ls"}`, Output: "main.go"})
	tool, err := a.Post(ctx, ref(th.ID), channels.Message{Kind: channels.KindTool, Key: "call_9", Text: "🛠️ Run ls · done"})
	if err != nil {
		t.Fatal(err)
	}
	a.Typing(ctx, ref(th.ID))
	p.waitFor("the turn running", `!document.querySelector("#stop").hidden && !document.querySelector("#typing").hidden`)
	addr := a.Addr()
	stop()
	p.waitFor("the unreachable banner", `!document.querySelector("#offline").hidden`)
	if eval[bool](p, `!document.querySelector("#stop").hidden || !document.querySelector("#typing").hidden || document.querySelector("#threads .busy") !== null`) {
		t.Error("the Stop button or the working marks stay while the gateway cannot be reached")
	}
	p.shot("gateway-unreachable")
	if !eval[bool](p, `document.querySelector(`+msgSel(fail, "")+`) !== null`) {
		t.Errorf("the thread's messages went away while the gateway could not be reached")
	}
	opts.Listen = addr
	b := New(opts)
	runAdapter(t, b)
	p.waitFor("the banner gone after reconnecting", `document.querySelector("#offline").hidden && document.querySelector("#error").hidden && document.querySelector("#thread-title").textContent === "errors"`)
	// What the page showed before the restart is still there, the
	// session line and the tool's details too.
	p.do("reload the page", chromedp.Reload())
	p.waitFor("the session line after the restart", `!document.querySelector("#session").hidden && document.querySelector("#session").textContent.includes("Fast")`)
	p.do("open the tool's details", chromedp.Click(chromedp.CSS(msgSelCSS(tool, " .text"))))
	p.waitFor("the tool's details after the restart", `document.querySelector(`+msgSel(tool, " .tool-detail")+`)?.textContent.includes("main.go")`)
	h, err := b.Post(ctx, ref(th.ID), channels.Message{Kind: channels.KindText, Text: "back again"})
	if err != nil {
		t.Fatal(err)
	}
	p.waitFor("live again", `document.querySelector(`+msgSel(h, "")+`) !== null`)
}

// TestBrowserStopHeld: Stop held down (a long press on a phone), or
// clicked with Shift, asks to drop the queued messages too.
func TestBrowserStopHeld(t *testing.T) {
	ctx := browser(t)
	a := New(Options{Listen: "127.0.0.1:0"})
	in := serve(t, a, nil)
	th := a.st.mustCreate("held")
	ref := ref(th.ID)
	p := page{t: t, ctx: ctx}
	p.do("open the thread on a phone", phoneView, chromedp.Navigate(a.URL()+"#"+th.ID), chromedp.WaitVisible(chromedp.CSS("#prompt")))
	p.waitFor("the thread open", `document.querySelector("#thread-title").textContent === "held"`)
	eval[chromedp.Void](p, `localStorage.setItem("acpgw.asked", "1"), 0`)
	a.Typing(ctx, ref)
	p.waitFor("Stop shown", `!document.querySelector("#stop").hidden`)
	if !eval[bool](p, `document.querySelector("#stop").title.includes("hold")`) {
		t.Error("the Stop button does not say it can be held")
	}
	// Pressed and not let go: the press stops everything once held long
	// enough; the click its release makes adds nothing.
	eval[chromedp.Void](p, `document.querySelector("#stop").dispatchEvent(new PointerEvent("pointerdown", {bubbles: true})), 0`)
	if ev := in.next(t); !ev.Stop || !ev.StopAll {
		t.Fatalf("inbound = %+v, want a stop of everything", ev)
	}
	eval[chromedp.Void](p, `(() => { const s = document.querySelector("#stop");
		s.dispatchEvent(new PointerEvent("pointerup", {bubbles: true})); s.disabled = false;
		s.dispatchEvent(new MouseEvent("click", {bubbles: true, detail: 1})); return 0; })()`)
	// Shift+click: the same at once (the click after the hold was eaten:
	// the next event is this one).
	eval[chromedp.Void](p, `document.querySelector("#stop").dispatchEvent(new MouseEvent("click", {bubbles: true, shiftKey: true})), 0`)
	if ev := in.next(t); !ev.Stop || !ev.StopAll {
		t.Fatalf("inbound = %+v, want a stop of everything (Shift+click)", ev)
	}
}

// TestBrowserStop stops a turn on a phone, as the session does it: the
// Stop button says "Stopping…" at once; the session stops typing at once
// but the thread stays busy until its "Stopping…" notice is edited at the
// turn's end; a message sent meanwhile is marked as waiting for the stop.
// A stop word shows the same once the session's notice comes.
func TestBrowserStop(t *testing.T) {
	ctx := browser(t)
	a := New(Options{Listen: "127.0.0.1:0"})
	in := serve(t, a, nil)
	th := a.st.mustCreate("stopping")
	ref := ref(th.ID)
	p := page{t: t, ctx: ctx}
	p.do("open the thread on a phone", phoneView, chromedp.Navigate(a.URL()+"#"+th.ID), chromedp.WaitVisible(chromedp.CSS("#prompt")))
	p.waitFor("the thread open", `document.querySelector("#thread-title").textContent === "stopping"`)
	eval[chromedp.Void](p, `localStorage.setItem("acpgw.asked", "1"), 0`) // the name question is for another test
	a.Typing(ctx, ref)
	p.waitFor("Stop shown", `!document.querySelector("#stop").hidden`)

	const stoppingShown = `(() => { const s = document.querySelector("#stop"), b = document.querySelector("#typing");
		return !s.hidden && s.disabled && s.textContent === "Stopping…" && !b.hidden && b.textContent.includes("Stopping"); })()`
	p.do("click Stop", chromedp.Click(chromedp.CSS("#stop")))
	p.waitFor("Stopping… at once", stoppingShown)
	if ev := in.next(t); !ev.Stop || ev.StopAll {
		t.Fatalf("inbound = %+v, want an explicit stop of the running turn only", ev)
	}
	// What the session does at once: typing stops, a notice says so.
	a.StopTyping(ctx, ref)
	note, err := a.Post(ctx, ref, channels.Message{Kind: channels.KindNotice, Text: "⚙️ Stopping…"})
	if err != nil {
		t.Fatal(err)
	}
	p.waitFor("the notice", `document.querySelector(`+msgSel(note, "")+`) !== null`)
	p.waitFor("typing stopped on the page's side", `document.querySelector("#typing").textContent.includes("Stopping")`)
	if !eval[bool](p, stoppingShown) {
		t.Errorf("the thread looks idle while the turn is still stopping")
	}

	p.do("send meanwhile", chromedp.SendKeys(chromedp.CSS("#prompt"), "next question\r"))
	next := in.next(t)
	if next.Text != "next question" {
		t.Fatalf("inbound = %q, want next question", next.Text)
	}
	p.waitFor("the message marked as waiting", `document.querySelector(`+msgSel(channels.Handle{ID: next.ID}, " .waiting")+`)?.textContent === "waiting for the stop…"`)
	for _, sel := range []string{"#stop", "#send"} {
		if !eval[bool](p, inView(sel)) {
			t.Errorf("%s is not inside the viewport while stopping", sel)
		}
	}
	p.shot("phone-stopping")

	// The turn has ended: the session edits its notice.
	if err := a.Edit(ctx, note, channels.Message{Kind: channels.KindNotice, Text: "⚙️ Stopped by guest."}); err != nil {
		t.Fatal(err)
	}
	p.waitFor("idle again", `document.querySelector("#stop").hidden && document.querySelector("#typing").hidden && document.querySelector(".waiting") === null`)

	// A stop word: the session's notice shows the same.
	a.Typing(ctx, ref)
	p.waitFor("Stop shown", `!document.querySelector("#stop").hidden && !document.querySelector("#stop").disabled`)
	// A stray line break before the word (an Enter that reached the
	// composer after the last send) is no part of the message.
	eval[chromedp.Void](p, `document.querySelector("#prompt").value = "\n", 0`)
	p.do("say stop", chromedp.SendKeys(chromedp.CSS("#prompt"), "stop\r"))
	if ev := in.next(t); ev.Text != "stop" {
		t.Fatalf("inbound = %q, want stop", ev.Text)
	}
	a.StopTyping(ctx, ref)
	a.Post(ctx, ref, channels.Message{Kind: channels.KindNotice, Text: "⚙️ Stopping…"})
	p.waitFor("Stopping… after a stop word", stoppingShown)
}

// TestBrowserCalmMessages checks how a conversation reads: the agent's
// consecutive messages under one header with a time, no "edited" on
// streamed text or tool updates, a short reply in a short bubble, compact
// tool lines, and the person's name asked once, at the first send, and
// kept.
func TestBrowserCalmMessages(t *testing.T) {
	ctx := browser(t)
	a := New(Options{Listen: "127.0.0.1:0"})
	in := serve(t, a, nil)
	th := a.st.mustCreate("calm")
	ref := ref(th.ID)
	p := page{t: t, ctx: ctx}
	p.do("open the thread", desktopView, chromedp.Navigate(a.URL()+"#"+th.ID), chromedp.WaitVisible(chromedp.CSS("#prompt")))
	p.waitFor("the thread open", `document.querySelector("#thread-title").textContent === "calm"`)

	// The name is asked at the first send; the message waits for it.
	p.do("write", chromedp.SendKeys(chromedp.CSS("#prompt"), "list the files\r"))
	p.waitFor("the name asked", `!document.querySelector("#ask").hidden && document.activeElement.id === "ask-name"`)
	in.empty(t)
	p.do("give the name", chromedp.SendKeys(chromedp.CSS("#ask-name"), "Zoe\r"))
	if ev := in.next(t); ev.Text != "list the files" || ev.Author.Name != "Zoe" {
		t.Fatalf("inbound = %q by %q, want list the files by Zoe", ev.Text, ev.Author.Name)
	}
	p.waitFor("the question hidden and the composer empty", `document.querySelector("#ask").hidden && document.querySelector("#prompt").value === ""`)

	short, _ := a.Post(ctx, ref, channels.Message{Kind: channels.KindText, Text: "Sure."})
	tool, _ := a.Post(ctx, ref, channels.Message{Kind: channels.KindTool, Key: "c1", Text: "🛠️ Run ls · running"})
	a.Edit(ctx, tool, channels.Message{Kind: channels.KindTool, Key: "c1", Text: "🛠️ Run ls · done"})
	text, _ := a.Post(ctx, ref, channels.Message{Kind: channels.KindText, Text: "There are"})
	a.Edit(ctx, text, channels.Message{Kind: channels.KindText, Text: "There are three files: " + strings.Repeat("a.go, b.go and c.go. ", 30)})
	p.waitFor("the streamed reply", `document.querySelector(`+msgSel(text, " .text")+`)?.textContent.includes("three files")`)
	a.st.addMessage(th.ID, message{Role: roleUser, Author: "bob", Kind: "text", Text: "thanks"})
	after, _ := a.Post(ctx, ref, channels.Message{Kind: channels.KindText, Text: "You're welcome."})
	p.waitFor("the last reply", `document.querySelector(`+msgSel(after, "")+`) !== null`)

	headers := eval[[]string](p, `[...document.querySelectorAll(".msg > .meta")].filter(m => getComputedStyle(m).display !== "none").map(m => m.textContent)`)
	who := make([]string, len(headers))
	for i, h := range headers {
		who[i] = strings.Fields(h)[0]
		if !timeRe.MatchString(h) {
			t.Errorf("header %q has no time", h)
		}
	}
	if fmt.Sprint(who) != "[Zoe Agent bob Agent]" {
		t.Errorf("headers = %q, want one per run of messages: Zoe, Agent, bob, Agent", headers)
	}
	if txt := eval[string](p, `document.querySelector("#messages").innerText`); strings.Contains(txt, "edited") {
		t.Errorf("the thread says \"edited\":\n%s", txt)
	}
	widths := eval[[]float64](p, `[document.querySelector(`+msgSel(short, " .text")+`).getBoundingClientRect().width,
		document.querySelector("#messages").clientWidth, document.querySelector(`+msgSel(tool, "")+`).getBoundingClientRect().height]`)
	if widths[0] > 200 || widths[0] > widths[1]/4 {
		t.Errorf("the short reply is %vpx wide in a %vpx list, want a short bubble", widths[0], widths[1])
	}
	if widths[2] > 32 {
		t.Errorf("the tool line is %vpx high, want a compact line", widths[2])
	}
	p.shot("desktop-conversation")
	p.do("the same on a phone", phoneView)
	p.waitFor("the list at its end and the thread list away", atEnd+` && getComputedStyle(document.querySelector("#sidebar")).visibility === "hidden"`)
	if !eval[bool](p, noSideScroll) {
		t.Errorf("the conversation overflows sideways on a phone")
	}
	p.shot("phone-conversation")

	// The name is kept: no question at the next send, nor after a reload.
	p.do("reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#prompt")))
	p.waitFor("the thread open", `document.querySelector("#thread-title").textContent === "calm"`)
	p.do("write again", chromedp.SendKeys(chromedp.CSS("#prompt"), "and now?\r"))
	if ev := in.next(t); ev.Text != "and now?" || ev.Author.Name != "Zoe" {
		t.Fatalf("inbound = %q by %q, want and now? by Zoe", ev.Text, ev.Author.Name)
	}
	if !eval[bool](p, `document.querySelector("#ask").hidden`) {
		t.Errorf("the name was asked again")
	}
}

// timeRe matches a clock time in a message header.
var timeRe = regexp.MustCompile(`\d{1,2}:\d{2}`)

// TestBrowserPlan shows the plan once: its message, pinned at the top of
// the list while its turn runs (also when the list has scrolled far
// below it), open, folded to a one-line summary when every entry is
// done, and left in the history when the turn ends.
func TestBrowserPlan(t *testing.T) {
	ctx := browser(t)
	a := New(Options{Listen: "127.0.0.1:0"})
	serve(t, a, nil)
	th := a.st.mustCreate("planned")
	ref := ref(th.ID)
	p := page{t: t, ctx: ctx}
	p.do("open the thread on a phone", phoneView, chromedp.Navigate(a.URL()+"#"+th.ID), chromedp.WaitVisible(chromedp.CSS("#prompt")))
	p.waitFor("the thread open", `document.querySelector("#thread-title").textContent === "planned"`)

	a.st.addMessage(th.ID, message{Role: roleUser, Author: "ann", Kind: "text", Text: "fix the build"})
	a.Typing(ctx, ref)
	plan, err := a.Post(ctx, ref, channels.Message{Kind: channels.KindPlan, Key: "plan", Text: "📋 Plan\n✅ read the error\n🔄 fix the import\n⬜ run the tests"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		a.Post(ctx, ref, channels.Message{Kind: channels.KindText, Text: fmt.Sprintf("step %d: %s", i, strings.Repeat("working ", 15))})
	}
	last, _ := a.Post(ctx, ref, channels.Message{Kind: channels.KindText, Text: "almost there"})
	p.waitFor("the last message", `document.querySelector(`+msgSel(last, "")+`) !== null`)
	p.waitFor("the list at its end", atEnd)
	pinned := `(() => { const n = document.querySelector(` + msgSel(plan, "") + `), m = document.querySelector("#messages").getBoundingClientRect();
		const r = n.getBoundingClientRect(); return n.classList.contains("pinned") && r.top >= m.top - 1 && r.top < m.top + 40 && r.height > 0; })()`
	p.waitFor("the plan pinned at the top while the list shows its end", pinned)
	if got := eval[[]any](p, `(() => { const d = document.querySelector(`+msgSel(plan, " details")+`);
		return [d.open, d.querySelector("summary").textContent,
			document.body.innerText.split("fix the import").length - 1]; })()`); fmt.Sprint(got) != "[true Plan · 1 of 3 done 1]" {
		t.Errorf("plan [open, summary, copies] = %v, want [true Plan · 1 of 3 done 1]", got)
	}
	if !eval[bool](p, noSideScroll) {
		t.Errorf("the page overflows sideways with a pinned plan")
	}
	p.shot("phone-plan")

	a.Edit(ctx, plan, channels.Message{Kind: channels.KindPlan, Key: "plan", Text: "📋 Plan\n✅ read the error\n✅ fix the import\n✅ run the tests"})
	p.waitFor("the plan folded when done", `(() => { const d = document.querySelector(`+msgSel(plan, " details")+`); return !d.open && d.querySelector("summary").textContent === "Plan · all 3 done"; })()`)
	a.StopTyping(ctx, ref)
	p.waitFor("the plan unpinned, in the history", `!document.querySelector(`+msgSel(plan, "")+`).classList.contains("pinned")`)
}

// contrastFailures is a JavaScript expression: the visible, enabled
// elements whose own text has a contrast ratio under 4.5:1 against the
// background behind them, from computed styles.
const contrastFailures = `(() => {
	const rgb = s => { const m = s.match(/[\d.]+/g).map(Number); return [m[0], m[1], m[2], m.length > 3 ? m[3] : 1]; };
	const lum = c => { const f = v => (v /= 255) <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]); };
	const over = (top, under) => [0, 1, 2].map(i => top[i] * top[3] + under[i] * (1 - top[3])).concat(1);
	const behind = e => { const layers = []; for (; e; e = e.parentElement) { const b = rgb(getComputedStyle(e).backgroundColor); if (b[3] > 0) { layers.push(b); if (b[3] === 1) break; } }
		let c = [255, 255, 255, 1]; for (let i = layers.length - 1; i >= 0; i--) c = over(layers[i], c); return c; };
	const out = [];
	for (const e of document.body.querySelectorAll("*")) {
		if (!e.getClientRects().length || e.closest("[hidden], :disabled") || getComputedStyle(e).visibility !== "visible") continue;
		if (![...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim())) continue;
		const bg = behind(e), fg = over(rgb(getComputedStyle(e).color), bg);
		const a = lum(fg), b = lum(bg), ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
		if (ratio < 4.5) out.push(e.tagName + (e.id ? "#" + e.id : "") + "." + e.className + " " + ratio.toFixed(2) + " " + JSON.stringify(e.textContent.trim().slice(0, 30)));
	}
	return out; })()`

// colorScheme makes the page see prefers-color-scheme: scheme.
func colorScheme(scheme string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		return t.Call(ctx, "Emulation.setEmulatedMedia", map[string]any{"features": []map[string]string{{"name": "prefers-color-scheme", "value": scheme}}}, nil)
	})
}

// TestBrowserKeyboardAndContrast uses the page without a mouse (Tab
// reaches the composer's buttons, Enter sends, Escape in an empty
// composer stops the running turn), checks that new messages are
// announced (a polite live region), and that every text has a contrast
// of at least 4.5:1 in the light and the dark theme.
func TestBrowserKeyboardAndContrast(t *testing.T) {
	ctx := browser(t)
	a := New(Options{Listen: "127.0.0.1:0"})
	in := serve(t, a, nil)
	th := a.st.mustCreate("keys")
	a.st.mustCreate("another thread")
	ref := ref(th.ID)
	p := page{t: t, ctx: ctx}
	p.do("open the thread", desktopView, chromedp.Navigate(a.URL()+"#"+th.ID), chromedp.WaitVisible(chromedp.CSS("#prompt")))
	p.waitFor("the thread open", `document.querySelector("#thread-title").textContent === "keys"`)
	eval[chromedp.Void](p, `localStorage.setItem("acpgw.asked", "1"), 0`) // the name question is for another test

	p.do("write and press Enter", chromedp.Focus(chromedp.CSS("#prompt")), chromedp.KeyEvent("hello"), chromedp.KeyEvent("\r"))
	if ev := in.next(t); ev.Text != "hello" {
		t.Fatalf("inbound = %q, want hello", ev.Text)
	}
	a.Typing(ctx, ref)
	a.Post(ctx, ref, channels.Message{Kind: channels.KindText, Text: "A [link](https://example.com) and `code`."})
	tool, _ := a.Post(ctx, ref, channels.Message{Kind: channels.KindTool, Text: "🛠️ Run ls · done"})
	a.Post(ctx, ref, channels.Message{Kind: channels.KindStatus, Text: "status line"})
	a.Post(ctx, ref, channels.Message{Kind: channels.KindThought, Text: "a thought"})
	a.Post(ctx, ref, channels.Message{Kind: channels.KindNotice, Text: "⚙️ a notice with a [link](https://example.com)"})
	a.Prompt(ctx, ref, channels.Choice{Text: "Allow `ls`?", Options: []channels.Option{{ID: "allow", Label: "Allow", Style: "primary"}, {ID: "reject", Label: "Reject", Style: "danger"}}})
	p.waitFor("the messages and Stop", `document.querySelector(`+msgSel(tool, "")+`) !== null && !document.querySelector("#stop").hidden`)
	if live := eval[string](p, `(() => { const m = document.querySelector("#messages"); return m.getAttribute("role") + " " + m.getAttribute("aria-live"); })()`); live != "log polite" {
		t.Errorf("the message list is %q, want a polite live log", live)
	}

	// Tab from the composer reaches its buttons, in order.
	var order []string
	p.do("focus the composer", chromedp.Focus(chromedp.CSS("#prompt")))
	for range 3 {
		p.do("press Tab", chromedp.KeyEvent("\t"))
		order = append(order, eval[string](p, `document.activeElement.id`))
	}
	if fmt.Sprint(order) != "[attach stop send]" {
		t.Errorf("Tab from the composer goes to %v, want [attach stop send]", order)
	}

	// The banners and the name question are checked too.
	eval[chromedp.Void](p, `["#offline", "#auth", "#ask", "#jump"].forEach(s => document.querySelector(s).hidden = false), 0`)
	for _, scheme := range []string{"light", "dark"} {
		p.do(scheme+" theme", colorScheme(scheme))
		p.waitFor(scheme+" theme applied", fmt.Sprintf(`matchMedia("(prefers-color-scheme: %s)").matches`, scheme))
		if bad := eval[[]string](p, contrastFailures); len(bad) > 0 {
			t.Errorf("%s theme: texts under 4.5:1:\n%s", scheme, strings.Join(bad, "\n"))
		}
		p.shot("desktop-" + scheme)
	}

	// Escape stops only with an empty composer.
	p.do("Escape with text", chromedp.Focus(chromedp.CSS("#prompt")), chromedp.KeyEvent("draft"), chromedp.KeyEvent("\u001b"))
	in.empty(t)
	eval[chromedp.Void](p, `document.querySelector("#prompt").value = "", 0`)
	p.do("Escape in the empty composer", chromedp.KeyEvent("\u001b"))
	if ev := in.next(t); !ev.Stop || ev.Thread != ref {
		t.Fatalf("inbound = %+v, want an explicit stop in %v", ev, ref)
	}
	p.waitFor("Stopping… shown", `document.querySelector("#stop").textContent === "Stopping…"`)
}
