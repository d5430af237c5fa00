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

// codeStyles are chroma's styles the page uses, for a light and a dark
// colour scheme.
var codeStyles = []struct{ scheme, style string }{{"light", "github"}, {"dark", "github-dark"}}

// codeCSS returns the CSS of chroma's token classes (see highlight):
// chroma's github style in a light colour scheme and github-dark in a dark
// one. The code block's background is the page's; classes with the same
// look share one rule.
func codeCSS() string {
	var b strings.Builder
	for _, s := range codeStyles {
		b.WriteString("@media (prefers-color-scheme: " + s.scheme + ") {\n")
		style := styles.Get(s.style)
		if text := style.Get(chroma.Text); text.Colour.IsSet() {
			b.WriteString(".chroma { color: " + text.Colour.String() + "; }\n")
		}
		rules := styleRules(style)
		for _, decl := range slices.SortedFunc(maps.Keys(rules), func(a, b string) int {
			return cmp.Compare(slices.Min(rules[a]), slices.Min(rules[b]))
		}) {
			sels := rules[decl]
			slices.Sort(sels)
			for i, class := range sels {
				sels[i] = ".chroma ." + class
			}
			b.WriteString(strings.Join(sels, ",") + " { " + decl + "; }\n")
		}
		b.WriteString("}\n")
	}
	return b.String()
}

// styleRules returns the CSS declarations of style's token classes, each
// with the classes that have it.
func styleRules(style *chroma.Style) map[string][]string {
	bg := style.Get(chroma.Background)
	rules := map[string][]string{}
	for t, class := range chroma.StandardTypes {
		if class == "" || class == whitespaceClass || t < 0 {
			continue // plain text, and the formatter's own classes (lines, numbers)
		}
		entry := style.Get(t).Sub(bg)
		if entry.IsZero() {
			continue
		}
		decl := chromahtml.StyleEntryToCSS(entry)
		rules[decl] = append(rules[decl], class)
	}
	return rules
}

// styledClasses are the token classes some code style colours: highlight
// marks only these, the others would just make the HTML longer.
var styledClasses = func() map[string]bool {
	set := map[string]bool{}
	for _, s := range codeStyles {
		for _, classes := range styleRules(styles.Get(s.style)) {
			for _, c := range classes {
				set[c] = true
			}
		}
	}
	return set
}()
