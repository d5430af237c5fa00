package web

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/png"
	"strings"
	"testing"
)

// testPNG returns a w×h PNG: red on the left half, blue on the right,
// with alpha a.
func testPNG(t testing.TB, w, h int, a uint8) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			c := color.NRGBA{R: 255, A: a}
			if x >= w/2 {
				c = color.NRGBA{B: 255, A: a}
			}
			img.SetNRGBA(x, y, c)
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func decodeThumb(t *testing.T, url string) image.Image {
	t.Helper()
	_, b64, ok := strings.Cut(url, ";base64,")
	if !ok {
		t.Fatalf("thumb %.40q is not a base64 data: URL", url)
	}
	data, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatal(err)
	}
	img, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func TestThumbnail(t *testing.T) {
	url, err := thumbnail(testPNG(t, 600, 400, 255))
	if err != nil || !strings.HasPrefix(url, "data:image/jpeg;base64,") {
		t.Fatalf("thumbnail of an opaque PNG = %.40q, %v; want a JPEG", url, err)
	}
	img := decodeThumb(t, url)
	if got := img.Bounds().Size(); got != image.Pt(240, 160) {
		t.Errorf("preview of 600×400 is %v, want 240×160", got)
	}
	if r, _, b, _ := img.At(10, 80).RGBA(); r < 0xe000 || b > 0x2000 {
		t.Errorf("left of the preview is not red")
	}
	if r, _, b, _ := img.At(230, 80).RGBA(); b < 0xe000 || r > 0x2000 {
		t.Errorf("right of the preview is not blue")
	}

	url, err = thumbnail(testPNG(t, 50, 30, 128))
	if err != nil || !strings.HasPrefix(url, "data:image/png;base64,") {
		t.Fatalf("thumbnail of a translucent PNG = %.40q, %v; want a PNG", url, err)
	}
	if got := decodeThumb(t, url).Bounds().Size(); got != image.Pt(50, 30) {
		t.Errorf("preview of a small image is %v, want it as it is (50×30)", got)
	}

	for name, data := range map[string][]byte{
		"not an image": []byte("hello"),
		"a huge claim": pngHeader(100000, 100000),
		"cut short":    testPNG(t, 40, 40, 255)[:60],
	} {
		if url, err := thumbnail(data); err == nil {
			t.Errorf("%s: thumbnail = %.40q, want an error", name, url)
		}
	}
}

// pngHeader is the start of a PNG claiming w×h pixels.
func pngHeader(w, h uint32) []byte {
	b := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR")
	b = binary.BigEndian.AppendUint32(b, w)
	b = binary.BigEndian.AppendUint32(b, h)
	b = append(b, 8, 6, 0, 0, 0)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b[12:]))
}

// FuzzThumbnail: any bytes give a preview no larger than thumbSide a
// side, or an error; never a panic.
func FuzzThumbnail(f *testing.F) {
	f.Add(testPNG(f, 30, 20, 255))
	f.Add(pngHeader(5, 5))
	f.Fuzz(func(t *testing.T, data []byte) {
		url, err := thumbnail(data)
		if err != nil {
			return
		}
		if got := decodeThumb(t, url).Bounds().Size(); got.X > thumbSide || got.Y > thumbSide || got.X < 1 || got.Y < 1 {
			t.Errorf("preview %v", got)
		}
	})
}
