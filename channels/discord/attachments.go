package discord

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"
)

// Attachments. Discord turns a long paste into a file (message.txt) and
// leaves the message's text empty, so a log pasted for the agent would be
// lost without this. Small text files are put into the prompt as fenced
// blocks; any other file is named with its link, so the agent knows it
// is there.
const (
	maxInlineFile  = 256 << 10 // one text file put into the prompt, at most
	maxInlineTotal = 1 << 20   // all of a message's text files, at most
	fetchTimeout   = 15 * time.Second
)

// file is an attachment of an incoming message.
type file struct {
	name        string
	url         string
	contentType string
	size        int
}

// readFiles returns the attachments of m that can be read.
func readFiles(m *discordgo.Message) []file {
	var out []file
	for _, at := range m.Attachments {
		if at == nil || at.URL == "" {
			continue
		}
		name := at.Filename
		if name == "" {
			name = path.Base(at.URL)
		}
		out = append(out, file{name: name, url: at.URL, contentType: at.ContentType, size: at.Size})
	}
	return out
}

// isText reports whether f is a text file worth putting into a prompt:
// its content type says text (or JSON, XML, YAML…), or, without a type,
// its name ends like a text file.
func (f file) isText() bool {
	if f.contentType != "" {
		mt, _, err := mime.ParseMediaType(f.contentType)
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
	switch strings.ToLower(path.Ext(f.name)) {
	case ".txt", ".log", ".md", ".json", ".yaml", ".yml", ".toml", ".xml", ".csv", ".diff", ".patch",
		".go", ".py", ".js", ".ts", ".rs", ".java", ".c", ".h", ".cpp", ".sh", ".sql":
		return true
	}
	return false
}

// withFiles returns text followed by in's attachments: small text files
// inline, others as a line with their link. It fetches the text files
// (blocks on I/O, at most fetchTimeout each).
func (a *Adapter) withFiles(ctx context.Context, text string, files []file) string {
	if len(files) == 0 {
		return text
	}
	var b strings.Builder
	b.WriteString(text)
	budget := maxInlineTotal
	for _, f := range files {
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		body, why := a.fetchText(ctx, f, budget)
		if why != "" {
			fmt.Fprintf(&b, "(Attached file %s, %s, not included: %s. Link: %s)", f.name, describeFile(f), why, f.url)
			continue
		}
		budget -= len(body)
		fence := fenceFor(body)
		fmt.Fprintf(&b, "Attached file %s:\n%s\n%s\n%s", f.name, fence, strings.TrimRight(body, "\n"), fence)
	}
	return b.String()
}

// fetchText downloads text file f when it may go into the prompt, with
// at most budget bytes. It returns why not otherwise.
func (a *Adapter) fetchText(ctx context.Context, f file, budget int) (string, string) {
	switch {
	case !f.isText():
		return "", "not a text file"
	case f.size > maxInlineFile:
		return "", "larger than 256 KiB"
	case f.size > budget:
		return "", "the message's files are larger than 1 MiB together"
	}
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.url, nil)
	if err != nil {
		return "", "its link is not valid"
	}
	// A plain client: the bot token never goes to the file's host.
	resp, err := (&http.Client{Transport: a.http}).Do(req)
	if err != nil {
		a.log.Warn("discord: cannot fetch an attachment", "file", f.name, "err", err)
		return "", "it could not be downloaded"
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		a.log.Warn("discord: cannot fetch an attachment", "file", f.name, "status", resp.Status)
		return "", "it could not be downloaded (" + resp.Status + ")"
	}
	limit := min(budget, maxInlineFile)
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(limit)+1))
	switch {
	case err != nil && !errors.Is(err, io.EOF):
		a.log.Warn("discord: cannot fetch an attachment", "file", f.name, "err", err)
		return "", "it could not be downloaded"
	case len(body) > limit:
		return "", "larger than 256 KiB"
	case !utf8.Valid(body):
		return "", "not UTF-8 text"
	}
	return string(body), ""
}

// describeFile is a file's type and size for people: "image/png, 12 KiB".
func describeFile(f file) string {
	t := f.contentType
	if t == "" {
		t = "unknown type"
	}
	switch {
	case f.size >= 1<<20:
		return fmt.Sprintf("%s, %.1f MiB", t, float64(f.size)/(1<<20))
	case f.size >= 1<<10:
		return fmt.Sprintf("%s, %d KiB", t, f.size>>10)
	default:
		return fmt.Sprintf("%s, %d bytes", t, f.size)
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
