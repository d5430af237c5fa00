package web

import (
	"fmt"
	"strings"
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/chromedp/chromedp"
)

// TestBrowserListDeltas: the page applies the thread-list changes it is
// sent one thread at a time, and its list stays the server's, in order;
// a thread that left memory for disk opens with its messages.
func TestBrowserListDeltas(t *testing.T) {
	ctx := browser(t)
	a := New(Options{Listen: "127.0.0.1:0", StateFile: statePath(t), MaxThreadsInMemory: 2})
	serve(t, a, nil)
	var ids []string
	for i := range 6 {
		id := a.st.mustCreate(fmt.Sprint("thread ", i)).ID
		ids = append(ids, id)
		if _, err := a.Post(ctx, ref(id), channels.Message{Kind: channels.KindText, Text: fmt.Sprint("reply in thread ", i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Flush(); err != nil {
		t.Fatal(err)
	}
	a.st.mu.Lock()
	cold := a.st.threads[ids[0]].onDisk
	a.st.mu.Unlock()
	if !cold {
		t.Fatal("the oldest thread is still in memory")
	}
	p := page{t: t, ctx: ctx}
	p.do("open the oldest thread", desktopView, chromedp.Navigate(a.URL()+"#"+ids[0]), chromedp.WaitVisible(chromedp.CSS("#prompt")))
	p.waitFor("its messages, read back from disk", `document.querySelector("#messages").textContent.includes("reply in thread 0")`)

	shown := `[...document.querySelectorAll("#threads button")].map(b => b.dataset.thread).join("|")`
	want := func() string {
		var out []string
		for _, th := range a.st.threadList() {
			out = append(out, th.ID)
		}
		return strings.Join(out, "|")
	}
	p.waitFor("the list in the server's order", shown+` === "`+want()+`"`)
	// Activity in several threads, a new one, a title, a deletion.
	for _, i := range []int{2, 4, 1, 2} {
		if _, err := a.Post(ctx, ref(ids[i]), channels.Message{Kind: channels.KindText, Text: "more"}); err != nil {
			t.Fatal(err)
		}
	}
	a.Typing(ctx, ref(ids[3]))
	a.st.mustCreate("a late one")
	if err := a.SetTitle(ctx, ref(ids[5]), "renamed"); err != nil {
		t.Fatal(err)
	}
	if err := a.st.deleteThread(ids[4]); err != nil {
		t.Fatal(err)
	}
	p.waitFor("the list after the changes", shown+` === "`+want()+`"`)
	p.waitFor("the title and the busy thread", `document.querySelector('#threads button[data-thread="`+ids[5]+`"]').textContent === "renamed" && document.querySelector('#threads button[data-thread="`+ids[3]+`"]').classList.contains("busy")`)
}
