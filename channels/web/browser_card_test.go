package web

import (
	"regexp"
	"strings"
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/chromedp/chromedp"
)

// permissionText is a prompt as session.renderPermission writes it for an
// edit outside the working directory.
const permissionText = "🔐 **Permission needed** — Edit main.go (edit)\n" +
	"Files:\n" +
	"• `/etc/app/main.go` ⚠️ outside the working directory\n" +
	"Input: `{\"file_path\":\"/etc/app/main.go\",\"old_string\":\"x := 1\",\"new_string\":\"x := 2\\n\\tfmt.Println(x)\",\"replace_all\":false}`\n" +
	"`/etc/app/main.go` ⚠️ outside the working directory\n" +
	"```diff\n- x := 1\n+ x := 2\n+ \tfmt.Println(x)\n```"

// TestBrowserPermissionCard shows a permission prompt as a card: the title
// with the kind's mark, the file once with its flag, the input as fields
// (no raw JSON), the diff coloured, one primary button (the first allow
// option) and reject outlined in red; once answered it folds to one line
// with the answer and its time. Nothing the text shows is left out.
func TestBrowserPermissionCard(t *testing.T) {
	ctx := browser(t)
	a := New(Options{Listen: "127.0.0.1:0"})
	in := serve(t, a, nil)
	th := a.st.mustCreate("card")
	ref := ref(th.ID)
	p := page{t: t, ctx: ctx}
	p.do("open the thread", desktopView, chromedp.Navigate(a.URL()+"#"+th.ID), chromedp.WaitVisible(chromedp.CSS("#prompt")))
	eval[chromedp.Void](p, `localStorage.setItem("acpgw.author", "Ann"), localStorage.setItem("acpgw.asked", "1"), document.querySelector("#author").value = "Ann", 0`)
	prompt, err := a.Prompt(ctx, ref, channels.Choice{Text: permissionText, Options: []channels.Option{
		{ID: "once", Label: "Allow once", Style: "primary"}, {ID: "always", Label: "Always allow", Style: "primary"},
		{ID: "reject", Label: "Reject", Style: "danger"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	card := msgSel(prompt, " .text")
	p.waitFor("the card", `document.querySelector(`+card+` + " .perm-title") !== null`)

	if got := eval[string](p, `document.querySelector(`+card+` + " .perm-title").textContent`); got != "✏️ Edit main.go edit" {
		t.Errorf("title = %q, want the edit mark, the title and the kind", got)
	}
	text := eval[string](p, `document.querySelector(`+card+`).innerText`)
	if strings.Contains(text, "{") || strings.Contains(text, `"`) {
		t.Errorf("the card shows raw JSON:\n%s", text)
	}
	if n := strings.Count(text, "/etc/app/main.go"); n != 1 {
		t.Errorf("the path is shown %d times, want once:\n%s", n, text)
	}
	if !strings.Contains(text, "⚠️ outside the working directory") {
		t.Errorf("the path outside the working directory is not flagged:\n%s", text)
	}
	if got := eval[[]string](p, `[...document.querySelectorAll(`+card+` + " .perm-fields dt")].map(e => e.textContent)`); strings.Join(got, ",") != "old_string,new_string,replace_all" {
		t.Errorf("fields = %q, want old_string, new_string, replace_all (file_path is the file above)", got)
	}
	// Everything the text shows is in the card (a long value folded).
	all := eval[string](p, `document.querySelector(`+card+`).textContent`)
	for _, want := range []string{"x := 1", "x := 2\n\tfmt.Println(x)", "false", "Edit main.go"} {
		if !strings.Contains(all, want) {
			t.Errorf("the card leaves out %q:\n%s", want, all)
		}
	}
	// The diff coloured: removed and added lines have their own backgrounds.
	bg := eval[[]string](p, `["gd", "gi"].map(c => { const e = document.querySelector(`+card+` + " .perm-rest .chroma ." + c); return e ? getComputedStyle(e).backgroundColor : ""; })
		.concat([getComputedStyle(document.querySelector(`+card+` + " .perm-rest pre")).backgroundColor])`)
	if bg[0] == "" || bg[1] == "" || bg[0] == bg[1] || bg[0] == bg[2] || bg[1] == bg[2] {
		t.Errorf("diff backgrounds removed/added/code = %q, want three colours", bg)
	}
	// One primary button, the first allow option; reject outlined in red.
	btn := eval[[]string](p, `[...document.querySelectorAll(`+msgSel(prompt, " .options button")+`)].map(b => b.className + "|" + getComputedStyle(b).borderTopColor + "|" + getComputedStyle(b).color)`)
	if len(btn) != 3 || !strings.HasPrefix(btn[0], "btn primary|") || strings.Contains(btn[1], "primary") || !strings.HasPrefix(btn[2], "btn danger|") {
		t.Fatalf("buttons = %q, want Allow once primary, Always allow secondary, Reject danger", btn)
	}
	if red := strings.Split(btn[2], "|"); red[1] != red[2] || !redRe.MatchString(red[1]) {
		t.Errorf("the reject button's border/text = %q, want red", red[1:])
	}
	p.shot("desktop-permission")
	p.do("on a phone", phoneView, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#prompt")))
	p.waitFor("the card", `document.querySelector(`+card+` + " .perm-title") !== null`)
	p.waitFor("the thread list away", `getComputedStyle(document.querySelector("#sidebar")).visibility === "hidden" && document.querySelector("#sidebar").getBoundingClientRect().right <= 0`)
	if !eval[bool](p, noSideScroll) {
		t.Errorf("the card overflows sideways on a phone")
	}
	p.shot("phone-permission")
	p.do("back on the desktop", desktopView)

	p.do("allow once", chromedp.Click(chromedp.CSS(`.msg[data-id="`+string(prompt.ID)+`"] button[data-option="once"]`)))
	if ev := in.next(t); ev.Choice == nil || ev.Choice.OptionID != "once" || ev.Author.Name != "Ann" {
		t.Fatalf("inbound = %+v, want Allow once by Ann", ev)
	}
	if err := a.Edit(ctx, prompt, channels.Message{Kind: channels.KindPermission, Text: permissionText + "\n\n✅ Allow once — chosen by Ann"}); err != nil {
		t.Fatal(err)
	}
	p.waitFor("the card folded", `document.querySelector(`+msgSel(prompt, "")+`).classList.contains("answered")`)
	if got := eval[string](p, `document.querySelector(`+card+`).innerText`); !foldRe.MatchString(got) {
		t.Errorf("the answered card reads %q, want one line: ✅ Allow once — chosen by Ann · hh:mm", got)
	}
	if h := eval[float64](p, `document.querySelector(`+msgSel(prompt, " .card")+`).getBoundingClientRect().height`); h > 40 {
		t.Errorf("the answered card is %vpx high, want one line", h)
	}
	p.do("open the folded card", chromedp.Click(chromedp.CSS(`.msg[data-id="`+string(prompt.ID)+`"] .perm-done summary`)))
	p.waitFor("the details shown again", `document.querySelector(`+card+`).innerText.includes("outside the working directory")`)
	p.shot("desktop-permission-answered")
}

var (
	redRe  = regexp.MustCompile(`^rgb\((1[5-9]\d|2\d\d), (\d|[1-9]\d|1[01]\d), (\d|[1-9]\d|1[01]\d)\)$`)
	foldRe = regexp.MustCompile(`^✅ Allow once — chosen by Ann · \d{1,2}:\d{2}( [AP]M)?$`)
)
