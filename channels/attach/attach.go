// Package attach handles the files people attach to their messages: which
// ones an adapter reads (small text files: a pasted log, a config; and
// images: a screenshot), how it reads them, and how they are written into
// the agent's prompt. Discord
// makes a long paste into a file (message.txt) and leaves the message's
// text empty, so without this the paste would never reach the agent.
package attach

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/tooldisplay"
)

// Limits on what goes into a prompt.
const (
	MaxFile   = 256 << 10 // one text file, at most
	MaxTotal  = 1 << 20   // all of one message's text files, at most
	MaxImage  = 5 << 20   // one image, at most
	MaxImages = 4         // images of one message, at most
	// MaxImageTotal bounds a message's images together: in base64 they
	// must leave the prompt's JSON-RPC line well under the 10 MiB that
	// agents built on the Go SDK read.
	MaxImageTotal = 6 << 20
)

// IsImage reports whether a file is an image agents take: PNG, JPEG, GIF
// or WebP, by its content type or, without one, its name.
func IsImage(name, contentType string) bool {
	if contentType != "" {
		mt, _, err := mime.ParseMediaType(contentType)
		return err == nil && imageTypes[mt]
	}
	switch strings.ToLower(path.Ext(name)) {
	case ".png", ".jpg", ".jpeg", ".gif", ".webp":
		return true
	}
	return false
}

var imageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// IsText reports whether a file is a text file worth putting into a
// prompt: its content type says text (or JSON, XML, YAML…), or, without a
// type, its name ends like a text file.
func IsText(name, contentType string) bool {
	if contentType != "" {
		mt, _, err := mime.ParseMediaType(contentType)
		if err != nil {
			return false
		}
		if strings.HasPrefix(mt, "text/") {
			return true
		}
		switch mt {
		case "application/json", "application/xml", "application/yaml", "application/x-yaml",
			"application/toml", "application/x-sh", "application/javascript", "application/sql":
			return true
		}
		return false
	}
	switch strings.ToLower(path.Ext(name)) {
	case ".txt", ".log", ".md", ".json", ".yaml", ".yml", ".toml", ".xml", ".csv", ".diff", ".patch",
		".go", ".py", ".js", ".ts", ".rs", ".java", ".c", ".h", ".cpp", ".sh", ".sql":
		return true
	}
	return false
}

// Reader reads the files of one message within the limits above.
type Reader struct {
	// Client fetches the files (required by Read; Take needs none).
	Client *http.Client
	// Request builds the request for a file, adding what the platform
	// needs (an Authorization header); nil means a plain GET of f.URL.
	Request func(ctx context.Context, f channels.File) (*http.Request, error)
	read    int // text bytes read so far, against MaxTotal
	images  int // images read so far, against MaxImages
	pixels  int // image bytes read so far, against MaxImageTotal
}

// Read fills in f.Text or f.Data, or f.Skipped with the reason it was
// left out. It fetches f when it is a small text file or an image: it
// blocks on I/O then, as long as ctx allows. The error, if any, is for
// the log; f says what the agent is told.
func (r *Reader) Read(ctx context.Context, f *channels.File) error {
	return r.take(f, func(limit int) ([]byte, error) { return r.fetch(ctx, f, limit) })
}

// ReadAll is Read for each of a message's files, on a copy of the slice.
// Errors (for the log) go to failed, except once ctx has ended.
func (r *Reader) ReadAll(ctx context.Context, files []channels.File, failed func(channels.File, error)) []channels.File {
	out := append([]channels.File(nil), files...)
	for i := range out {
		if err := r.Read(ctx, &out[i]); err != nil && ctx.Err() == nil {
			failed(out[i], err)
		}
	}
	return out
}

// Take is Read for a file whose bytes came with the message (the local
// web chat): the same checks and limits, no download.
func (r *Reader) Take(f *channels.File, data []byte) {
	f.Size = len(data)
	_ = r.take(f, func(int) ([]byte, error) { return data, nil })
}

// take applies the checks and limits to f, getting its bytes (at most
// limit+1 of them) from get. get sets f.Skipped and returns a nil body
// when it fails.
func (r *Reader) take(f *channels.File, get func(limit int) ([]byte, error)) error {
	if f.Text != "" || f.Data != nil || f.Skipped != "" {
		return nil
	}
	if IsImage(f.Name, f.ContentType) {
		return r.takeImage(f, get)
	}
	budget := MaxTotal - r.read
	switch {
	case !IsText(f.Name, f.ContentType):
		f.Skipped = "not a text or image file"
		return nil
	case f.Size > MaxFile:
		f.Skipped = "larger than 256 KiB"
		return nil
	case f.Size > budget:
		f.Skipped = "the message's files are larger than 1 MiB together"
		return nil
	}
	limit := min(budget, MaxFile)
	body, err := get(limit)
	switch {
	case err != nil || body == nil:
		return err
	case len(body) > limit:
		f.Skipped = "larger than 256 KiB"
		return nil
	case !utf8.Valid(body):
		f.Skipped = "not UTF-8 text"
		return nil
	case strings.TrimSpace(string(body)) == "":
		f.Skipped = "empty"
		return nil
	}
	r.read += len(body)
	f.Text = string(body)
	return nil
}

// takeImage takes image f, if it is small enough and the message has
// room for one more.
func (r *Reader) takeImage(f *channels.File, get func(limit int) ([]byte, error)) error {
	switch {
	case f.Size > MaxImage:
		f.Skipped = "larger than 5 MiB"
		return nil
	case r.images >= MaxImages:
		f.Skipped = "more than 4 images in one message"
		return nil
	case f.Size > MaxImageTotal-r.pixels:
		f.Skipped = "the message's images are larger than 6 MiB together"
		return nil
	}
	limit := min(MaxImage, MaxImageTotal-r.pixels)
	body, err := get(limit)
	switch {
	case err != nil || body == nil:
		return err
	case len(body) > MaxImage:
		f.Skipped = "larger than 5 MiB"
		return nil
	case len(body) > limit:
		f.Skipped = "the message's images are larger than 6 MiB together"
		return nil
	}
	// The bytes decide, not the name: agents reject a mislabelled image.
	mt, _, _ := mime.ParseMediaType(http.DetectContentType(body))
	if !imageTypes[mt] {
		f.Skipped = "not a PNG, JPEG, GIF or WebP image"
		return nil
	}
	r.images++
	r.pixels += len(body)
	f.ContentType, f.Data = mt, body
	return nil
}

// fetch downloads f, reading at most limit+1 bytes (so that the caller
// can tell it was longer). On failure it sets f.Skipped and returns a nil
// body, and an error for the log where there is one.
func (r *Reader) fetch(ctx context.Context, f *channels.File, limit int) ([]byte, error) {
	var req *http.Request
	var err error
	if r.Request != nil {
		req, err = r.Request(ctx, *f)
	} else {
		req, err = http.NewRequestWithContext(ctx, http.MethodGet, f.URL, nil)
	}
	if err != nil {
		f.Skipped = "its link is not valid"
		return nil, err
	}
	resp, err := r.Client.Do(req)
	if err != nil {
		f.Skipped = "it could not be downloaded"
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		f.Skipped = "it could not be downloaded (" + resp.Status + ")"
		return nil, errors.New(resp.Status)
	}
	if isHTML(resp.Header.Get("Content-Type")) && !isHTML(f.ContentType) {
		// A sign-in page instead of the file: Slack answers so when
		// the app lacks the files:read scope.
		f.Skipped = "it could not be downloaded (a web page came instead; the app may lack a permission)"
		return nil, errors.New("a web page came instead of the file")
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(limit)+1))
	if err != nil {
		f.Skipped = "it could not be downloaded"
		return nil, err
	}
	return body, nil
}

// Prompt returns text followed by the files: each text file as a fenced
// block under its name, each image read as a line saying it comes with
// the message (when the agent takes images: images is true), every other
// one as a line naming it, its type and size, why it was left out and its
// link. It also returns the images to send with the prompt, in order.
func Prompt(text string, files []channels.File, images bool) (string, []channels.File) {
	if len(files) == 0 {
		return text, nil
	}
	var b strings.Builder
	var sent []channels.File
	b.WriteString(text)
	for _, f := range files {
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		switch {
		case f.Text != "":
			fence := tooldisplay.Fence(f.Text, 3)
			fmt.Fprintf(&b, "Attached file %s:\n%s\n%s\n%s", f.Name, fence, strings.TrimRight(f.Text, "\n"), fence)
			continue
		case f.Data != nil && images:
			sent = append(sent, f)
			fmt.Fprintf(&b, "(Attached image %s, %s: image %d of this message.)", f.Name, describe(f), len(sent))
			continue
		}
		why := f.Skipped
		switch {
		case f.Data != nil:
			why = "this agent does not take images"
		case why == "":
			why = "not read"
		}
		fmt.Fprintf(&b, "(Attached file %s, %s, not included: %s.", f.Name, describe(f), why)
		if f.URL != "" {
			b.WriteString(" Link: " + f.URL)
		}
		b.WriteString(")")
	}
	return b.String(), sent
}

// describe is a file's type and size for people: "image/png, 12 KiB".
func describe(f channels.File) string {
	t := f.ContentType
	if t == "" {
		t = "unknown type"
	}
	switch {
	case f.Size >= 1<<20:
		return fmt.Sprintf("%s, %.1f MiB", t, float64(f.Size)/(1<<20))
	case f.Size >= 1<<10:
		return fmt.Sprintf("%s, %d KiB", t, f.Size>>10)
	default:
		return fmt.Sprintf("%s, %d bytes", t, f.Size)
	}
}

// isHTML reports whether a content type is HTML.
func isHTML(contentType string) bool {
	mt, _, _ := mime.ParseMediaType(contentType)
	return mt == "text/html"
}
