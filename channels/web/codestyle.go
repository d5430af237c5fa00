package web

import (
	"bytes"
	"cmp"
	"maps"
	"slices"
	"strings"

	"github.com/alecthomas/chroma/v2"
	chromahtml "github.com/alecthomas/chroma/v2/formatters/html"
	"github.com/alecthomas/chroma/v2/styles"
)

// codeCSSMarker is the line of page.html that withCodeCSS replaces with
// codeCSS.
var codeCSSMarker = []byte("/* code colours: codeCSS in codestyle.go */")

// withCodeCSS returns the page with the colours of highlighted code filled
// in. It panics when the page has no marker: page.html is embedded, so a
// test finds that at once.
func withCodeCSS(page []byte) []byte {
	if !bytes.Contains(page, codeCSSMarker) {
		panic("web: page.html has no " + string(codeCSSMarker))
	}
	return bytes.Replace(page, codeCSSMarker, []byte(codeCSS()), 1)
}

// codeCSS returns the CSS of chroma's token classes (see highlight):
// chroma's github style in a light colour scheme and github-dark in a dark
// one. The code block's background is the page's; classes with the same
// look share one rule.
func codeCSS() string {
	var b strings.Builder
	for _, s := range []struct{ scheme, style string }{{"light", "github"}, {"dark", "github-dark"}} {
		b.WriteString("@media (prefers-color-scheme: " + s.scheme + ") {\n")
		style := styles.Get(s.style)
		bg := style.Get(chroma.Background)
		if text := style.Get(chroma.Text); text.Colour.IsSet() {
			b.WriteString(".chroma { color: " + text.Colour.String() + "; }\n")
		}
		rules := map[string][]string{} // declarations → classes
		for t, class := range chroma.StandardTypes {
			if class == "" || class == whitespaceClass || t < 0 {
				continue // plain text, and the formatter's own classes (lines, numbers)
			}
			entry := style.Get(t).Sub(bg)
			if entry.IsZero() {
				continue
			}
			decl := chromahtml.StyleEntryToCSS(entry)
			rules[decl] = append(rules[decl], ".chroma ."+class)
		}
		for _, decl := range slices.SortedFunc(maps.Keys(rules), func(a, b string) int {
			return cmp.Compare(slices.Min(rules[a]), slices.Min(rules[b]))
		}) {
			sels := rules[decl]
			slices.Sort(sels)
			b.WriteString(strings.Join(sels, ",") + " { " + decl + "; }\n")
		}
		b.WriteString("}\n")
	}
	return b.String()
}
