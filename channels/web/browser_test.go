package web

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/internal/browsertest"
	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"
)

// chromiumPaths are where Debian's chromium package (and common
// alternatives) put the browser.
var chromiumPaths = []string{"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"}

// chromium returns the path of a headless-capable Chromium. Without one the
// test is skipped, except in CI (CI set), where it fails.
func chromium(t *testing.T) string {
	t.Helper()
	for _, p := range chromiumPaths {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	reason := fmt.Sprintf("no Chromium at %v: install Debian's chromium package (apt-get install chromium) to run the browser test", chromiumPaths)
	if os.Getenv("CI") != "" {
		t.Fatal(reason)
	}
	t.Skip(reason)
	return ""
}

// browser starts a headless Chromium for the test and returns a chromedp
// context for one tab. The browser stops when the test ends.
func browser(t *testing.T) context.Context {
	t.Helper()
	return browsertest.Start(t, chromium(t), 1200, 860)
}

// page drives the chat page in the browser, failing the test on errors.
type page struct {
	t   *testing.T
	ctx context.Context
}

func (p page) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, testWait)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		p.t.Fatalf("%s: %v", what, err)
	}
}

// waitFor waits until the JavaScript expression is truthy.
func (p page) waitFor(what, expr string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, testWait)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(testWait))); err != nil {
		text, _ := chromedp.Run(p.ctx, chromedp.Evaluate[string](`document.querySelector("#messages").innerText`))
		p.t.Fatalf("waiting for %s (%s): %v\nmessages on the page:\n%s", what, expr, err, text)
	}
}

// eval evaluates a JavaScript expression.
func eval[T any](p page, expr string) T {
	p.t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		p.t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// msgSel is the CSS selector of message id, quoted for JavaScript.
func msgSel(h channels.Handle, rest string) string {
	return strconv.Quote(`.msg[data-id="` + string(h.ID) + `"]` + rest)
}

// TestBrowser drives the page in headless Chromium against a scripted
// handler: streamed text, a tool message changing in place, markdown,
// a permission prompt answered by a click, and a slow turn stopped with the
// Stop button.
func TestBrowser(t *testing.T) {
	ctx := browser(t)
	a := New(Options{Listen: "127.0.0.1:0", Token: "browser-token"})
	in := serve(t, a, func(ctx context.Context, ev channels.Inbound) {
		if ev.Choice != nil {
			ev.Reply(ctx, "Answer noted.") // comes back in the click's response
		}
	})
	p := page{t: t, ctx: ctx}

	p.do("open the page", chromedp.Navigate(a.URL()), chromedp.WaitVisible(chromedp.CSS("#new-thread")))
	p.do("set the author", chromedp.SendKeys(chromedp.CSS("#author"), "tester"), chromedp.Blur(chromedp.CSS("#author")))
	p.do("create a thread", chromedp.Click(chromedp.CSS("#new-thread")))
	p.waitFor("an empty new thread (created by its first message)", `document.querySelector("#thread-title").textContent === "New thread"`)
	p.do("send hello with Enter", chromedp.SendKeys(chromedp.CSS("#composer textarea"), "hello\r"))

	hello := in.next(t)
	// The single token's holder is one person, web:owner; the name is a label.
	if hello.Text != "hello" || hello.Author.Name != "tester" || hello.Author.ID != "web:owner" {
		t.Fatalf("first inbound = %+v, want hello from tester (web:owner)", hello)
	}
	th := hello.Thread
	p.waitFor("the user's message", `[...document.querySelectorAll('.msg[data-role="user"] .text')].some(e => e.textContent === "hello")`)
	p.waitFor("the composer cleared", `document.querySelector("#composer textarea").value === ""`)
	if got := eval[string](p, `localStorage.getItem("acpgw.author")`); got != "tester" {
		t.Errorf("remembered author = %q, want tester", got)
	}

	// Streamed text: a post, then an edit of the same node.
	h, err := a.Post(ctx, th, channels.Message{Kind: channels.KindText, Text: "Hel"})
	if err != nil {
		t.Fatal(err)
	}
	p.waitFor("streamed text", `document.querySelector(`+msgSel(h, " .text")+`)?.textContent === "Hel"`)
	eval[chromedp.Void](p, `window.probe = document.querySelector(`+msgSel(h, "")+`), 0`)
	if err := a.Edit(ctx, h, channels.Message{Kind: channels.KindText, Text: "Hello there"}); err != nil {
		t.Fatal(err)
	}
	p.waitFor("the edited text", `document.querySelector(`+msgSel(h, " .text")+`)?.textContent === "Hello there"`)
	if !eval[bool](p, `document.querySelector(`+msgSel(h, "")+`) === window.probe`) {
		t.Errorf("the edit replaced the message's DOM node, want it changed in place")
	}

	// A tool message changes in place.
	tool, err := a.Post(ctx, th, channels.Message{Kind: channels.KindTool, Key: "call_1", Text: "🛠️ Run ls · running"})
	if err != nil {
		t.Fatal(err)
	}
	p.waitFor("the tool message", `document.querySelector(`+msgSel(tool, `[data-kind="tool"][data-role="assistant"] .text`)+`)?.textContent === "🛠️ Run ls · running"`)
	eval[chromedp.Void](p, `window.probe = document.querySelector(`+msgSel(tool, "")+`), 0`)
	if err := a.Edit(ctx, tool, channels.Message{Kind: channels.KindTool, Key: "call_1", Text: "🛠️ Run ls · done"}); err != nil {
		t.Fatal(err)
	}
	p.waitFor("the finished tool message", `document.querySelector(`+msgSel(tool, " .text")+`)?.textContent === "🛠️ Run ls · done"`)
	if !eval[bool](p, `document.querySelector(`+msgSel(tool, "")+`) === window.probe && document.querySelectorAll(`+msgSel(tool, "")+`).length === 1`) {
		t.Errorf("the tool message was not updated in place")
	}

	// Markdown is rendered, HTML in it is shown as text.
	md, err := a.Post(ctx, th, channels.Message{Kind: channels.KindText, Text: "**bold** and `code` <img src=x onerror=alert(1)>\n\n- one\n- two\n\n```go\nfmt.Println(1)\n```"})
	if err != nil {
		t.Fatal(err)
	}
	p.waitFor("markdown", `document.querySelector(`+msgSel(md, " .text strong")+`)?.textContent === "bold"`)
	got := eval[[]any](p, `(() => { const e = document.querySelector(`+msgSel(md, " .text")+`); return [
		e.querySelector("code").textContent, e.querySelectorAll("li").length, e.querySelector("pre code").textContent,
		e.querySelector("img") === null, e.textContent.includes("<img src=x onerror=alert(1)>")]; })()`)
	if want := []any{"code", float64(2), "fmt.Println(1)", true, true}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("rendered markdown = %v, want %v", got, want)
	}

	// A thought is a collapsed card; the plan is pinned.
	thought, _ := a.Post(ctx, th, channels.Message{Kind: channels.KindThought, Text: "thinking about ls"})
	p.waitFor("a collapsed thought", `document.querySelector(`+msgSel(thought, " details:not([open]) .text")+`)?.textContent === "thinking about ls"`)
	a.Post(ctx, th, channels.Message{Kind: channels.KindPlan, Key: "plan", Text: "1. list files"})
	p.waitFor("the pinned plan", `document.querySelector('.msg.pinned[data-kind="plan"] .text')?.textContent.includes("list files")`)

	// A permission prompt answered by a click.
	prompt, err := a.Prompt(ctx, th, channels.Choice{Text: "Allow `ls`?", Options: []channels.Option{
		{ID: "allow", Label: "Allow", Style: "primary"}, {ID: "reject", Label: "Reject", Style: "danger"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	allow := chromedp.CSS(`.msg[data-id="` + string(prompt.ID) + `"] button[data-option="allow"]`)
	p.do("click Allow", chromedp.WaitVisible(allow), chromedp.Click(allow))
	click := in.next(t)
	if click.Choice == nil || click.Choice.OptionID != "allow" || click.Choice.Prompt != prompt || click.Author.Name != "tester" {
		t.Fatalf("inbound after the click = %+v (choice %+v), want Allow on %v by tester", click, click.Choice, prompt)
	}
	p.waitFor("the private reply", `document.querySelector(`+msgSel(prompt, " .reply")+`)?.textContent.includes("Answer noted.")`)
	if !eval[bool](p, `[...document.querySelectorAll(`+msgSel(prompt, " button[data-option]")+`)].every(b => b.disabled)`) {
		t.Errorf("the prompt's buttons are enabled after the answer")
	}
	if err := a.Edit(ctx, prompt, channels.Message{Kind: channels.KindPermission, Text: "✅ Allowed by tester"}); err != nil {
		t.Fatal(err)
	}
	p.waitFor("the resolved prompt", `document.querySelector(`+msgSel(prompt, " .text")+`)?.textContent === "✅ Allowed by tester" && document.querySelector(`+msgSel(prompt, " button")+`) === null`)

	// A slow turn stopped with the Stop button.
	p.do("send slow", chromedp.SendKeys(chromedp.CSS("#composer textarea"), "slow"), chromedp.Click(chromedp.CSS("#send")))
	if slow := in.next(t); slow.Text != "slow" {
		t.Fatalf("inbound = %q, want slow", slow.Text)
	}
	if err := a.Typing(ctx, th); err != nil {
		t.Fatal(err)
	}
	p.do("typing and Stop shown", chromedp.WaitVisible(chromedp.CSS("#typing")), chromedp.WaitVisible(chromedp.CSS("#stop")))
	if path := os.Getenv("WEB_SCREENSHOT"); path != "" {
		shot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		if err == nil {
			err = os.WriteFile(path, shot, 0o644)
		}
		if err != nil {
			t.Errorf("screenshot: %v", err)
		}
	}
	p.do("click Stop", chromedp.Click(chromedp.CSS("#stop")))
	stop := in.next(t)
	if !stop.Stop || stop.Intent() != channels.IntentStop || stop.Thread != th || stop.Author.Name != "tester" {
		t.Fatalf("inbound after Stop = %+v, want an explicit stop in %v by tester", stop, th)
	}
	// As the session does: typing stops at once, a "Stopping…" notice is
	// edited when the turn has ended (TestBrowserStop has the details).
	if err := a.StopTyping(ctx, th); err != nil {
		t.Fatal(err)
	}
	note, err := a.Post(ctx, th, channels.Message{Kind: channels.KindNotice, Text: "⚙️ Stopping…"})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Edit(ctx, note, channels.Message{Kind: channels.KindNotice, Text: "⚙️ Stopped by tester."}); err != nil {
		t.Fatal(err)
	}
	p.do("typing and Stop gone", chromedp.WaitNotVisible(chromedp.CSS("#typing")), chromedp.WaitNotVisible(chromedp.CSS("#stop")))
	in.empty(t)
}

// TestBrowserFirstMessage checks that writing on an empty page opens a
// thread, that another tab's new thread appears in the list, and that an
// author left empty (when asked at the first send) is "guest".
func TestBrowserFirstMessage(t *testing.T) {
	ctx := browser(t)
	a := New(Options{Listen: "127.0.0.1:0"})
	in := serve(t, a, nil)
	p := page{t: t, ctx: ctx}
	p.do("open the page", chromedp.Navigate(a.URL()), chromedp.WaitVisible(chromedp.CSS("#composer textarea")))
	p.waitFor("the empty state", `!document.querySelector("#empty").hidden && document.querySelectorAll("#threads li").length === 0`)

	other := a.st.mustCreate("from another tab")
	p.waitFor("the other thread listed", `[...document.querySelectorAll("#threads button")].some(b => b.textContent === "from another tab")`)

	p.do("write", chromedp.SendKeys(chromedp.CSS("#composer textarea"), "hi there\r"))
	p.do("leave the name empty", chromedp.WaitVisible(chromedp.CSS("#ask-name")), chromedp.Click(chromedp.CSS("#ask-ok")))
	ev := in.next(t)
	if ev.Text != "hi there" || ev.Author.Name != "guest" || ev.Author.ID != "web:local" || ev.Thread.Thread == other.ID {
		t.Fatalf("inbound = %+v, want hi there from guest (web:local) in a new thread", ev)
	}
	p.waitFor("the new thread selected", `document.querySelector('#threads button[aria-current="true"]')?.dataset.thread === `+strconv.Quote(ev.Thread.Thread))
	p.waitFor("the message shown", `document.querySelector('.msg[data-role="user"] .text')?.textContent === "hi there"`)
}

// TestBrowserNamedToken opens the page with a named token: it shows the
// token's name instead of asking, and what the person writes and clicks
// arrives as that person, whatever the name field held before.
func TestBrowserNamedToken(t *testing.T) {
	ctx := browser(t)
	a := New(Options{Listen: "127.0.0.1:0", Users: map[string]string{"ann": "ann-browser-token", "bob": "bob-browser-token"}})
	in := serve(t, a, nil)
	p := page{t: t, ctx: ctx}
	p.do("open the page", chromedp.Navigate(a.URL()), chromedp.WaitVisible(chromedp.CSS("#new-thread")))
	p.do("claim to be the boss", chromedp.SendKeys(chromedp.CSS("#author"), "boss"), chromedp.Blur(chromedp.CSS("#author")))
	p.do("open it with ann's token", chromedp.Navigate(a.URL()+"?token=ann-browser-token"), chromedp.WaitVisible(chromedp.CSS("#composer textarea")))
	p.waitFor("ann's name shown, fixed", `document.querySelector("#author").value === "ann" && document.querySelector("#author").readOnly`)

	p.do("write", chromedp.SendKeys(chromedp.CSS("#composer textarea"), "hi from ann\r"))
	ev := in.next(t)
	if ev.Text != "hi from ann" || !cmp.Equal(ev.Author, channels.Author{ID: "web:ann", Name: "ann"}) {
		t.Fatalf("inbound = %+v, want hi from ann as web:ann", ev)
	}
	p.waitFor("the message shown as ann's", `[...document.querySelectorAll('.msg[data-role="user"]')].some(e => e.textContent.includes("ann") && e.textContent.includes("hi from ann"))`)

	h, err := a.Prompt(ctx, ev.Thread, channels.Choice{Text: "Allow `ls`?", Options: []channels.Option{{ID: "allow", Label: "Allow"}}})
	if err != nil {
		t.Fatal(err)
	}
	p.do("click Allow", chromedp.Click(chromedp.CSS(`.msg[data-id="`+string(h.ID)+`"] button[data-option="allow"]`)))
	click := in.next(t)
	if click.Choice == nil || !cmp.Equal(click.Author, channels.Author{ID: "web:ann", Name: "ann"}) {
		t.Fatalf("click = %+v, want a choice by web:ann", click)
	}
}
