package web

import (
	"strings"
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/chromedp/chromedp"
)

// TestBrowserThreads uses the thread list: threads sorted by their last
// activity, titled by the agent's session title (plain text) or else by
// the first line of the first message; New thread creates nothing until
// the first message; back, forward and #thread links switch threads; a
// thread is renamed in place and deleted after a question.
func TestBrowserThreads(t *testing.T) {
	ctx := browser(t)
	a := New(Options{Listen: "127.0.0.1:0"})
	in := serve(t, a, nil)
	p := page{t: t, ctx: ctx}
	older := a.st.mustCreate("older")
	newer := a.st.mustCreate("newer")
	p.do("open the page", desktopView, chromedp.Navigate(a.URL()+"#"+newer.ID), chromedp.WaitVisible(chromedp.CSS("#prompt")))
	eval[chromedp.Void](p, `localStorage.setItem("acpgw.author", "Ann"), localStorage.setItem("acpgw.asked", "1"), document.querySelector("#author").value = "Ann", 0`)
	list := `[...document.querySelectorAll("#threads button")].map(b => b.textContent).join("|")`
	p.waitFor("newest first", list+` === "newer|older"`)

	// Activity in the older thread moves it up; the agent's title names it.
	a.Post(ctx, ref(older.ID), channels.Message{Kind: channels.KindText, Text: "still here"})
	p.waitFor("the active thread first", list+` === "older|newer"`)
	if err := a.SetTitle(ctx, ref(older.ID), "Fix the **login** bug\nand more"); err != nil {
		t.Fatal(err)
	}
	p.waitFor("the agent's title", list+` === "Fix the login bug|newer"`)
	list = `[...document.querySelectorAll("#threads button")].map(b => b.firstChild.textContent).join("|")`

	// Each thread shows its agent once it started.
	a.ShowAgent(ref(older.ID), "claude")
	p.waitFor("the agent in the list and the header", `document.querySelector('#threads button[data-thread="`+older.ID+`"] .agent')?.textContent === "claude" && document.querySelector("#thread-agent").hidden`)
	p.do("open the thread", chromedp.Click(chromedp.CSS(`#threads button[data-thread="`+older.ID+`"]`)))
	p.waitFor("its agent in the header", `document.querySelector("#thread-agent").textContent === "claude" && !document.querySelector("#thread-agent").hidden`)
	p.do("back", chromedp.NavigateBack())
	p.waitFor("the first thread again", `document.querySelector("#thread-title").textContent === "newer"`)

	// New thread creates nothing until the first message.
	p.do("new thread", chromedp.Click(chromedp.CSS("#new-thread")))
	p.waitFor("an empty new thread", `document.querySelector("#thread-title").textContent === "New thread" && location.hash === "" && document.activeElement.id === "prompt"`)
	if n := len(a.st.threadList()); n != 2 {
		t.Fatalf("%d threads after New thread, want still 2", n)
	}
	eval[chromedp.Void](p, `document.querySelector("#prompt").value = "## Deploy the `+"`app`"+`\nto staging", 0`)
	p.do("send the first message", chromedp.SendKeys(chromedp.CSS("#prompt"), "\r"))
	first := in.next(t)
	p.waitFor("the new thread titled by its first line", `document.querySelector("#thread-title").textContent === "Deploy the app" && location.hash === "#`+first.Thread.Thread+`"`)
	if got := a.st.threadList(); len(got) != 3 || got[0].ID != first.Thread.Thread || got[0].Title != "Deploy the app" {
		t.Fatalf("threads = %+v, want the new one first, titled Deploy the app", got)
	}
	p.shot("desktop-threads")

	// Back and forward, and a #thread link.
	title := `document.querySelector("#thread-title").textContent`
	p.do("back", chromedp.NavigateBack())
	p.waitFor("the new-thread page again", title+` === "New thread"`)
	p.do("back", chromedp.NavigateBack())
	p.waitFor("the thread opened first", title+` === "newer"`)
	p.do("forward", chromedp.NavigateForward())
	p.do("forward", chromedp.NavigateForward())
	p.waitFor("the new thread again", title+` === "Deploy the app"`)
	eval[chromedp.Void](p, `(() => { const l = document.createElement("a"); l.href = "#`+older.ID+`"; l.id = "link"; l.textContent = "older"; document.body.append(l); })(), 0`)
	p.do("follow a #thread link", chromedp.Click(chromedp.CSS("#link")))
	p.waitFor("the linked thread", title+` === "Fix the login bug" && document.querySelector('#threads button[aria-current="true"]').firstChild.textContent === "Fix the login bug"`)
	eval[chromedp.Void](p, `document.querySelector("#link").remove(), 0`)

	// Rename in place.
	p.do("rename", chromedp.Click(chromedp.CSS("#rename-btn")))
	p.waitFor("the title field", `document.activeElement.id === "rename-input"`)
	p.do("type the name", chromedp.SendKeys(chromedp.CSS("#rename-input"), "Login fixed\r"))
	p.waitFor("the renamed thread", title+` === "Login fixed" && `+list+`.startsWith("Deploy the app|Login fixed")`)
	if got := threadTitle(a, older.ID); got != "Login fixed" {
		t.Errorf("the gateway's title = %q, want Login fixed", got)
	}

	// Delete asks first.
	p.do("delete", chromedp.Click(chromedp.CSS("#delete-btn")))
	p.waitFor("the question", `!document.querySelector("#confirm").hidden && document.activeElement.id === "confirm-no"`)
	p.shot("desktop-delete-question")
	p.do("cancel with Escape", chromedp.KeyEvent("\x1b"))
	p.waitFor("the question gone", `document.querySelector("#confirm").hidden && document.activeElement.id === "delete-btn"`)
	if !a.st.hasThread(older.ID) {
		t.Fatal("the thread was deleted without a yes")
	}
	p.do("delete again", chromedp.Click(chromedp.CSS("#delete-btn")), chromedp.Click(chromedp.CSS("#confirm-yes")))
	p.waitFor("the thread gone from the list and another shown", `!`+list+`.includes("Login fixed") && `+title+` === "Deploy the app"`)
	if a.st.hasThread(older.ID) {
		t.Error("the thread is still in the gateway after Delete")
	}

	p.do("on a phone", phoneView, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#prompt")))
	p.do("open the menu", chromedp.Click(chromedp.CSS("#menu")))
	p.waitFor("the thread list shown", `document.querySelector("#sidebar").getBoundingClientRect().left >= 0 && getComputedStyle(document.querySelector("#sidebar")).visibility === "visible"`)
	if !eval[bool](p, noSideScroll) || !eval[bool](p, inView("#delete-btn")) {
		t.Errorf("the header's buttons do not fit on a phone")
	}
	p.shot("phone-threads")
}

func threadTitle(a *Adapter, id string) string {
	for _, th := range a.st.threadList() {
		if th.ID == id {
			return th.Title
		}
	}
	return strings.Repeat("?", 3)
}
