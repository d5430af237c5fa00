package web

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"strings"

	"github.com/acpgw/gateway/channels"
)

// sentFile is a file of a message, as the thread shows it: one a person
// attached, or one the gateway put there (Upload); an image has a small
// preview.
type sentFile struct {
	Name string `json:"name"`
	Type string `json:"type,omitempty"`
	Size int    `json:"size"`
	// Thumb is a preview of an image (PNG, JPEG or GIF) as a data: URL,
	// at most thumbSide pixels a side; absent for other files.
	Thumb string `json:"thumb,omitempty"`
	// URL is where a file the gateway put into the thread is
	// downloaded (under /api/files/); absent for people's files.
	URL string `json:"url,omitempty"`
}

const (
	// thumbSide is the longest side of a preview in pixels (shown at half
	// that, sharp on a phone's screen).
	thumbSide = 240
	// maxThumbPixels bounds the images a preview is made of: a small file
	// can claim a huge picture.
	maxThumbPixels = 24 << 20
	// maxThumbDecoded bounds the memory an image takes once decoded
	// (width × height × bytes a pixel, 16-bit channels counting double):
	// a 195 KB PNG of 5016×5016 16-bit pixels decodes to 192 MiB.
	maxThumbDecoded = 64 << 20
	// thumbDecoders is how many images are decoded at once, at most: each
	// may take maxThumbDecoded.
	thumbDecoders = 2
)

// decoding holds a slot for each image being decoded (thumbDecoders).
var decoding = make(chan struct{}, thumbDecoders)

// decodedBytes is how much memory the image described by cfg takes once
// decoded by the standard library, or -1 for a colour model it does not
// know (then it is not decoded).
func decodedBytes(cfg image.Config, format string, data []byte) int64 {
	var per int64
	switch cfg.ColorModel {
	case color.RGBA64Model, color.NRGBA64Model:
		per = 8
	case color.Gray16Model:
		per = 2
	case color.RGBAModel, color.NRGBAModel, color.CMYKModel:
		per = 4
	case color.YCbCrModel:
		per = 3 // 4:4:4 at most
	case color.GrayModel, color.AlphaModel:
		per = 1
	default:
		if _, ok := cfg.ColorModel.(color.Palette); !ok {
			return -1
		}
		per = 1
	}
	if format == "jpeg" && progressive(data) {
		// The decoder keeps every coefficient (4 bytes each) of every
		// component too.
		per += 4 * max(per, 1)
	}
	return int64(cfg.Width) * int64(cfg.Height) * per
}

// progressive reports whether the JPEG in data is progressive: its first
// start-of-frame marker is SOF2 (0xC2). It walks the marker segments;
// what it cannot read counts as progressive (the larger cost).
func progressive(data []byte) bool {
	i := 2 // after SOI
	for i+4 <= len(data) {
		if data[i] != 0xff {
			return true
		}
		marker := data[i+1]
		switch {
		case marker == 0xff:
			i++ // fill byte
			continue
		case marker >= 0xd0 && marker <= 0xd9 || marker == 0x01:
			i += 2 // no length
			continue
		case marker == 0xc2:
			return true
		case marker >= 0xc0 && marker <= 0xcf && marker != 0xc4 && marker != 0xc8 && marker != 0xcc:
			return false
		}
		i += 2 + (int(data[i+2])<<8 | int(data[i+3]))
	}
	return true
}

// sentFiles returns the files of a message as the thread shows them.
func sentFiles(files []channels.File) []sentFile {
	if len(files) == 0 {
		return nil
	}
	out := make([]sentFile, len(files))
	for i, f := range files {
		out[i] = sentFile{Name: f.Name, Type: f.ContentType, Size: f.Size}
		if f.Data != nil {
			out[i].Thumb, _ = thumbnail(f.Data)
		}
	}
	return out
}

// thumbnail returns a preview of the image in data as a data: URL: a
// JPEG, or a PNG for an image with transparency. It fails for what is not
// a PNG, JPEG or GIF image, is larger than maxThumbPixels or would take
// more than maxThumbDecoded bytes decoded. It decodes after its header
// says the size, and at most thumbDecoders images at once (it waits for
// a slot).
func thumbnail(data []byte) (string, error) {
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return "", err
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width*cfg.Height > maxThumbPixels {
		return "", errors.New("image too large for a preview")
	}
	if n := decodedBytes(cfg, format, data); n < 0 || n > maxThumbDecoded {
		return "", fmt.Errorf("image too large for a preview: %d×%d pixels would take %d bytes decoded, more than %d", cfg.Width, cfg.Height, n, maxThumbDecoded)
	}
	decoding <- struct{}{}
	defer func() { <-decoding }()
	var src image.Image
	switch format {
	case "png":
		src, err = png.Decode(bytes.NewReader(data))
	case "jpeg":
		src, err = jpeg.Decode(bytes.NewReader(data))
	case "gif":
		src, err = gif.Decode(bytes.NewReader(data))
	default:
		return "", errors.New("no preview for " + format)
	}
	if err != nil {
		return "", err
	}
	small, alpha := shrink(src, thumbSide)
	var b bytes.Buffer
	kind := "jpeg"
	if alpha {
		kind = "png"
		err = png.Encode(&b, small)
	} else {
		err = jpeg.Encode(&b, small, &jpeg.Options{Quality: 80})
	}
	if err != nil {
		return "", err
	}
	return "data:image/" + kind + ";base64," + base64.StdEncoding.EncodeToString(b.Bytes()), nil
}

// shrink scales src down to at most side pixels a side, each pixel the
// average of the pixels it covers, and reports whether any is not opaque.
func shrink(src image.Image, side int) (*image.NRGBA, bool) {
	r := src.Bounds()
	w, h := r.Dx(), r.Dy()
	tw, th := w, h
	if w > side || h > side {
		if w >= h {
			tw, th = side, max(1, h*side/w)
		} else {
			tw, th = max(1, w*side/h), side
		}
	}
	dst := image.NewNRGBA(image.Rect(0, 0, tw, th))
	alpha := false
	for y := range th {
		y0, y1 := r.Min.Y+y*h/th, r.Min.Y+max((y+1)*h/th, y*h/th+1)
		for x := range tw {
			x0, x1 := r.Min.X+x*w/tw, r.Min.X+max((x+1)*w/tw, x*w/tw+1)
			// Sample at most 4×4 pixels of the area: enough for a preview.
			var sr, sg, sb, sa, n uint64
			for sy := y0; sy < y1; sy += max(1, (y1-y0)/4) {
				for sx := x0; sx < x1; sx += max(1, (x1-x0)/4) {
					c := color.NRGBA64Model.Convert(src.At(sx, sy)).(color.NRGBA64)
					sr, sg, sb, sa, n = sr+uint64(c.R), sg+uint64(c.G), sb+uint64(c.B), sa+uint64(c.A), n+1
				}
			}
			c := color.NRGBA{uint8(sr / n >> 8), uint8(sg / n >> 8), uint8(sb / n >> 8), uint8(sa / n >> 8)}
			if c.A != 0xff {
				alpha = true
			}
			dst.SetNRGBA(x, y, c)
		}
	}
	return dst, alpha
}

// validThumb reports whether s is a preview thumbnail makes (a state
// file's message may carry only these).
func validThumb(s string) bool {
	return s == "" || strings.HasPrefix(s, "data:image/jpeg;base64,") || strings.HasPrefix(s, "data:image/png;base64,")
}
