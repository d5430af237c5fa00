package projector

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/url"
	"path"
	"strings"
)

// Image is a picture the agent showed, to put into the thread once, as a
// file, in order with the text: an image block of its reply or of a
// tool's content, or a resource link to an image file. The lane checks
// its bytes (an image the platforms show: PNG, JPEG, GIF or WebP) and
// the platform's upload limit.
type Image struct {
	// Name is the file name people see: the link's name or file name, or
	// image-N with the type's extension.
	Name string
	// MimeType is the agent's word for the type.
	MimeType string
	// Data is the picture's bytes (from the block's base64); nil for a
	// link.
	Data []byte
	// Path is the local file a file: link names (absolute); "" for data.
	// Links to anything but a local file (http, say) are not followed:
	// the gateway fetches nothing an agent names.
	Path string
}

// maxTurnImages bounds the pictures one turn shows; an agent that sends
// more gets the first ones shown.
const maxTurnImages = 10

// image emits b, a picture of the running turn, unless the turn showed
// it already (a tool's content is sent again with each update), it
// cannot be read (bad base64, a link that is no local file), or the turn
// showed maxTurnImages.
func (p *Projector) image(b ImageBlock, out []Output) []Output {
	if !p.inTurn || !b.Known() || !p.visible[TagAgentMessageChunk] {
		return out
	}
	t := &p.turn
	img := Image{MimeType: b.MimeType}
	var key [sha256.Size]byte
	if b.Data != "" {
		data, err := base64.StdEncoding.DecodeString(strings.TrimSpace(b.Data))
		if err != nil || len(data) == 0 {
			return out
		}
		img.Data = data
		key = sha256.Sum256(data)
	} else {
		u, err := url.Parse(b.URI)
		if err != nil || u.Scheme != "file" || (u.Host != "" && u.Host != "localhost") || !path.IsAbs(u.Path) {
			return out
		}
		img.Path = path.Clean(u.Path)
		key = sha256.Sum256([]byte("file:" + img.Path))
		img.Name = path.Base(img.Path)
	}
	if t.images == nil {
		t.images = map[[sha256.Size]byte]bool{}
	}
	if t.images[key] || len(t.images) >= maxTurnImages {
		return out
	}
	t.images[key] = true
	if b.Name != "" {
		img.Name = path.Base(b.Name)
	}
	if img.Name == "" || img.Name == "." || img.Name == "/" {
		img.Name = fmt.Sprintf("image-%d%s", len(t.images), imageExt(b.MimeType))
	}
	out = p.flushDeferred(out)
	return append(out, img)
}

// toolImages emits the pictures of a tool update's content.
func (p *Projector) toolImages(u *Update, out []Output) []Output {
	for _, c := range u.Tool.Content {
		if c.Image.Known() {
			out = p.image(c.Image, out)
		}
	}
	return out
}

// imageExt is the file extension of an image's media type.
func imageExt(mime string) string {
	switch strings.ToLower(mime) {
	case "image/jpeg", "image/jpg":
		return ".jpg"
	case "image/gif":
		return ".gif"
	case "image/webp":
		return ".webp"
	}
	return ".png"
}

func (Image) isOutput() {}
