package web

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/png"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/acpgw/gateway/channels"
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
	f.Add(png16(f, 4, 3))
	f.Add([]byte("\xff\xd8\xff\xc2\x00\x0b\x08\x00\x10\x00\x10\x01\x01\x11\x00"))
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

// png16 returns a valid w×h PNG of 16-bit RGBA pixels, all black: a few
// hundred KB on the wire for what decodes to w×h×8 bytes.
func png16(t testing.TB, w, h int) []byte {
	t.Helper()
	var idat bytes.Buffer
	z, err := zlib.NewWriterLevel(&idat, zlib.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	row := make([]byte, 1+w*8) // filter byte 0, then the pixels
	for range h {
		z.Write(row)
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	chunk := func(b []byte, kind string, data []byte) []byte {
		b = binary.BigEndian.AppendUint32(b, uint32(len(data)))
		start := len(b)
		b = append(b, kind...)
		b = append(b, data...)
		return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b[start:]))
	}
	ihdr := binary.BigEndian.AppendUint32(nil, uint32(w))
	ihdr = binary.BigEndian.AppendUint32(ihdr, uint32(h))
	ihdr = append(ihdr, 16, 6, 0, 0, 0) // 16 bits a channel, RGBA
	b := []byte("\x89PNG\r\n\x1a\n")
	b = chunk(b, "IHDR", ihdr)
	b = chunk(b, "IDAT", idat.Bytes())
	return chunk(b, "IEND", nil)
}

// TestUploadHugeDecodedImage: a 16-bit PNG of 5016×5016 pixels, small on
// the wire but 192 MiB decoded, is kept and shown as a file without a
// preview, and is never decoded.
func TestUploadHugeDecodedImage(t *testing.T) {
	data := png16(t, 5016, 5016)
	if len(data) > 1<<20 {
		t.Fatalf("the test image has %d bytes, want a small one", len(data))
	}
	if cfg, err := png.DecodeConfig(bytes.NewReader(data)); err != nil || cfg.ColorModel != color.NRGBA64Model {
		t.Fatalf("the test image: %+v, %v; want a 16-bit PNG", cfg, err)
	}
	a := New(Options{FilesDir: t.TempDir()})
	id := a.st.mustCreate("t").ID
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := a.Upload(t.Context(), ref(id), channels.Upload{Name: "huge.png", Data: data}); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	msgs, _, _ := a.st.messages(id)
	m := msgs[len(msgs)-1]
	if len(m.Files) != 1 || m.Files[0].URL == "" || m.Files[0].Size != len(data) {
		t.Fatalf("message %+v, want the file kept and linked", m)
	}
	if m.Files[0].Thumb != "" {
		t.Errorf("the image got a preview; want none for an image of 192 MiB decoded")
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 32<<20 {
		t.Errorf("the upload allocated %d MiB, want it not decoded", n>>20)
	}
	// Under the bound a 16-bit image still gets its preview.
	if url, err := thumbnail(png16(t, 300, 200)); err != nil || url == "" {
		t.Errorf("thumbnail of a small 16-bit PNG = %.40q, %v; want a preview", url, err)
	}
}

// TestThumbnailsDecodeTwoAtOnce: while thumbDecoders images are being
// decoded, another waits for one of them to finish before it is decoded.
func TestThumbnailsDecodeTwoAtOnce(t *testing.T) {
	img := testPNG(t, 64, 32, 255)
	synctest.Test(t, func(t *testing.T) {
		old := decoding
		decoding = make(chan struct{}, thumbDecoders) // of this bubble
		defer func() { decoding = old }()
		for range thumbDecoders {
			decoding <- struct{}{} // images being decoded
		}
		done := make(chan string, 1)
		go func() {
			s, _ := thumbnail(img)
			done <- s
		}()
		synctest.Wait()
		select {
		case <-done:
			t.Fatalf("a preview was decoded while %d others were", thumbDecoders)
		default:
		}
		<-decoding // one of them ends
		if s := <-done; !strings.HasPrefix(s, "data:image/") {
			t.Errorf("the waiting preview is %q", s)
		}
	})
}
