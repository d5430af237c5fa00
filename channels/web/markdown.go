package web

import (
	"bytes"
	"strconv"
	"strings"
	"sync"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/util"
)

// Bounds of the Markdown renderer.
const (
	// maxHighlightBytes is the largest code block that is highlighted;
	// a larger one is shown plain, so that a huge paste costs no more
	// than escaping it.
	maxHighlightBytes = 64 << 10
	// maxLangBytes bounds the language name shown on a code block.
	maxLangBytes = 32
)

// chatMarkdown is the Markdown converter of the web chat: CommonMark with
// the GFM extensions (tables, task lists, strikethrough, autolinks), a
// line break for every newline (as people and agents write in a chat), and
// chatRenderer's rules for raw HTML, links, headings and code.
var chatMarkdown = goldmark.New(
	goldmark.WithExtensions(
		// extension.GFM with table alignment as an align attribute: the
		// page's Content-Security-Policy drops style attributes.
		extension.Linkify,
		extension.NewTable(extension.WithTableCellAlignMethod(extension.TableCellAlignAttribute)),
		extension.Strikethrough,
		extension.TaskList,
	),
	goldmark.WithRendererOptions(
		html.WithHardWraps(),
		renderer.WithNodeRenderers(util.Prioritized(chatRenderer{}, 100)),
	),
)

// renderBufs holds the buffers renderMarkdown renders into.
var renderBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// renderFor returns the HTML the page shows for a message of role with
// text: Markdown rendered for the gateway's messages (every kind: tool
// lines, notices and permission prompts use code spans and fences too),
// nothing for people's messages, which the page shows as written.
func renderFor(role, text string) string {
	if role == roleUser {
		return ""
	}
	return renderMarkdown(text)
}

// renderMarkdown renders the agent's Markdown text as HTML for the page.
// The result is safe to insert into the page as it is: raw HTML in text
// shows as text, links go only to http, https and mailto addresses (others
// are shown as text), images are links, headings start at <h3>, and code
// blocks carry their language, a copy button and chroma's token classes
// (see codeCSS). It never fails: text goldmark cannot render (it has no
// such input) is shown escaped.
func renderMarkdown(text string) string {
	b := renderBufs.Get().(*bytes.Buffer)
	defer renderBufs.Put(b)
	b.Reset()
	if err := chatMarkdown.Convert([]byte(text), b); err != nil {
		b.Reset()
		b.WriteString("<p>")
		b.WriteString(htmlText(text))
		b.WriteString("</p>\n")
	}
	return b.String()
}

// htmlText escapes s for HTML text and attribute values.
func htmlText(s string) string {
	return string(util.EscapeHTML([]byte(s)))
}

// chatRenderer renders the nodes where the web chat differs from
// goldmark's HTML renderer, which renders the rest.
type chatRenderer struct{}

func (chatRenderer) RegisterFuncs(r renderer.NodeRendererFuncRegisterer) {
	r.Register(ast.KindRawHTML, renderRawHTML)
	r.Register(ast.KindHTMLBlock, renderHTMLBlock)
	r.Register(ast.KindLink, renderLink)
	r.Register(ast.KindImage, renderImage)
	r.Register(ast.KindAutoLink, renderAutoLink)
	r.Register(ast.KindHeading, renderHeading)
	r.Register(ast.KindFencedCodeBlock, renderCode)
	r.Register(ast.KindCodeBlock, renderCode)
}

// renderRawHTML shows inline HTML as the text it is (goldmark would drop
// it silently).
func renderRawHTML(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if entering {
		w.Write(util.EscapeHTML(node.(*ast.RawHTML).Segments.Value(source)))
	}
	return ast.WalkSkipChildren, nil
}

// renderHTMLBlock shows a block of HTML as a paragraph of its text, lines
// kept (class raw-html).
func renderHTMLBlock(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkSkipChildren, nil
	}
	n := node.(*ast.HTMLBlock)
	var text []byte
	text = append(text, n.Lines().Value(source)...)
	if n.HasClosure() {
		text = append(text, n.ClosureLine.Value(source)...)
	}
	w.WriteString(`<p class="raw-html">`)
	w.Write(util.EscapeHTML(bytes.TrimRight(text, "\r\n")))
	w.WriteString("</p>\n")
	return ast.WalkSkipChildren, nil
}

// linkable reports whether a link may point to url: only absolute http,
// https and mailto addresses. It allows known schemes rather than refusing
// bad ones, so that nothing a browser would clean up into another scheme
// ("java\tscript:", " javascript:") passes.
func linkable(url []byte) bool {
	for _, p := range []string{"http://", "https://", "mailto:"} {
		if len(url) > len(p) && strings.EqualFold(string(url[:len(p)]), p) {
			return true
		}
	}
	return false
}

// openLink writes the start tag of a link to url, opening in a new tab.
func openLink(w util.BufWriter, url, title []byte) {
	w.WriteString(`<a href="`)
	w.Write(util.EscapeHTML(util.URLEscape(url, true)))
	w.WriteString(`"`)
	if len(title) > 0 {
		w.WriteString(` title="`)
		w.Write(util.EscapeHTML(title))
		w.WriteString(`"`)
	}
	w.WriteString(` target="_blank" rel="noopener noreferrer nofollow">`)
}

// renderLink renders a link to a safe address; any other shows its text
// only.
func renderLink(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*ast.Link)
	if !linkable(n.Destination) {
		return ast.WalkContinue, nil
	}
	if entering {
		openLink(w, n.Destination, n.Title)
	} else {
		w.WriteString("</a>")
	}
	return ast.WalkContinue, nil
}

// renderImage renders an image as a link to it with its description as
// the text: the page loads nothing from elsewhere.
func renderImage(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*ast.Image)
	if !linkable(n.Destination) {
		return ast.WalkContinue, nil
	}
	if entering {
		openLink(w, n.Destination, n.Title)
		if !n.HasChildren() {
			w.Write(util.EscapeHTML(n.Destination))
		}
	} else {
		w.WriteString("</a>")
	}
	return ast.WalkContinue, nil
}

// renderAutoLink renders <https://…>, a bare web address or an email
// address as a link.
func renderAutoLink(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*ast.AutoLink)
	url, label := n.URL(source), n.Label(source)
	if n.AutoLinkType == ast.AutoLinkEmail && !bytes.HasPrefix(bytes.ToLower(url), []byte("mailto:")) {
		url = append([]byte("mailto:"), url...)
	}
	if !linkable(url) {
		w.Write(util.EscapeHTML(label))
		return ast.WalkContinue, nil
	}
	openLink(w, url, nil)
	w.Write(util.EscapeHTML(label))
	w.WriteString("</a>")
	return ast.WalkContinue, nil
}

// renderHeading renders a heading two levels down (# is <h3>): the page
// has its own <h1> and <h2>.
func renderHeading(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	level := strconv.Itoa(min(node.(*ast.Heading).Level+2, 6))
	if entering {
		w.WriteString("<h" + level + ">")
	} else {
		w.WriteString("</h" + level + ">\n")
	}
	return ast.WalkContinue, nil
}

// renderCode renders a code block as
//
//	<div class="code"><div class="code-head"><span class="code-lang">go</span>
//	<button type="button" class="code-copy">Copy</button></div>
//	<pre class="chroma"><code>…</code></pre></div>
//
// with the code highlighted by chroma when the fence names a language it
// knows.
func renderCode(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkSkipChildren, nil
	}
	var lang string
	if n, ok := node.(*ast.FencedCodeBlock); ok {
		lang = string(n.Language(source))
		if len(lang) > maxLangBytes {
			lang = ""
		}
	}
	// The last newline ends the last line; copied, it would run a shell
	// command at once.
	code := bytes.TrimSuffix(node.Lines().Value(source), []byte("\n"))
	w.WriteString(`<div class="code"><div class="code-head"><span class="code-lang">`)
	w.Write(util.EscapeHTML([]byte(lang)))
	w.WriteString(`</span><button type="button" class="code-copy">Copy</button></div><pre class="chroma"><code>`)
	highlight(w, lang, code)
	w.WriteString("</code></pre></div>\n")
	return ast.WalkSkipChildren, nil
}

// highlight writes code as HTML, its tokens in spans of chroma's classes
// when lang names a language chroma knows, escaped text otherwise.
// Highlighting is slow (chroma's lexers are backtracking regular
// expressions, about 30 µs a line) and a streamed reply is rendered again
// on each edit with its earlier code blocks unchanged, so results are
// kept in highlighted.
func highlight(w util.BufWriter, lang string, code []byte) {
	var lexer chroma.Lexer
	if lang != "" && len(code) <= maxHighlightBytes {
		lexer = lexers.Get(lang)
	}
	if lexer == nil {
		w.Write(util.EscapeHTML(code))
		return
	}
	key := lang + "\x00" + string(code)
	if html, ok := highlighted.get(key); ok {
		w.WriteString(html)
		return
	}
	var b bytes.Buffer
	if !tokenize(&b, lexer, code) {
		w.Write(util.EscapeHTML(code))
		return
	}
	highlighted.put(key, b.String())
	w.Write(b.Bytes())
}

// tokenize writes code highlighted by lexer to b; false if the lexer
// failed.
func tokenize(b *bytes.Buffer, lexer chroma.Lexer, code []byte) bool {
	it, err := chroma.Coalesce(lexer).Tokenise(nil, string(code))
	if err != nil {
		return false
	}
	tokens := it.Tokens()
	// Lexers end the code with a newline of their own.
	if n := len(tokens); n > 0 && !bytes.HasSuffix(code, []byte("\n")) {
		tokens[n-1].Value = strings.TrimSuffix(tokens[n-1].Value, "\n")
	}
	for _, tok := range tokens {
		class := tokenClass(tok.Type)
		if !styledClasses[class] {
			class = "" // no colour to show
		}
		if class != "" {
			b.WriteString(`<span class="` + class + `">`)
		}
		b.Write(util.EscapeHTML([]byte(tok.Value)))
		if class != "" {
			b.WriteString("</span>")
		}
	}
	return true
}

// highlighted holds the HTML of recently highlighted code blocks.
var highlighted = highlightCache{max: maxHighlightCacheBytes}

// maxHighlightCacheBytes bounds the keys and values highlighted holds.
const maxHighlightCacheBytes = 4 << 20

// highlightCache maps a language and code to its highlighted HTML,
// forgetting the oldest entries beyond max bytes.
type highlightCache struct {
	max int

	mu    sync.Mutex // guards the fields below
	m     map[string]string
	order []string // keys, oldest first
	size  int
}

func (c *highlightCache) get(key string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	html, ok := c.m[key]
	return html, ok
}

func (c *highlightCache) put(key, html string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[string]string)
	}
	if _, ok := c.m[key]; ok || len(key)+len(html) > c.max {
		return
	}
	c.m[key] = html
	c.order = append(c.order, key)
	c.size += len(key) + len(html)
	for c.size > c.max {
		old := c.order[0]
		c.order = c.order[1:]
		c.size -= len(old) + len(c.m[old])
		delete(c.m, old)
	}
}

// reset forgets every entry (for benchmarks of the first rendering).
func (c *highlightCache) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m, c.order, c.size = nil, nil, 0
}

// whitespaceClass is chroma's class of whitespace tokens, left unmarked.
var whitespaceClass = chroma.StandardTypes[chroma.TextWhitespace]

// tokenClass returns chroma's CSS class of a token type, or of its nearest
// ancestor that has one; "" for plain text.
func tokenClass(t chroma.TokenType) string {
	for {
		if class, ok := chroma.StandardTypes[t]; ok {
			return class
		}
		if t == t.Parent() {
			return ""
		}
		t = t.Parent()
	}
}
