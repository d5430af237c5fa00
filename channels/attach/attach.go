// Package attach handles the files people attach to their messages: which
// ones an adapter reads (small text files: a pasted log, a config), how it
// reads them, and how they are written into the agent's prompt. Discord
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
)

// Limits on what goes into a prompt.
const (
	MaxFile  = 256 << 10 // one text file, at most
	MaxTotal = 1 << 20   // all of one message's text files, at most
)

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

// Reader reads the text files of one message within MaxTotal.
type Reader struct {
	// Client fetches the files (required).
	Client *http.Client
	// Request builds the request for a file, adding what the platform
	// needs (an Authorization header); nil means a plain GET of f.URL.
	Request func(ctx context.Context, f channels.File) (*http.Request, error)
	read    int // bytes read so far, against MaxTotal
}

// Read fills in f.Text, or f.Skipped with the reason it was left out. It
// fetches f when it is a small text file: it blocks on I/O then, as long
// as ctx allows. The error, if any, is for the log; f says what the agent
// is told.
func (r *Reader) Read(ctx context.Context, f *channels.File) error {
	budget := MaxTotal - r.read
	switch {
	case f.Text != "" || f.Skipped != "":
		return nil
	case !IsText(f.Name, f.ContentType):
		f.Skipped = "not a text file"
		return nil
	case f.Size > MaxFile:
		f.Skipped = "larger than 256 KiB"
		return nil
	case f.Size > budget:
		f.Skipped = "the message's files are larger than 1 MiB together"
		return nil
	}
	var req *http.Request
	var err error
	if r.Request != nil {
		req, err = r.Request(ctx, *f)
	} else {
		req, err = http.NewRequestWithContext(ctx, http.MethodGet, f.URL, nil)
	}
	if err != nil {
		f.Skipped = "its link is not valid"
		return err
	}
	resp, err := r.Client.Do(req)
	if err != nil {
		f.Skipped = "it could not be downloaded"
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		f.Skipped = "it could not be downloaded (" + resp.Status + ")"
		return errors.New(resp.Status)
	}
	if isHTML(resp.Header.Get("Content-Type")) && !isHTML(f.ContentType) {
		// A sign-in page instead of the file: Slack answers so when
		// the app lacks the files:read scope.
		f.Skipped = "it could not be downloaded (a web page came instead; the app may lack a permission)"
		return errors.New("a web page came instead of the file")
	}
	limit := min(budget, MaxFile)
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(limit)+1))
	switch {
	case err != nil:
		f.Skipped = "it could not be downloaded"
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

// Prompt returns text followed by the files: each text file as a fenced
// block under its name, every other one as a line naming it, its type
// and size, why it was left out and its link.
func Prompt(text string, files []channels.File) string {
	if len(files) == 0 {
		return text
	}
	var b strings.Builder
	b.WriteString(text)
	for _, f := range files {
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		if f.Text != "" {
			fence := fenceFor(f.Text)
			fmt.Fprintf(&b, "Attached file %s:\n%s\n%s\n%s", f.Name, fence, strings.TrimRight(f.Text, "\n"), fence)
			continue
		}
		why := f.Skipped
		if why == "" {
			why = "not read"
		}
		fmt.Fprintf(&b, "(Attached file %s, %s, not included: %s.", f.Name, describe(f), why)
		if f.URL != "" {
			b.WriteString(" Link: " + f.URL)
		}
		b.WriteString(")")
	}
	return b.String()
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

// fenceFor returns a code fence longer than any run of backticks in s, so
// the file's content cannot close it.
func fenceFor(s string) string {
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", max(3, longest+1))
}

// isHTML reports whether a content type is HTML.
func isHTML(contentType string) bool {
	mt, _, _ := mime.ParseMediaType(contentType)
	return mt == "text/html"
}
