package attach

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/acpgw/gateway/channels"
)

func TestIsText(t *testing.T) {
	for _, tc := range []struct {
		name, contentType string
		want              bool
	}{
		{"message.txt", "text/plain; charset=utf-8", true},
		{"x", "application/json", true},
		{"x.yaml", "application/x-yaml", true},
		{"shot.png", "image/png", false},
		{"notes.txt", "", true},
		{"build.LOG", "", true},
		{"archive.zip", "", false},
		{"x.txt", "not a / type;;", false},
	} {
		if got := IsText(tc.name, tc.contentType); got != tc.want {
			t.Errorf("IsText(%q, %q) = %v, want %v", tc.name, tc.contentType, got, tc.want)
		}
	}
}

func TestReader(t *testing.T) {
	files := map[string]string{
		"/paste.txt": "line one\nline two\n",
		"/bad.txt":   "\xff\xfe",
		"/blank.txt": " \n",
		"/big.txt":   strings.Repeat("x", MaxFile+1),
		"/quarter":   strings.Repeat("y", MaxFile),
	}
	var auth []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth = append(auth, r.Header.Get("Authorization"))
		if r.URL.Path == "/signin.txt" {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write([]byte("<html>please sign in</html>"))
			return
		}
		body, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(body))
	}))
	defer srv.Close()
	file := func(name string, size int) channels.File {
		return channels.File{Name: name, ContentType: "text/plain", Size: size, URL: srv.URL + "/" + name}
	}
	ctx := context.Background()

	r := Reader{Client: srv.Client()}
	for _, tc := range []struct {
		f                 channels.File
		wantText, wantWhy string
		wantErr           bool
	}{
		{file("paste.txt", 18), "line one\nline two\n", "", false},
		{file("bad.txt", 2), "", "not UTF-8 text", false},
		{file("blank.txt", 2), "", "empty", false},
		{channels.File{Name: "shot.png", ContentType: "image/png", Size: 10, URL: srv.URL + "/shot.png"}, "", "not a text file", false},
		{file("huge.txt", MaxFile+1), "", "larger than 256 KiB", false},
		// The platform understated its size: the download is cut off.
		{file("big.txt", 10), "", "larger than 256 KiB", false},
		{file("gone.txt", 10), "", "it could not be downloaded (404 Not Found)", true},
		{file("signin.txt", 10), "", "it could not be downloaded (a web page came instead; the app may lack a permission)", true},
		{channels.File{Name: "x.txt", Size: 1, URL: "::"}, "", "its link is not valid", true},
	} {
		f := tc.f
		err := r.Read(ctx, &f)
		if f.Text != tc.wantText || f.Skipped != tc.wantWhy || (err != nil) != tc.wantErr {
			t.Errorf("Read(%s) = text %.20q, skipped %q, err %v; want %.20q, %q, error %v", tc.f.Name, f.Text, f.Skipped, err, tc.wantText, tc.wantWhy, tc.wantErr)
		}
	}

	// The budget of one message: four full-size files fit, a fifth not.
	r = Reader{Client: srv.Client(), Request: func(ctx context.Context, f channels.File) (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.URL, nil)
		if err == nil {
			req.Header.Set("Authorization", "Bearer token")
		}
		return req, err
	}}
	auth = nil
	for i := range 5 {
		f := file("quarter", MaxFile)
		r.Read(ctx, &f)
		if i < 4 && len(f.Text) != MaxFile {
			t.Errorf("file %d: %d bytes read, skipped %q", i, len(f.Text), f.Skipped)
		}
		if i == 4 && (f.Text != "" || !strings.Contains(f.Skipped, "1 MiB together")) {
			t.Errorf("file 5: text %d bytes, skipped %q; want it left out", len(f.Text), f.Skipped)
		}
	}
	if len(auth) != 4 || auth[0] != "Bearer token" {
		t.Errorf("requests carried %q, want 4 with the Request's header", auth)
	}
}

func TestPrompt(t *testing.T) {
	if got := Prompt("just text", nil); got != "just text" {
		t.Errorf("Prompt without files = %q", got)
	}
	got := Prompt("look at these", []channels.File{
		{Name: "trace.txt", Text: "panic: boom\n```\ngoroutine 1\n"},
		{Name: "shot.png", ContentType: "image/png", Size: 2048, URL: "https://cdn.example/shot.png", Skipped: "not a text file"},
		{Name: "huge.log", Size: 3 << 20, Skipped: "larger than 256 KiB"},
		{Name: "odd.bin", Size: 12},
	})
	want := "look at these\n\n" +
		"Attached file trace.txt:\n````\npanic: boom\n```\ngoroutine 1\n````\n\n" +
		"(Attached file shot.png, image/png, 2 KiB, not included: not a text file. Link: https://cdn.example/shot.png)\n\n" +
		"(Attached file huge.log, unknown type, 3.0 MiB, not included: larger than 256 KiB.)\n\n" +
		"(Attached file odd.bin, unknown type, 12 bytes, not included: not read.)"
	if got != want {
		t.Errorf("Prompt =\n%s\nwant\n%s", got, want)
	}
	if got := Prompt("", []channels.File{{Name: "message.txt", Text: "hi"}}); got != "Attached file message.txt:\n```\nhi\n```" {
		t.Errorf("Prompt of a file alone = %q", got)
	}
}
