package web

import (
	"bytes"
	"context"
	"fmt"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/acpgw/gateway/channels"
)

// TestUploadDownload: a file the gateway puts into a thread is kept in
// FilesDir (one file, mode 0600) and downloaded from its link as an
// attachment with its type and nosniff, with a token only.
func TestUploadDownload(t *testing.T) {
	dir := t.TempDir()
	a := New(Options{Listen: "127.0.0.1:0", Token: "secret", FilesDir: filepath.Join(dir, "files")})
	serve(t, a, nil)
	c := newClient(t, a)
	ctx := t.Context()
	id := c.newThread(ctx, t)
	page := []byte("<script>alert(1)</script>")
	h, err := a.Upload(ctx, ref(id), channels.Upload{Name: "../../evil page.html", Data: page, Caption: "A page."})
	if err != nil {
		t.Fatalf("Upload: %v", err)
	}
	got, err := seenUpload(ctx, c, h)
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "evil page.html" || !bytes.Equal(got.Data, page) || got.Caption != "A page." {
		t.Errorf("got %q %q %q, want the file evil page.html with its bytes and caption", got.Name, got.Data, got.Caption)
	}
	b, _ := c.messages(ctx, id)
	url := b.Messages[len(b.Messages)-1].Files[0].URL
	r := c.do(ctx, t, "GET", url, nil)
	if ct := r.header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("Content-Type = %q, want text/html; charset=utf-8", ct)
	}
	if r.header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("X-Content-Type-Options = %q, want nosniff", r.header.Get("X-Content-Type-Options"))
	}
	disp, params, err := mime.ParseMediaType(r.header.Get("Content-Disposition"))
	if err != nil || disp != "attachment" || params["filename"] != "evil page.html" {
		t.Errorf("Content-Disposition = %q, want an attachment named evil page.html", r.header.Get("Content-Disposition"))
	}
	entries, err := os.ReadDir(filepath.Join(dir, "files"))
	if err != nil || len(entries) != 1 {
		t.Fatalf("FilesDir holds %v (%v), want one file", entries, err)
	}
	if info, _ := entries[0].Info(); info.Mode().Perm() != 0o600 || !strings.HasSuffix(entries[0].Name(), "-evil page.html") {
		t.Errorf("kept file %s with mode %v, want <id>-evil page.html with mode 0600", entries[0].Name(), info.Mode().Perm())
	}
	if all, _ := os.ReadDir(dir); len(all) != 1 {
		t.Errorf("%d entries beside FilesDir, want none", len(all)-1)
	}

	anon := *c
	anon.token = ""
	if r, _ := anon.try(ctx, "GET", url, nil, nil); r.status != http.StatusUnauthorized {
		t.Errorf("GET %s without a token = %d, want 401", url, r.status)
	}
	for _, bad := range []string{
		"/api/files/000000000000000000000000-evil%20page.html",
		"/api/files/..%2F..%2Fweb-chat.json",
		"/api/files/" + strings.TrimPrefix(url, filesPrefix) + "x",
		"/api/files/%2e%2e",
	} {
		if r, _ := c.try(ctx, "GET", bad, nil, nil); r.status != http.StatusNotFound {
			t.Errorf("GET %s = %d, want 404", bad, r.status)
		}
	}
}

// TestUploadImageThumb: an image gets a preview in the message.
func TestUploadImageThumb(t *testing.T) {
	a := New(Options{})
	id := a.st.mustCreate("t").ID
	h, err := a.Upload(t.Context(), ref(id), channels.Upload{Name: "pixel.png", Data: testPNG(t, 8, 8, 255)})
	if err != nil {
		t.Fatal(err)
	}
	msgs, _, _ := a.st.messages(id)
	m := msgs[len(msgs)-1]
	if m.ID != string(h.ID) || m.Kind != "file" || len(m.Files) != 1 || !strings.HasPrefix(m.Files[0].Thumb, "data:image/") || m.Files[0].Type != "image/png" {
		t.Errorf("message %+v, want a file message with an image preview", m)
	}
}

// TestUploadRefused: a file for a thread that is gone, or too large, is
// refused for good and nothing is kept.
func TestUploadRefused(t *testing.T) {
	dir := t.TempDir()
	a := New(Options{FilesDir: dir})
	id := a.st.mustCreate("t").ID
	for _, tc := range []struct {
		thread string
		f      channels.Upload
	}{
		{"nothread", channels.Upload{Name: "a.txt", Data: []byte("a")}},
		{id, channels.Upload{Name: "big.bin", Data: make([]byte, maxUploadBytes+1)}},
	} {
		if _, err := a.Upload(context.Background(), ref(tc.thread), tc.f); !channels.IsPermanent(err) {
			t.Errorf("Upload of %s into %s = %v, want a permanent error", tc.f.Name, tc.thread, err)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("FilesDir holds %d entries, want none", len(entries))
	}
}

// TestSavedFileLinks: a state file's links must be the chat's own.
func TestSavedFileLinks(t *testing.T) {
	for url, ok := range map[string]bool{
		fileURL("0123456789abcdef01234567-a b.txt"): true,
		"javascript:alert(1)":                       false,
		"/api/files/../web-chat.json":               false,
		"https://example.com/x":                     false,
		"/api/files/0123456789abcdef01234567-.x":    false,
	} {
		m := message{ID: "m1", Role: roleAssistant, Kind: "file", Files: []sentFile{{Name: "x", URL: url}}}
		if err := checkSaved(&m); (err == nil) != ok {
			t.Errorf("checkSaved with link %q = %v, want ok %v", url, err, ok)
		}
	}
}

func TestSafeName(t *testing.T) {
	for in, want := range map[string]string{
		"report.pdf": "report.pdf", "../../etc/passwd": "passwd", `C:\x\y.txt`: "y.txt", "": "file", "..": "file",
		".bashrc": "bashrc", "a\x00b\nc": "a_b_c", "inv\xffalid": "inv_alid", "a:b*c?.txt": "a_b_c_.txt",
		"rtl\u202etxt.exe": "rtl_txt.exe", strings.Repeat("é", 100) + ".tar": strings.Repeat("é", 58) + ".tar",
	} {
		if got := safeName(in); got != want {
			t.Errorf("safeName(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzSafeName: whatever the agent names a file, the kept name is one
// plain file inside the directory, and its link is one the chat serves.
func FuzzSafeName(f *testing.F) {
	for _, s := range []string{"report.pdf", "../../x", `a\b`, ". .", "\xff\xfe", strings.Repeat("a", 200) + ".txt", "x\u202e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		got := safeName(name)
		switch {
		case got == "", len(got) > maxFileName, !utf8.ValidString(got), safeName(got) != got:
			t.Fatalf("safeName(%q) = %q: empty, too long, not UTF-8 or not stable", name, got)
		case strings.ContainsAny(got, `/\`), strings.HasPrefix(got, "."), !filepath.IsLocal(got):
			t.Fatalf("safeName(%q) = %q is no plain local name", name, got)
		}
		for _, r := range got {
			if unicode.IsControl(r) {
				t.Fatalf("safeName(%q) = %q has a control character", name, got)
			}
		}
		stored := "0123456789abcdef01234567-" + got
		if !validStored(stored) || !validFileURL(fileURL(stored)) {
			t.Fatalf("the link of %q is not valid", stored)
		}
	})
}

// FuzzValidStored: a name the download route accepts is a plain name
// inside the files directory.
func FuzzValidStored(f *testing.F) {
	for _, s := range []string{"0123456789abcdef01234567-a.txt", "../x", "0123456789abcdef01234567-../x", "%2e%2e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if validStored(s) && (!filepath.IsLocal(s) || strings.ContainsAny(s, `/\`) || filepath.Base(s) != s) {
			t.Fatalf("validStored(%q) but it is no plain local name", s)
		}
	})
}

// TestUploadSurvivesRestart: a file message and its file are there after
// a restart, and the link still downloads it.
func TestUploadSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	o := Options{StateFile: filepath.Join(dir, "web-chat.json"), FilesDir: filepath.Join(dir, "web-files")}
	a := New(o)
	id := a.st.mustCreate("t").ID
	h, err := a.Upload(t.Context(), ref(id), channels.Upload{Name: "notes.md", Data: []byte("# notes\n"), Caption: "Notes."})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Flush(); err != nil {
		t.Fatal(err)
	}
	o.Listen = "127.0.0.1:0"
	b := New(o)
	serve(t, b, nil)
	got, err := seenUpload(t.Context(), newClient(t, b), h)
	if err != nil {
		t.Fatalf("after a restart: %v", err)
	}
	if got.Name != "notes.md" || string(got.Data) != "# notes\n" || got.Caption != "Notes." {
		t.Errorf("after a restart: %q %q %q, want notes.md with its bytes and caption", got.Name, got.Data, got.Caption)
	}
}

// TestUploadThreadQuota: a thread keeps at most its quota of
// files on disk; the upload past it is refused for good, and nothing of
// it is written; another thread still takes files.
func TestUploadThreadQuota(t *testing.T) {
	dir := t.TempDir()
	a := New(Options{FilesDir: dir})
	a.threadFiles = 4 << 20 // maxThreadFileBytes, smaller for the test's disk
	id := a.st.mustCreate("t").ID
	chunk := make([]byte, 1<<20)
	n := 4
	for i := range n {
		if _, err := a.Upload(t.Context(), ref(id), channels.Upload{Name: fmt.Sprintf("part%d.bin", i), Data: chunk}); err != nil {
			t.Fatalf("upload %d of %d: %v", i+1, n, err)
		}
	}
	_, err := a.Upload(t.Context(), ref(id), channels.Upload{Name: "one-more.bin", Data: []byte("x")})
	if !channels.IsPermanent(err) || !strings.Contains(err.Error(), "a thread may keep") {
		t.Fatalf("the upload past the quota = %v, want a permanent refusal saying why", err)
	}
	var total int64
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if info, err := e.Info(); err == nil {
			total += info.Size()
		}
	}
	if total > a.threadFiles {
		t.Errorf("FilesDir holds %d bytes, want at most %d", total, a.threadFiles)
	}
	other := a.st.mustCreate("u").ID
	if _, err := a.Upload(t.Context(), ref(other), channels.Upload{Name: "a.txt", Data: []byte("a")}); err != nil {
		t.Errorf("another thread's upload: %v", err)
	}
}
