package web

import (
	"net/http"
	"os"
	"slices"
	"testing"

	"github.com/acpgw/gateway/channels"
)

// keptNames lists the files in dir.
func keptNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// uploadTo puts a file into thread id and returns its stored name.
func uploadTo(t *testing.T, a *Adapter, id, name string) string {
	t.Helper()
	if _, err := a.Upload(t.Context(), ref(id), channels.Upload{Name: name, Data: []byte("data of " + name)}); err != nil {
		t.Fatal(err)
	}
	msgs, _, err := a.st.messages(id)
	if err != nil {
		t.Fatal(err)
	}
	kept := keptFiles(&thread{msgs: []*message{&msgs[len(msgs)-1]}})
	if len(kept) != 1 {
		t.Fatalf("kept files of the upload = %q, want one", kept)
	}
	return kept[0]
}

// TestDeletedThreadLeavesNoFiles: deleting a web thread (DELETE
// /api/threads/{id}) removes the files kept for it; another thread's
// stay.
func TestDeletedThreadLeavesNoFiles(t *testing.T) {
	dir := t.TempDir()
	a := New(Options{Listen: "127.0.0.1:0", Token: "secret", FilesDir: dir})
	in := serve(t, a, nil)
	c := newClient(t, a)
	ctx := t.Context()
	gone, kept := c.newThread(ctx, t), c.newThread(ctx, t)
	uploadTo(t, a, gone, "a.txt")
	uploadTo(t, a, gone, "b.txt")
	keep := uploadTo(t, a, kept, "c.txt")
	if n := len(keptNames(t, dir)); n != 3 {
		t.Fatalf("%d files kept, want 3", n)
	}
	if err := c.do(ctx, t, "DELETE", "/api/threads/"+gone, nil).want(http.StatusNoContent); err != nil {
		t.Fatal(err)
	}
	if ev := in.next(t); !ev.Closed {
		t.Errorf("inbound = %+v, want the thread closed", ev)
	}
	if got := keptNames(t, dir); !slices.Equal(got, []string{keep}) {
		t.Errorf("files after the delete = %q, want only the other thread's %q", got, keep)
	}
}

// TestForgottenThreadLeavesNoFiles: a thread forgotten to make room for a
// new one takes its files with it.
func TestForgottenThreadLeavesNoFiles(t *testing.T) {
	dir := t.TempDir()
	a := New(Options{Listen: "127.0.0.1:0", Token: "secret", FilesDir: dir})
	serve(t, a, nil)
	c := newClient(t, a)
	ctx := t.Context()
	old := c.newThread(ctx, t)
	uploadTo(t, a, old, "old.txt")
	a.st.mu.Lock()
	a.st.maxInMemory = 1 // without a state file, past the bound is forgotten
	a.st.mu.Unlock()
	c.newThread(ctx, t)
	if a.st.hasThread(old) {
		t.Fatal("the old thread was not forgotten")
	}
	if got := keptNames(t, dir); len(got) != 0 {
		t.Errorf("files after the thread was forgotten = %q, want none", got)
	}
}
