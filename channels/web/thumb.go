package web

import (
	"bytes"
	"encoding/base64"
	"errors"
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
)

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
// a PNG, JPEG or GIF image, or is larger than maxThumbPixels.
func thumbnail(data []byte) (string, error) {
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return "", err
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width*cfg.Height > maxThumbPixels {
		return "", errors.New("image too large for a preview")
	}
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
