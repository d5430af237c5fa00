package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"net/http"
	"regexp"
	"strings"
)

// pageFiles are the chat page's sources: page.html, the markup, names
// the files that go into its one inline <style> (page.css) and its one
// inline <script> (page-core.js and page-widgets.js, the two halves of
// one function), each on a line of its own. The page has no external
// resources.
//
//go:embed page.html page.css page-core.js page-widgets.js
var pageFiles embed.FS

// pageSource is the whole chat page: markup, inline CSS and vanilla
// JavaScript.
var pageSource = assemblePage(pageFiles, "page.html")

// pageHTML is the page as served: pageSource with the colours of
// highlighted code filled in.
var pageHTML = withCodeCSS(pageSource)

// includeLine is a line of page.html that stands for a file's text:
// "/* include page.css */" in the style, "// include page-core.js" in
// the script.
var includeLine = regexp.MustCompile(`(?m)^(?:/\* include (\S+) \*/|// include (\S+))\n`)

// assemblePage returns the file name of fsys with each include line
// replaced by the file it names. It panics when a file is missing: they
// are embedded, so a test finds that at once.
func assemblePage(fsys embed.FS, name string) []byte {
	page, err := fsys.ReadFile(name)
	if err != nil {
		panic("web: " + err.Error())
	}
	return includeLine.ReplaceAllFunc(page, func(line []byte) []byte {
		m := includeLine.FindSubmatch(line)
		f, err := fsys.ReadFile(string(bytes.Join(m[1:], nil)))
		if err != nil {
			panic("web: page.html includes " + err.Error())
		}
		return f
	})
}

// pageCSP allows exactly the page's own inline script and style (by hash)
// and requests to its own origin.
var pageCSP = contentSecurityPolicy(pageHTML)

func (s *server) page(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", pageCSP)
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Frame-Options", "DENY")
	w.Write(pageHTML)
}

var (
	inlineScript = regexp.MustCompile(`(?s)<script>(.*?)</script>`)
	inlineStyle  = regexp.MustCompile(`(?s)<style>(.*?)</style>`)
)

// contentSecurityPolicy builds the page's policy from the hashes of its
// inline <script> and <style> elements.
func contentSecurityPolicy(page []byte) string {
	hashes := func(re *regexp.Regexp) string {
		var out []string
		for _, m := range re.FindAllSubmatch(page, -1) {
			sum := sha256.Sum256(m[1])
			out = append(out, "'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'")
		}
		return strings.Join(out, " ")
	}
	return strings.Join([]string{
		"default-src 'none'",
		"script-src " + hashes(inlineScript),
		"style-src " + hashes(inlineStyle),
		"connect-src 'self'",
		"img-src 'self' data:",
		"base-uri 'none'",
		"form-action 'none'",
		"frame-ancestors 'none'",
	}, "; ")
}
