package web

import (
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"net/http"
	"regexp"
	"strings"
)

// pageSource is the whole chat page: markup, inline CSS and vanilla
// JavaScript, no external resources.
//
//go:embed page.html
var pageSource []byte

// pageHTML is the page as served: pageSource with the colours of
// highlighted code filled in.
var pageHTML = withCodeCSS(pageSource)

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
