package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"
)

// TestBrowserMarkdownScenario sends the demo agent's markdown scenario
// through the whole program and looks at the reply in Chromium: both of
// its tables are tables, its code blocks show their language and a copy
// button, its nested list and its two-line quote keep their shape.
func TestBrowserMarkdownScenario(t *testing.T) {
	b := newTab(t)
	cfg, f := testConfig(t, "")
	g := startGateway(t, cfg, f, hooks{})

	b.do("open the page", chromedp.Navigate(g.webURL), chromedp.WaitVisible(chromedp.CSS("#new-thread")))
	b.do("name the author", chromedp.SendKeys(chromedp.CSS("#author"), "Ann"), chromedp.Blur(chromedp.CSS("#author"))) // else the first send asks
	b.do("new thread", chromedp.Click(chromedp.CSS("#new-thread")))
	b.waitFor("an empty new thread (created by its first message)", `document.querySelector("#thread-title").textContent === "New thread"`)
	b.send("markdown")
	b.waitFor("the whole reply", `[...document.querySelectorAll('.msg[data-kind="text"][data-role="assistant"] .text')].some(e => e.textContent.includes("That is all for this report."))`)
	b.waitFor("the turn's end", `document.querySelector('#typing').hidden`)

	got, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]any](`(() => {
		const e = [...document.querySelectorAll('.msg[data-kind="text"][data-role="assistant"] .text')].find(e => e.textContent.includes("That is all for this report."));
		return [e.querySelectorAll("table").length, [...e.querySelectorAll("table")].map(t => t.querySelectorAll("tbody tr").length).join(","),
			[...e.querySelectorAll(".code")].map(c => c.querySelector(".code-lang").textContent + ":" + c.querySelector("button.code-copy").textContent).join(","),
			e.querySelectorAll(".code pre .kd").length > 0, e.textContent.includes("|---"),
			e.querySelectorAll("ol > li > ul > li").length, e.querySelectorAll("blockquote").length,
			e.querySelectorAll("input[type=checkbox]").length, e.querySelector("a[href='https://agentclientprotocol.com']")?.textContent]; })()`))
	if err != nil {
		t.Fatal(err)
	}
	want := []any{float64(2), "5,4", "go:Copy,sh:Copy", true, false, float64(4), float64(1), float64(4), "the ACP site"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the rendered markdown scenario (-want +got):\n%s", diff)
	}

	// Screenshots of the whole reply in both themes, for a person to look
	// at (go test -artifacts keeps them); the keywords change colour.
	b.do("show the whole reply", chromedp.EmulateViewport(1200, 2700), chromedp.Evaluate[chromedp.Void](`
		[...document.querySelectorAll('.msg[data-kind="text"][data-role="assistant"]')].find(e => e.textContent.includes("That is all for this report.")).scrollIntoView(), 0`))
	for _, scheme := range []struct{ name, keyword string }{{"light", "rgb(207, 34, 46)"}, {"dark", "rgb(255, 123, 114)"}} {
		b.do("prefer "+scheme.name, preferColorScheme(scheme.name))
		b.waitFor("the "+scheme.name+" keyword colour", `getComputedStyle(document.querySelector(".code pre .kd")).color === "`+scheme.keyword+`"`)
		shot, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatalf("screenshot: %v", err)
		}
		if err := os.WriteFile(filepath.Join(t.ArtifactDir(), "markdown-"+scheme.name+".png"), shot, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// preferColorScheme makes the page see prefers-color-scheme: scheme.
func preferColorScheme(scheme string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
		})
		return chromedp.Void{}, err
	}
}
