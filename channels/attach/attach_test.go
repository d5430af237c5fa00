package attach

import (
	"bytes"
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
		{channels.File{Name: "song.mp3", ContentType: "audio/mpeg", Size: 10, URL: srv.URL + "/song.mp3"}, "", "not a text or image file", false},
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
	if got, imgs := Prompt("just text", nil, true); got != "just text" || imgs != nil {
		t.Errorf("Prompt without files = %q, %v", got, imgs)
	}
	shot := channels.File{Name: "shot.png", ContentType: "image/png", Size: 2048, URL: "https://cdn.example/shot.png", Data: pngBytes}
	files := []channels.File{
		{Name: "trace.txt", Text: "panic: boom\n```\ngoroutine 1\n"},
		shot,
		{Name: "huge.log", Size: 3 << 20, Skipped: "larger than 256 KiB"},
		{Name: "odd.bin", Size: 12},
	}
	head := "look at these\n\n" + "Attached file trace.txt:\n````\npanic: boom\n```\ngoroutine 1\n````\n\n"
	tail := "\n\n(Attached file huge.log, unknown type, 3.0 MiB, not included: larger than 256 KiB.)\n\n" +
		"(Attached file odd.bin, unknown type, 12 bytes, not included: not read.)"

	got, imgs := Prompt("look at these", files, true)
	if want := head + "(Attached image shot.png, image/png, 2 KiB: image 1 of this message.)" + tail; got != want {
		t.Errorf("Prompt for an agent that takes images =\n%s\nwant\n%s", got, want)
	}
	if len(imgs) != 1 || imgs[0].Name != "shot.png" || !bytes.Equal(imgs[0].Data, pngBytes) {
		t.Errorf("images = %+v, want the screenshot", imgs)
	}

	got, imgs = Prompt("look at these", files, false)
	if want := head + "(Attached file shot.png, image/png, 2 KiB, not included: this agent does not take images. Link: https://cdn.example/shot.png)" + tail; got != want {
		t.Errorf("Prompt for an agent without images =\n%s\nwant\n%s", got, want)
	}
	if imgs != nil {
		t.Errorf("images sent to an agent without images: %+v", imgs)
	}
	if got, _ := Prompt("", []channels.File{{Name: "message.txt", Text: "hi"}}, true); got != "Attached file message.txt:\n```\nhi\n```" {
		t.Errorf("Prompt of a file alone = %q", got)
	}
}

// pngBytes is the start of a PNG file: enough for its type to be sniffed.
var pngBytes = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")

func TestImages(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/shot.png":
			w.Write(pngBytes)
		case "/fake.png":
			w.Write([]byte("this is text, not a PNG"))
		case "/huge.png":
			w.Write(append(append([]byte{}, pngBytes...), make([]byte, MaxImage)...))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	img := func(name, contentType string, size int) channels.File {
		return channels.File{Name: name, ContentType: contentType, Size: size, URL: srv.URL + "/" + name}
	}
	ctx := context.Background()
	r := Reader{Client: srv.Client()}
	for _, tc := range []struct {
		f        channels.File
		wantData bool
		wantType string
		wantWhy  string
	}{
		{img("shot.png", "image/png", len(pngBytes)), true, "image/png", ""},
		{img("shot.png", "", len(pngBytes)), true, "image/png", ""}, // typed by its name, then by its bytes
		{img("fake.png", "image/png", 23), false, "image/png", "not a PNG, JPEG, GIF or WebP image"},
		{img("big.png", "image/png", MaxImage+1), false, "image/png", "larger than 5 MiB"},
		{img("huge.png", "image/png", 100), false, "image/png", "larger than 5 MiB"}, // understated size
		{img("shot.svg", "image/svg+xml", 10), false, "image/svg+xml", "not a text or image file"},
	} {
		f := tc.f
		r.Read(ctx, &f)
		if (f.Data != nil) != tc.wantData || f.ContentType != tc.wantType || f.Skipped != tc.wantWhy {
			t.Errorf("Read(%s, %q) = %d bytes, type %q, skipped %q; want data %v, %q, %q",
				tc.f.Name, tc.f.ContentType, len(f.Data), f.ContentType, f.Skipped, tc.wantData, tc.wantType, tc.wantWhy)
		}
	}
	// Four images per message: two were read above, two more fit. (And
	// at most MaxImageTotal bytes: below.)
	for i := range 3 {
		f := img("shot.png", "image/png", len(pngBytes))
		r.Read(ctx, &f)
		if want := i < 2; (f.Data != nil) != want {
			t.Errorf("image %d of the message read: %v, want %v (skipped %q)", i+3, f.Data != nil, want, f.Skipped)
		}
		if i == 2 && f.Skipped != "more than 4 images in one message" {
			t.Errorf("fifth image skipped %q", f.Skipped)
		}
	}
}

// A message's images together stay under MaxImageTotal, so that the
// prompt's line stays readable for agents on the Go SDK.
func TestImageTotal(t *testing.T) {
	big := append(append([]byte{}, pngBytes...), make([]byte, 4<<20)...)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(big) }))
	defer srv.Close()
	r := Reader{Client: srv.Client()}
	first := channels.File{Name: "a.png", ContentType: "image/png", Size: len(big), URL: srv.URL + "/a.png"}
	second := first
	understated := first
	understated.Size = 10
	r.Read(context.Background(), &first)
	r.Read(context.Background(), &second)
	r.Read(context.Background(), &understated)
	if first.Data == nil {
		t.Errorf("first 4 MiB image skipped: %q", first.Skipped)
	}
	for _, f := range []channels.File{second, understated} {
		if f.Data != nil || f.Skipped != "the message's images are larger than 6 MiB together" {
			t.Errorf("image beyond 6 MiB together: %d bytes read, skipped %q", len(f.Data), f.Skipped)
		}
	}
}

// Take applies Read's checks to bytes that came with the message.
func TestTake(t *testing.T) {
	var r Reader
	text := channels.File{Name: "notes.md", ContentType: "text/markdown"}
	r.Take(&text, []byte("# notes\n"))
	img := channels.File{Name: "shot.png"}
	r.Take(&img, pngBytes)
	bin := channels.File{Name: "a.out", ContentType: "application/octet-stream"}
	r.Take(&bin, []byte{0x7f, 'E', 'L', 'F'})
	big := channels.File{Name: "big.log"}
	r.Take(&big, make([]byte, MaxFile+1))
	switch {
	case text.Text != "# notes\n" || text.Size != 8:
		t.Errorf("text file = %+v", text)
	case !bytes.Equal(img.Data, pngBytes) || img.ContentType != "image/png":
		t.Errorf("image = %+v", img)
	case bin.Skipped != "not a text or image file":
		t.Errorf("binary skipped %q", bin.Skipped)
	case big.Skipped != "larger than 256 KiB":
		t.Errorf("big file skipped %q", big.Skipped)
	}
}
