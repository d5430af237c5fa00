package main

import (
	"strings"
	"testing"

	"github.com/acpgw/gateway/cluster/natsnode"
	"github.com/chromedp/chromedp"
)

// One tab on each of two edges serving the web chat, a worker answering:
// the thread begun in one tab shows in the other's list and opens there
// with the answer; what one tab asks streams into both, and both show the
// same messages.
func TestBrowserOnTwoEdges(t *testing.T) {
	ta, tb := newTab(t), newTab(t)
	n, err := natsnode.Start(natsnode.Options{StoreDir: t.TempDir(), Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Shutdown)
	url := n.ClientURL()
	pageOf := func(r *role) string {
		line := r.stdout.wait(t, "the web chat's address", func(l string) bool { return strings.Contains(l, "web chat at ") })
		return strings.TrimSpace(line[strings.Index(line, "http"):])
	}
	pageA := pageOf(startRole(t, "edge-a", clusterConfig(t, url, "edge-a"), "edge", "--id", "a"))
	pageB := pageOf(startRole(t, "edge-b", clusterConfig(t, url, "edge-b"), "edge", "--id", "b"))
	w := startRole(t, "worker", clusterConfig(t, url, "w1"), "worker", "--id", "w1")
	w.stdout.wait(t, "the worker running", func(l string) bool { return strings.Contains(l, "running") })

	ta.do("open edge A's page", chromedp.Navigate(pageA), chromedp.WaitVisible(chromedp.CSS("#new-thread")))
	tb.do("open edge B's page", chromedp.Navigate(pageB), chromedp.WaitVisible(chromedp.CSS("#new-thread")))
	ta.do("name the author", chromedp.SendKeys(chromedp.CSS("#author"), "Ann"), chromedp.Blur(chromedp.CSS("#author")))
	ta.do("new thread", chromedp.Click(chromedp.CSS("#new-thread")))
	ta.send("hello")
	const answered = `[...document.querySelectorAll('.msg[data-role="assistant"][data-kind="text"] .text')].some(e => e.textContent.length > 20)`
	ta.waitFor("the streamed answer on A", answered)

	tb.waitFor("A's thread in B's list", `document.querySelectorAll('#threads button').length > 0`)
	tb.do("open it on B", chromedp.Evaluate[chromedp.Void](`document.querySelector('#threads button').click(), 0`))
	tb.waitFor("the answer on B", answered)

	tb.do("name the author on B", chromedp.SendKeys(chromedp.CSS("#author"), "Bob"), chromedp.Blur(chromedp.CSS("#author")))
	tb.send("tools")
	const toolsDone = `document.querySelector('#messages').innerText.includes("One test fails") &&
		[...document.querySelectorAll('.msg[data-kind="tool"] .text')].some(e => e.textContent.endsWith("· done")) &&
		document.querySelector('#typing').hidden`
	tb.waitFor("the tools turn on B", toolsDone)
	ta.waitFor("the tools turn, live, on A", toolsDone)

	const ids = `[...document.querySelectorAll('#messages .msg')].map(e => e.dataset.id + ":" + e.querySelector('.text')?.textContent).join("\n")`
	var onA, onB string
	for _, s := range []struct {
		b   tab
		out *string
	}{{ta, &onA}, {tb, &onB}} {
		v, err := chromedp.Run(s.b.ctx, chromedp.Evaluate[string](ids))
		if err != nil {
			t.Fatal(err)
		}
		*s.out = v
	}
	if onA != onB || strings.Count(onA, "\n") < 4 {
		t.Fatalf("the tabs show different messages:\nA:\n%s\nB:\n%s", onA, onB)
	}
}
