package web

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"
)

// streamedReply is a reply that arrives in parts: every part is one edit
// of the message.
var streamedReply = []string{
	"The first paragraph holds the words to select while the reply is still streaming.\n\n",
	"## Results\n\nThe second paragraph grows",
	" over two edits, and then a table follows:\n\n| Package | Tests |\n|---|---:|\n| `projector` | 42 |\n",
	"| `dispatch` | 37 |\n\n```go\nfunc greeting(name string) string {\n\tif name == \"\" {\n\t\tname = \"gateway\"\n\t}\n\treturn name\n}\n```\n\n",
	"- [x] Reproduce\n- [ ] Ship it\n  - nested\n\n> A quote\n> of two lines.\n",
}

// TestBrowserMarkdownStreaming streams a reply into the page as dispatch
// does (a post, then edits with the whole text so far): a selection made
// in the first paragraph survives every later edit, the table and the code
// block are rendered, and the copy button copies the code.
func TestBrowserMarkdownStreaming(t *testing.T) {
	ctx := browser(t)
	a := New(Options{Listen: "127.0.0.1:0"})
	serve(t, a, nil)
	p := page{t: t, ctx: ctx}
	th := ref(a.st.mustCreate("markdown").ID)

	p.do("open the thread", chromedp.Navigate(a.URL()+"#"+th.Thread), chromedp.WaitVisible(chromedp.CSS("#composer textarea")))
	text := streamedReply[0]
	h, err := a.Post(ctx, th, channels.Message{Kind: channels.KindText, Text: text})
	if err != nil {
		t.Fatal(err)
	}
	textSel := msgSel(h, " .text")
	p.waitFor("the first paragraph", `document.querySelector(`+textSel+`)?.querySelector("p")?.textContent.startsWith("The first paragraph")`)

	// Select "words to select" in the first paragraph, as a person would
	// by dragging.
	selected := eval[string](p, `(() => {
		const para = document.querySelector(`+textSel+` + " > p"), node = para.firstChild;
		const at = node.textContent.indexOf("words to select");
		const r = document.createRange();
		r.setStart(node, at); r.setEnd(node, at + "words to select".length);
		getSelection().removeAllRanges(); getSelection().addRange(r);
		window.firstPara = para;
		return getSelection().toString(); })()`)
	if selected != "words to select" {
		t.Fatalf("selected %q, want %q", selected, "words to select")
	}

	for i, part := range streamedReply[1:] {
		text += part
		if err := a.Edit(ctx, h, channels.Message{Kind: channels.KindText, Text: text}); err != nil {
			t.Fatal(err)
		}
		p.waitFor("edit "+strconv.Itoa(i+1), `document.querySelector(`+textSel+`)?.dataset.src === `+strconv.Quote(text))
		if got := eval[string](p, `getSelection().toString()`); got != selected {
			t.Fatalf("after edit %d the selection is %q, want %q kept", i+1, got, selected)
		}
		if !eval[bool](p, `document.querySelector(`+textSel+` + " > p") === window.firstPara`) {
			t.Fatalf("edit %d replaced the first paragraph's node", i+1)
		}
	}

	got := eval[[]any](p, `(() => { const e = document.querySelector(`+textSel+`); return [
		e.querySelectorAll("table").length, e.querySelectorAll("table tbody tr").length,
		e.querySelector("th[align=right]")?.textContent,
		e.querySelector(".code .code-lang")?.textContent, e.querySelector(".code button.code-copy")?.textContent,
		e.querySelector(".code pre .kd")?.textContent, getComputedStyle(e.querySelector(".code pre")).tabSize,
		getComputedStyle(e.querySelector(".code pre .kd")).color !== getComputedStyle(e.querySelector(".code pre")).color,
		e.querySelectorAll("li input[type=checkbox]:checked").length, e.querySelectorAll("li li").length,
		e.querySelectorAll("blockquote").length, e.querySelector("blockquote").innerText]; })()`)
	want := []any{float64(1), float64(2), "Tests", "go", "Copy", "func", "4", true, float64(1), float64(1), float64(1), "A quote\nof two lines."}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rendered reply (-want +got):\n%s", diff)
	}

	// The copy button copies the code as it is, tabs and all.
	eval[chromedp.Void](p, `Object.defineProperty(navigator.clipboard, "writeText", {value: s => { window.copied = s; return Promise.resolve(); }}), 0`)
	p.do("click Copy", chromedp.Click(chromedp.CSS(`.msg[data-id="`+string(h.ID)+`"] .code-copy`)))
	p.waitFor("the copied label", `document.querySelector(`+textSel+`).querySelector(".code-copy").textContent === "Copied"`)
	if got, want := eval[string](p, `window.copied`), "func greeting(name string) string {\n\tif name == \"\" {\n\t\tname = \"gateway\"\n\t}\n\treturn name\n}"; got != want {
		t.Errorf("copied %q, want %q", got, want)
	}

	shot, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS(`.msg[data-id="`+string(h.ID)+`"]`)))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if err := os.WriteFile(filepath.Join(t.ArtifactDir(), "markdown.png"), shot, 0o644); err != nil {
		t.Fatal(err)
	}
}
