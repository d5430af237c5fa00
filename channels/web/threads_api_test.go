package web

import (
	"net/http"
	"strings"
	"testing"

	"github.com/acpgw/gateway/channels"
)

// TestRenameAndDeleteThreadAPI: PATCH renames a thread (its first line,
// plain text), DELETE forgets it and tells the gateway (Inbound.Closed:
// its turn stopped, its agent ended, its binding forgotten); bad
// titles and unknown threads get clear errors.
func TestRenameAndDeleteThreadAPI(t *testing.T) {
	a := New(Options{Listen: "127.0.0.1:0"})
	in := serve(t, a, nil)
	c := newClient(t, a)
	ctx := t.Context()
	th := a.st.mustCreate("old")
	path := "/api/threads/" + th.ID

	var got threadInfo
	r := c.do(ctx, t, "PATCH", path, map[string]string{"title": "  **New** name"})
	if err := r.want(http.StatusOK); err != nil {
		t.Fatal(err)
	}
	if r.decode(t, &got); got.Title != "New name" || threadTitle(a, th.ID) != "New name" {
		t.Errorf("renamed to %q (list %q), want New name", got.Title, threadTitle(a, th.ID))
	}
	for _, tc := range []struct {
		path   string
		body   any
		status int
		err    string
	}{
		{path, map[string]string{"title": " "}, http.StatusBadRequest, `"title" is empty`},
		{path, map[string]any{"title": 3}, http.StatusBadRequest, "title"},
		{"/api/threads/000000000000", map[string]string{"title": "x"}, http.StatusNotFound, "no such thread"},
	} {
		r := c.do(ctx, t, "PATCH", tc.path, tc.body)
		if r.status != tc.status || !strings.Contains(r.errorText(), tc.err) {
			t.Errorf("PATCH %s %v = %d %q, want %d %q", tc.path, tc.body, r.status, r.errorText(), tc.status, tc.err)
		}
	}

	// The gateway is told, whether or not a turn runs.
	if err := c.do(ctx, t, "DELETE", path, nil).want(http.StatusNoContent); err != nil {
		t.Fatal(err)
	}
	if ev := in.next(t); !ev.Closed || ev.Stop || ev.Thread != ref(th.ID) || ev.Author.ID != LocalID {
		t.Errorf("inbound = %+v, want the deleted thread closed by the local user", ev)
	}
	if a.st.hasThread(th.ID) {
		t.Error("the thread is still there after DELETE")
	}
	if err := c.do(ctx, t, "DELETE", path, nil).want(http.StatusNotFound); err != nil {
		t.Error(err)
	}
	in.empty(t) // an unknown thread: the gateway is not told
	if err := a.SetTitle(ctx, ref(th.ID), "x"); err == nil {
		t.Error("SetTitle of a deleted thread = nil, want an error")
	}
	if err := a.SetTitle(ctx, channels.ThreadRef{Platform: "discord", Channel: "c", Thread: th.ID}, "x"); err == nil {
		t.Error("SetTitle of another platform's thread = nil, want an error")
	}
}
