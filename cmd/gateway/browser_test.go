package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/acpgw/gateway/internal/browsertest"
	"github.com/chromedp/chromedp"
)

// chromium returns a headless-capable Chromium, skipping the test with the
// reason when there is none (failing in CI, where .ci/run installs it).
func chromium(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	reason := "no Chromium: install Debian's chromium package to run the browser test"
	if os.Getenv("CI") != "" {
		t.Fatal(reason)
	}
	t.Skip(reason)
	return ""
}

// tab drives one browser tab.
type tab struct {
	t   *testing.T
	ctx context.Context
}

func newTab(t *testing.T) tab {
	return tab{t: t, ctx: browsertest.Start(t, chromium(t), 1200, 900)}
}

func (b tab) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// waitFor waits until the JavaScript expression is truthy.
func (b tab) waitFor(what, expr string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		text, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.querySelector("#messages").innerText`))
		b.t.Fatalf("waiting for %s: %v\npage:\n%s", what, err, text)
	}
}

func (b tab) send(text string) {
	b.t.Helper()
	b.do("send "+text, chromedp.SendKeys(chromedp.CSS("#composer textarea"), text+"\r"))
}

// TestBrowserAgainstTheDemoAgent runs the whole program (web chat, session
// router, the demo agent as a subprocess) and uses the page in headless
// Chromium: a prompt and its streamed answer, a tool message that changes
// in place, a permission button, and the Stop button on a slow turn.
func TestBrowserAgainstTheDemoAgent(t *testing.T) {
	b := newTab(t)
	cfg, f := testConfig(t, "")
	g := startGateway(t, cfg, f, hooks{})

	b.do("open the page", chromedp.Navigate(g.webURL), chromedp.WaitVisible(chromedp.CSS("#new-thread")))
	b.do("name the author", chromedp.SendKeys(chromedp.CSS("#author"), "Ann"), chromedp.Blur(chromedp.CSS("#author")))
	b.do("new thread", chromedp.Click(chromedp.CSS("#new-thread")))
	b.waitFor("an empty new thread (created by its first message)", `document.querySelector("#thread-title").textContent === "New thread"`)
	// Record every text each tool message shows, and its DOM node.
	b.do("watch tool messages", chromedp.Evaluate[chromedp.Void](`
		window.toolTexts = {}; window.toolNodes = {};
		new MutationObserver(() => {
			for (const el of document.querySelectorAll('.msg[data-kind="tool"]')) {
				const id = el.dataset.id, text = el.querySelector('.text').textContent;
				const seen = (window.toolTexts[id] ||= []);
				if (seen[seen.length-1] !== text) seen.push(text);
				(window.toolNodes[id] ||= el);
			}
		}).observe(document.querySelector('#messages'), {subtree: true, childList: true, characterData: true});
		0`))

	b.send("hello")
	b.waitFor("the streamed answer", `[...document.querySelectorAll('.msg[data-role="assistant"][data-kind="text"] .text')].some(e => e.textContent.length > 20)`)
	b.waitFor("the thread's agent shown", `!document.querySelector("#thread-agent").hidden && document.querySelector("#thread-agent").textContent !== "" &&
		document.querySelector('#threads button[aria-current="true"] .agent')?.textContent === document.querySelector("#thread-agent").textContent`)

	b.send("tools")
	b.waitFor("a tool message that changed in place",
		`Object.entries(window.toolTexts).some(([id, texts]) => texts.length >= 2 && texts[texts.length-1].endsWith("· done") &&
			document.querySelector('.msg[data-id="' + id + '"]') === window.toolNodes[id])`)
	b.waitFor("the end of the tools turn", `document.querySelector('#messages').innerText.includes("One test fails")`)
	// A tool line opens on click to show what the tool showed.
	b.do("open a tool line", chromedp.Evaluate[chromedp.Void](`document.querySelector('.msg[data-kind="tool"] .text[role="button"]').click(), 0`))
	b.waitFor("the tool's details", `[...document.querySelectorAll('.msg[data-kind="tool"] .tool-detail')].some(e => !e.hidden && /Input|Output|Diff|Locations/.test(e.innerText))`)

	// The web chat's own defaults show thoughts, collapsed, and the plan,
	// once (pinned while its turn runs, then in the history).
	b.send("thought")
	b.waitFor("a collapsed thought", `[...document.querySelectorAll('.msg[data-kind="thought"] details:not([open]) .text')].some(e => e.textContent.includes("think out loud"))`)
	b.send("plan")
	b.waitFor("the plan, once", `[...document.querySelectorAll('.msg[data-kind="plan"] .text')].some(e => e.textContent.includes("Run the tests")) &&
		document.body.innerText.split("Run the tests").length === 2`)

	// A screenshot attached with the paperclip reaches the agent as an
	// image.
	shot := filepath.Join(t.TempDir(), "shot.png")
	if err := os.WriteFile(shot, []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), 0o600); err != nil {
		t.Fatal(err)
	}
	b.do("attach a screenshot", chromedp.SetUploadFiles(chromedp.CSS("#file-input"), []string{shot}))
	// (The next message starts a turn without a plan: the pin goes.)
	b.waitFor("the file chip", `document.querySelector('#files .file')?.textContent.includes("shot.png")`)
	b.send("images")
	b.waitFor("the agent saw the image", `document.querySelector('#messages').innerText.includes("I got 1 image(s): image/png (16 bytes).")`)
	b.waitFor("the file chips cleared", `document.querySelector('#files').hidden`)
	b.waitFor("the message names the file", `document.querySelector('#messages').innerText.includes("📎 shot.png")`)
	b.waitFor("the last turn's plan unpinned", `document.querySelector(".msg.pinned") === null && document.querySelector('.msg[data-kind="plan"]') !== null`)

	b.send("permission")
	b.waitFor("the permission buttons", `[...document.querySelectorAll('.msg button[data-option]')].some(e => e.textContent === "Allow" && !e.disabled)`)
	// The session's prompt text becomes a card: title, input as fields, the diff coloured.
	b.waitFor("the permission card", `(() => { const c = document.querySelector('.msg[data-kind="permission"] .text');
		return c?.querySelector(".perm-title") && c.querySelector(".perm-fields dt, .perm-files li") && c.querySelector(".perm-rest .chroma .gi") && !c.innerText.includes("{\"") })()`)
	b.do("click Allow", chromedp.Evaluate[chromedp.Void](`[...document.querySelectorAll('.msg button[data-option]')].find(e => e.textContent === "Allow").click(), 0`))
	b.waitFor("the agent's answer after Allow", `document.querySelector('#messages').innerText.includes("Applied the edit.")`)
	b.waitFor("the prompt folded to who chose", `document.querySelector('.msg[data-kind="permission"].answered .perm-done > summary')?.textContent.includes("chosen by Ann")`)

	b.send("slow 400")
	b.waitFor("the Stop button while the agent works", `!document.querySelector('#stop').hidden && document.querySelector('#messages').innerText.includes("quick brown fox")`)
	b.do("click Stop", chromedp.Click(chromedp.CSS("#stop")))
	b.waitFor("the stop notice", `document.querySelector('#messages').innerText.includes("Stopped by Ann.")`)
	b.waitFor("typing gone", `document.querySelector('#typing').hidden && document.querySelector('#stop').hidden`)
	if shot := os.Getenv("GATEWAY_TEST_SCREENSHOT"); shot != "" {
		png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
		if err == nil {
			err = os.WriteFile(shot, png, 0o644)
		}
		fmt.Println("screenshot:", shot, err)
	}
}
