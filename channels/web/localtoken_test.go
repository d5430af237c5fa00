package web

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// With LocalToken, the one local user must hold it: a client without it
// (another account of the machine) is refused with a 401 that says where
// the token is, whatever it asks for; the holder is web:local, and the
// page's address carries the token.
func TestLocalTokenClosesTheChat(t *testing.T) {
	a := New(Options{Listen: "127.0.0.1:0", LocalToken: "local-token-0123456789", TokenHelp: "open the address the gateway printed at start"})
	in := serve(t, a, nil)
	if got, want := a.URL(), "http://"+a.Addr()+"/?token=local-token-0123456789"; got != want {
		t.Errorf("URL = %s, want %s", got, want)
	}
	ctx := t.Context()
	holder := newClient(t, a)
	other := &client{base: holder.base, hc: holder.hc}
	id := holder.newThread(ctx, t)
	for _, tc := range []struct{ method, path string }{
		{"GET", "/api/me"}, {"GET", "/api/threads"}, {"POST", "/api/threads"},
		{"GET", "/api/threads/" + id + "/messages"}, {"POST", "/api/threads/" + id + "/messages"},
		{"GET", "/api/events"}, {"GET", "/api/threads/" + id + "/events"}, {"GET", "/api/socket"},
	} {
		var body any
		if tc.method == "POST" {
			body = map[string]string{"text": "sneaked in"}
		}
		r, err := other.try(ctx, tc.method, tc.path, body, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.status != 401 || !strings.Contains(r.errorText(), "access token: open the address the gateway printed at start") {
			t.Errorf("%s %s without the token = %d %q, want 401 saying where the token is", tc.method, tc.path, r.status, r.errorText())
		}
	}
	in.empty(t)
	var me meBody
	holder.do(ctx, t, "GET", "/api/me", nil).decode(t, &me)
	if me.ID != LocalID {
		t.Errorf("the holder is %q, want %s", me.ID, LocalID)
	}
	if r := holder.do(ctx, t, "POST", "/api/threads/"+id+"/messages", map[string]string{"text": "hi"}); r.status != 200 && r.status != 202 {
		t.Fatalf("the holder's message = %d %s", r.status, r.body)
	}
	if ev := in.next(t); ev.Author.ID != LocalID || ev.Text != "hi" {
		t.Errorf("inbound = %+v, want hi from %s", ev, LocalID)
	}
}

// The page opened at the printed address (the one click) works, and the
// token leaves the address bar (and so the history); opened again without
// it, the page still works (the browser kept it). A page without any
// token says where to find it.
func TestBrowserLocalToken(t *testing.T) {
	ctx := browser(t)
	a := New(Options{Listen: "127.0.0.1:0", LocalToken: "local-browser-token-0123", TokenHelp: "open the address the gateway printed at start"})
	in := serve(t, a, nil)
	p := page{t: t, ctx: ctx}
	p.do("open the page from the printed address", chromedp.Navigate(a.URL()), chromedp.WaitVisible(chromedp.CSS("#composer textarea")))
	p.waitFor("the token out of the address bar", `location.search === "" && !location.href.includes("local-browser-token")`)
	if n := eval[int](p, `history.length`); n != 2 {
		t.Errorf("history has %d entries, want 2 (the blank tab, the page: its address replaced, not pushed)", n)
	}
	p.do("write", chromedp.SendKeys(chromedp.CSS("#composer textarea"), "hi with the token\r"))
	p.do("leave the name empty", chromedp.WaitVisible(chromedp.CSS("#ask-name")), chromedp.Click(chromedp.CSS("#ask-ok")))
	if ev := in.next(t); ev.Text != "hi with the token" || ev.Author.ID != LocalID {
		t.Fatalf("inbound = %+v, want the message from %s", ev, LocalID)
	}
	p.waitFor("the message shown", `document.querySelector('.msg[data-role="user"] .text')?.textContent === "hi with the token"`)

	base := "http://" + a.Addr() + "/"
	p.do("open it again without the token", chromedp.Navigate(base), chromedp.WaitVisible(chromedp.CSS("#composer textarea")))
	p.waitFor("the thread listed", `document.querySelectorAll("#threads li").length === 1`)
	if !eval[bool](p, `document.querySelector("#auth").hidden`) {
		t.Error("the page asks for the token it kept")
	}

	p.do("forget the token", chromedp.Evaluate[chromedp.Void](`localStorage.clear()`), chromedp.Navigate(base))
	p.waitFor("the token asked for, saying where it is", `!document.querySelector("#auth").hidden && document.querySelector("#auth-why").textContent.includes("printed at start")`)
}

// LoadToken makes a token file of mode 0600 at the first call and returns
// the same token later; a file others can read, or one with no usable
// token, is replaced; a symbolic link is refused.
func TestLoadToken(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "web-token")
	tok, made, err := LoadToken(path)
	if err != nil || !made || len(tok) != 43 {
		t.Fatalf("LoadToken = %q, %v, %v; want a new 43-character token", tok, made, err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("the token file has mode %v, want 0600", st.Mode().Perm())
	}
	again, made, err := LoadToken(path)
	if err != nil || made || again != tok {
		t.Errorf("LoadToken again = %q, %v, %v; want %q kept", again, made, err, tok)
	}

	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	fresh, made, err := LoadToken(path)
	if err != nil || !made || fresh == tok {
		t.Errorf("LoadToken of a readable file = %q, %v, %v; want a new token", fresh, made, err)
	}
	if st, _ := os.Stat(path); st == nil || st.Mode().Perm() != 0o600 {
		t.Errorf("the replaced file's mode = %v, want 0600", st.Mode().Perm())
	}

	if err := os.WriteFile(path, []byte("short\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, made, err := LoadToken(path); err != nil || !made || got == "short" {
		t.Errorf("LoadToken of a short token = %q, %v, %v; want a new token", got, made, err)
	}
	if err := os.WriteFile(path, []byte("  an-operator-chosen-token  \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, made, err := LoadToken(path); err != nil || made || got != "an-operator-chosen-token" {
		t.Errorf("LoadToken of an operator's token = %q, %v, %v; want it kept", got, made, err)
	}

	link := filepath.Join(dir, "link")
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	if got, _, err := LoadToken(link); err == nil {
		t.Errorf("LoadToken of a symbolic link = %q, want an error", got)
	}
}
