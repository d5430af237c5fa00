package dispatch

import (
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/projector"
)

// maxImageBytes bounds the file an image link names that the lane reads
// (the platform's upload limit is checked after, by File).
const maxImageBytes = 25 << 20

// image puts the agent's picture into the thread as a file (File), in
// order with the outputs before it: its bytes, or those of the local
// file its link names (Options.ReadFile). Only bytes that are a PNG,
// JPEG, GIF or WebP image are shown, whatever type the agent claims (an
// SVG could carry script); anything else, and a link that cannot be
// read, is logged and left out.
func (l *Lane) image(now time.Time, img projector.Image) {
	data := img.Data
	if img.Path != "" {
		if l.readFile == nil {
			return
		}
		var err error
		if data, err = l.readFile(img.Path); err != nil {
			l.log.Info("an image the agent linked to cannot be shown", "thread", l.thread, "path", img.Path, "err", err)
			return
		}
	}
	if len(data) > maxImageBytes {
		l.log.Info("an image of the agent is too large to show", "thread", l.thread, "name", img.Name, "bytes", len(data))
		return
	}
	typ := http.DetectContentType(data)
	ext, ok := imageTypes[typ]
	if !ok {
		l.log.Info("an image of the agent is no PNG, JPEG, GIF or WebP; not shown", "thread", l.thread, "name", img.Name, "claimed", img.MimeType, "sniffed", typ)
		return
	}
	name := channels.ShowName(img.Name)
	if e := strings.ToLower(path.Ext(name)); e != ext && !(ext == ".jpg" && e == ".jpeg") {
		name = strings.TrimSuffix(name, path.Ext(name)) + ext
	}
	l.File(now, channels.Upload{Name: name, ContentType: typ, Data: data})
}

// imageTypes are the sniffed types of the pictures the lane shows, with
// their extensions.
var imageTypes = map[string]string{
	"image/png":  ".png",
	"image/jpeg": ".jpg",
	"image/gif":  ".gif",
	"image/webp": ".webp",
}
