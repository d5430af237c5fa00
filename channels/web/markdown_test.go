package web

import (
	"bytes"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/acpgw/gateway/channels"
)

// mdLink is the start tag renderMarkdown writes for a link to url.
func mdLink(url string) string {
	return `<a href="` + url + `" target="_blank" rel="noopener noreferrer nofollow">`
}

func TestRenderMarkdown(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string // in the output, in this order
		not  []string // nowhere in the output
	}{
		{
			name: "table",
			in:   "| Package | Tests |\n|---|---:|\n| `projector` | 42 |\n| `dispatch` | 37 |\n",
			want: []string{"<table>\n<thead>\n<tr>\n<th>Package</th>\n<th align=\"right\">Tests</th>", "<td><code>projector</code></td>\n<td align=\"right\">42</td>", "<td align=\"right\">37</td>", "</table>"},
			not:  []string{"|", "style="},
		},
		{
			name: "task list",
			in:   "- [x] Reproduce\n- [ ] Ship it\n",
			want: []string{`<li><input checked="" disabled="" type="checkbox"> Reproduce</li>`, `<li><input disabled="" type="checkbox"> Ship it</li>`},
		},
		{
			name: "nested lists",
			in:   "1. one\n   - a\n   - b\n2. two\n",
			want: []string{"<ol>\n<li>one\n<ul>\n<li>a</li>\n<li>b</li>\n</ul>\n</li>\n<li>two</li>\n</ol>"},
		},
		{
			name: "a quote of two lines is one quote",
			in:   "> A quote, because agents like to quote.\n> It spans two lines.\n",
			want: []string{"<blockquote>\n<p>A quote, because agents like to quote.<br>\nIt spans two lines.</p>\n</blockquote>"},
		},
		{
			name: "strikethrough",
			in:   "~~gone~~ and ~kept~\n",
			want: []string{"<del>gone</del>"},
		},
		{
			name: "autolinks",
			in:   "see https://example.com/a?b=1&c=2, <https://x.org> and www.example.com or ann@example.com\n",
			want: []string{
				mdLink("https://example.com/a?b=1&amp;c=2") + "https://example.com/a?b=1&amp;c=2</a>,",
				mdLink("https://x.org") + "https://x.org</a>",
				mdLink("http://www.example.com") + "www.example.com</a>",
				mdLink("mailto:ann@example.com") + "ann@example.com</a>",
			},
		},
		{
			name: "links and emphasis",
			in:   "**bold** *em* [the ACP site](https://agentclientprotocol.com \"ACP\") [mail](mailto:a@b.c)\n",
			want: []string{"<strong>bold</strong> <em>em</em> ", `<a href="https://agentclientprotocol.com" title="ACP" target="_blank" rel="noopener noreferrer nofollow">the ACP site</a>`, mdLink("mailto:a@b.c") + "mail</a>"},
		},
		{
			name: "inline raw HTML is text",
			in:   "a <img src=x onerror=alert(1)> b <b>c</b>\n",
			want: []string{"<p>a &lt;img src=x onerror=alert(1)&gt; b &lt;b&gt;c&lt;/b&gt;</p>"},
			not:  []string{"<img", "<b>", "<!--"},
		},
		{
			name: "an HTML block is text",
			in:   "<script>alert(1)</script>\n\n<div onclick=\"x()\">\nhi\n</div>\n",
			want: []string{`<p class="raw-html">&lt;script&gt;alert(1)&lt;/script&gt;</p>`, `<p class="raw-html">&lt;div onclick=&quot;x()&quot;&gt;` + "\nhi\n&lt;/div&gt;</p>"},
			not:  []string{"<script", "<div onclick", "<!--"},
		},
		{
			name: "a javascript: link is not a link",
			in:   "[click](javascript:alert(1)) [up](JavaScript:alert(2)) [d](data:text/html,x) [rel](/etc/passwd) [f](file:///etc/passwd)\n",
			want: []string{"<p>click up d rel f</p>"},
			not:  []string{"<a", "href"},
		},
		{
			name: "an image is a link to it",
			in:   "![the logo](https://example.com/logo.png) ![bad](javascript:alert(1))\n",
			want: []string{mdLink("https://example.com/logo.png") + "the logo</a> bad"},
			not:  []string{"<img"},
		},
		{
			name: "headings start at h3",
			in:   "# Report\n## Results\n###### Small\n",
			want: []string{"<h3>Report</h3>", "<h4>Results</h4>", "<h6>Small</h6>"},
			not:  []string{"<h1", "<h2"},
		},
		{
			name: "code with a language",
			in:   "```go\nfunc f() string {\n\treturn \"<b>\"\n}\n```\n",
			want: []string{
				`<div class="code"><div class="code-head"><span class="code-lang">go</span><button type="button" class="code-copy">Copy</button></div><pre class="chroma"><code>`,
				`<span class="kd">func</span> <span class="nf">f</span>`,
				"\n\t<span class=\"k\">return</span> <span class=\"s\">&quot;&lt;b&gt;&quot;</span>\n<span class=\"p\">}</span></code></pre></div>",
			},
		},
		{
			name: "code without a language",
			in:   "```\n\tif a < b {}\n```\n\n    indented\n",
			want: []string{`<span class="code-lang"></span>`, "<code>\tif a &lt; b {}</code>", "<code>indented</code>"},
			not:  []string{"<span class=\"k"},
		},
		{
			name: "code in a language chroma does not know",
			in:   "```no-such-language\n<b>\n```\n",
			want: []string{`<span class="code-lang">no-such-language</span>`, "<code>&lt;b&gt;</code>"},
		},
		{
			name: "a diff",
			in:   "```diff\n- old\n+ new\n```\n",
			want: []string{`<span class="gd">- old`, `<span class="gi">+ new`},
		},
		{
			name: "a newline is a line break",
			in:   "one\ntwo\n\nthree\n",
			want: []string{"<p>one<br>\ntwo</p>\n<p>three</p>"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := renderMarkdown(tc.in)
			rest := got
			for _, w := range tc.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Errorf("renderMarkdown(%q) =\n%s\nwant it to contain (after the previous part)\n%s", tc.in, got, w)
					break
				}
				rest = rest[i+len(w):]
			}
			for _, n := range tc.not {
				if strings.Contains(got, n) {
					t.Errorf("renderMarkdown(%q) =\n%s\nwant no %q", tc.in, got, n)
				}
			}
			if err := checkRendered(got); err != "" {
				t.Errorf("renderMarkdown(%q) =\n%s\n%s", tc.in, got, err)
			}
		})
	}
}

func TestRenderFor(t *testing.T) {
	if got := renderFor(roleUser, "**hi**"); got != "" {
		t.Errorf("renderFor(user) = %q, want nothing: people's messages show as written", got)
	}
	for _, role := range []string{roleAssistant, roleSystem} {
		if got, want := renderFor(role, "**hi**"), "<p><strong>hi</strong></p>\n"; got != want {
			t.Errorf("renderFor(%s) = %q, want %q", role, got, want)
		}
	}
}

// TestCodeCSS checks that the page carries the colours of both schemes,
// inside its hashed inline style.
func TestCodeCSS(t *testing.T) {
	css := codeCSS()
	for _, want := range []string{
		"@media (prefers-color-scheme: light) {\n", "@media (prefers-color-scheme: dark) {\n",
		".chroma .kd", ".chroma .gd", ".chroma .gi",
	} {
		if strings.Count(css, want) == 0 {
			t.Errorf("codeCSS() has no %q:\n%s", want, css)
		}
	}
	if bytes.Contains(pageHTML, codeCSSMarker) || !bytes.Contains(pageHTML, []byte(css)) {
		t.Errorf("the page does not carry codeCSS in place of the marker")
	}
	styles := inlineStyle.FindAllSubmatch(pageHTML, -1)
	if len(styles) != 1 || !bytes.Contains(styles[0][1], []byte(css)) {
		t.Errorf("codeCSS is not inside the page's one inline style")
	}
}

// TestStateFileKeepsNoHTML checks that the rendered HTML is not saved and
// is rendered again when the state file is read.
func TestStateFileKeepsNoHTML(t *testing.T) {
	path := statePath(t)
	ctx := t.Context()
	a := New(Options{StateFile: path})
	id := a.st.mustCreate("t").ID
	h := must(a.Post(ctx, ref(id), channels.Message{Kind: channels.KindText, Text: "**saved**"}))(t)
	if err := a.Flush(); err != nil {
		t.Fatal(err)
	}
	data := must(os.ReadFile(path))(t)
	if bytes.Contains(data, []byte(`"html"`)) || !bytes.Contains(data, []byte(`**saved**`)) {
		t.Errorf("state file = %s, want the text without html", data)
	}
	b := New(Options{StateFile: path})
	got := must(b.st.message(id, string(h.ID)))(t)
	if want := "<p><strong>saved</strong></p>\n"; got.HTML != want {
		t.Errorf("restored message's html = %q, want %q", got.HTML, want)
	}
}

// renderedTags are the elements renderMarkdown may write, with their
// attributes.
var renderedTags = map[string][]string{
	"p": {"class"}, "br": nil, "strong": nil, "em": nil, "del": nil, "code": nil, "pre": {"class"},
	"span": {"class"}, "div": {"class"}, "button": {"type", "class"}, "a": {"href", "title", "target", "rel"},
	"blockquote": nil, "ul": nil, "ol": {"start"}, "li": nil, "input": {"checked", "disabled", "type"},
	"h3": nil, "h4": nil, "h5": nil, "h6": nil, "hr": nil,
	"table": nil, "thead": nil, "tbody": nil, "tr": nil, "th": {"align"}, "td": {"align"},
}

// checkRendered checks HTML renderMarkdown wrote: only renderedTags with their
// attributes, every attribute value quoted, links only to http, https
// and mailto addresses. It returns what is wrong, or "".
func checkRendered(s string) string {
	if strings.Contains(strings.ToLower(s), "<script") {
		return "has <script"
	}
	for {
		i := strings.IndexByte(s, '<')
		if i < 0 {
			return ""
		}
		j := strings.IndexByte(s[i:], '>')
		if j < 0 {
			return "unclosed tag: " + s[i:]
		}
		tag := s[i+1 : i+j]
		s = s[i+j+1:]
		if strings.HasPrefix(tag, "/") {
			if _, ok := renderedTags[tag[1:]]; !ok {
				return "end tag " + tag
			}
			continue
		}
		name, attrs, _ := strings.Cut(tag, " ")
		allowed, ok := renderedTags[name]
		if !ok {
			return "element <" + tag + ">"
		}
		for attrs != "" {
			// name="value"; values are escaped, so hold no quote.
			n, rest, ok := strings.Cut(attrs, `="`)
			if !ok {
				return "attribute without a quoted value in <" + tag + ">"
			}
			v, rest, ok := strings.Cut(rest, `"`)
			if !ok {
				return "unterminated attribute in <" + tag + ">"
			}
			attrs = strings.TrimPrefix(rest, " ")
			if strings.HasPrefix(strings.ToLower(n), "on") || !slices.Contains(allowed, n) {
				return "attribute " + n + " in <" + tag + ">"
			}
			if n == "href" && !linkable([]byte(v)) {
				return "link to " + v
			}
		}
	}
}

// FuzzRenderMarkdown renders the agent's text, which comes from outside:
// the renderer never panics and writes only the elements, attributes and
// links checkRendered allows (no <script>, no on…= handler).
func FuzzRenderMarkdown(f *testing.F) {
	for _, s := range []string{
		"# T\n\n| a | b |\n|---|--:|\n| 1 | 2 |\n\n- [x] a\n  - b\n\n> q\n> r\n\n~~s~~ https://x.org",
		"```go\nfunc main() {\n\tprintln(\"<script>\")\n}\n```",
		"<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "<a href=\"javascript:alert(1)\">x</a>",
		"[x](javascript:alert(1))", "[x](java\tscript:alert(1))", "![x](data:image/png;base64,AAAA)",
		"[x]: javascript:alert(1)\n\n[x]", "<https://a.b/\"onmouseover=\"alert(1)>", "www.a.b/\"><script>",
		"```\"><script>\nx\n```", "```diff\n- a\n+ b\n```", "<!-- c -->", "<?php ?>", "<![CDATA[x]]>",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := renderMarkdown(s)
		if err := checkRendered(got); err != "" {
			t.Errorf("renderMarkdown(%q) =\n%s\n%s", s, got, err)
		}
	})
}

// BenchmarkRenderMarkdown renders a 20 KB reply again, as each edit of a
// long streamed reply does: its code blocks were highlighted before.
func BenchmarkRenderMarkdown(b *testing.B) {
	reply := longReply(20 << 10)
	renderMarkdown(reply)
	b.SetBytes(int64(len(reply)))
	b.ReportAllocs()
	for b.Loop() {
		renderMarkdown(reply)
	}
}

// BenchmarkRenderMarkdownFirst renders a 20 KB reply for the first time,
// highlighting each of its code blocks.
func BenchmarkRenderMarkdownFirst(b *testing.B) {
	reply := longReply(20 << 10)
	b.SetBytes(int64(len(reply)))
	b.ReportAllocs()
	for b.Loop() {
		highlighted.reset()
		renderMarkdown(reply)
	}
}

// longReply returns a reply of about n bytes of the Markdown agents
// write: paragraphs, lists, a table, inline code and Go code, no two code
// blocks alike.
func longReply(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		b.WriteString(strings.ReplaceAll(replyPart, "STEP", strconv.Itoa(i)))
	}
	return b.String()[:n]
}

const replyPart = "## Step STEP\n\n" +
	"The agent read `main.go` and the test next to it, then changed the greeting. " +
	"It ran the suite with **-race** and *every* test passed; see [the docs](https://go.dev/doc).\n\n" +
	"1. **Explore.** List the files.\n2. **Fix.** Change the greeting:\n   - the test expected `hello, gateway`;\n   - the program printed `hello`.\n\n" +
	"| Step | Took |\n|---|---:|\n| Explore | 2.1 s |\n| Verify | 6.0 s |\n\n" +
	"```go\n// greeting STEP\nfunc greeting(name string) string {\n\tif name == \"\" {\n\t\tname = \"gateway\"\n\t}\n\treturn fmt.Sprintf(\"hello, %s\", name)\n}\n```\n\n"

func TestHighlightCache(t *testing.T) {
	c := highlightCache{max: 10}
	c.put("a", "1234") // 5 bytes
	c.put("b", "1234") // 10
	c.put("c", "1234") // 15: a goes
	c.put("d", "0123456789")
	for key, want := range map[string]bool{"a": false, "b": true, "c": true, "d": false} {
		if _, ok := c.get(key); ok != want {
			t.Errorf("get(%q) found = %v, want %v", key, ok, want)
		}
	}
	if c.size != 10 || len(c.order) != 2 {
		t.Errorf("size %d, %d keys; want 10 bytes, 2 keys", c.size, len(c.order))
	}

	// A block highlighted again from the cache reads the same.
	in := "```go\n// TestHighlightCache\nfunc f() {}\n```\n"
	first := renderMarkdown(in)
	if _, ok := highlighted.get("go\x00// TestHighlightCache\nfunc f() {}"); !ok {
		t.Fatalf("the code block is not kept")
	}
	if again := renderMarkdown(in); again != first || !strings.Contains(first, `<span class="kd">func</span>`) {
		t.Errorf("rendered again:\n%s\nfirst:\n%s", again, first)
	}
}

// TestRenderMarkdownConcurrently renders from several goroutines at once,
// as the threads' dispatch lanes do (run with -race).
func TestRenderMarkdownConcurrently(t *testing.T) {
	reply := longReply(4 << 10)
	want := renderMarkdown(reply)
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			in := reply + "\n```go\n// goroutine " + strconv.Itoa(i) + "\n```\n"
			if got := renderMarkdown(in); !strings.HasPrefix(got, want[:len(want)/2]) {
				t.Errorf("goroutine %d rendered a different reply", i)
			}
		})
	}
	wg.Wait()
}

// TestMessageJSONKeepsHTML checks that a message's html goes out as it
// is, not a third longer with \u003c escapes.
func TestMessageJSONKeepsHTML(t *testing.T) {
	got := string(mustJSON(message{Text: "**a** & b", HTML: renderMarkdown("**a** & b")}))
	if want := `"html":"<p><strong>a</strong> &amp; b</p>\n"`; !strings.Contains(got, want) {
		t.Errorf("mustJSON = %s, want it to contain %s", got, want)
	}
}
