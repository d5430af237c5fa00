package demoagent

// markdownDoc is the reply of the markdown scenario: about 4,000 characters
// with headings, nested lists, a table, inline code, a link, a quote and two
// fenced code blocks (Go and shell), so that renderers and splitters have
// every common construct to get wrong.
const markdownDoc = "# Demo agent report\n" +
	"\n" +
	"This reply exercises the markdown a coding agent typically sends. It is long enough to be " +
	"split on platforms with a small message limit, and it arrives in many small chunks, so a " +
	"gateway has to stitch it back together before it splits it again.\n" +
	"\n" +
	"## What was checked\n" +
	"\n" +
	"1. The **projector** keeps text in order, even when tool calls arrive in between.\n" +
	"2. The *dispatcher* splits long text without breaking a code fence.\n" +
	"   - Fences are closed at the end of one message and reopened in the next.\n" +
	"   - Lists keep their markers when a split falls inside them.\n" +
	"3. Inline code such as `go test ./...` survives, and so do links like " +
	"[the ACP site](https://agentclientprotocol.com).\n" +
	"\n" +
	"> A quote, because agents like to quote error messages back to you.\n" +
	"> It spans two lines.\n" +
	"\n" +
	"## Results\n" +
	"\n" +
	"| Package | Tests | Result | Notes |\n" +
	"|---|---:|:---:|---|\n" +
	"| `projector` | 42 | pass | pure, no I/O |\n" +
	"| `dispatch` | 37 | pass | one lane per thread |\n" +
	"| `channels/discord` | 18 | pass | 2,000 character limit |\n" +
	"| `channels/slack` | 21 | pass | about 4,000 characters |\n" +
	"| `demoagent` | 30 | pass | scripted, no network |\n" +
	"\n" +
	"## The fix in Go\n" +
	"\n" +
	"The greeting now names the gateway, and the test checks it:\n" +
	"\n" +
	"```go\n" +
	"package main\n" +
	"\n" +
	"import (\n" +
	"\t\"fmt\"\n" +
	"\t\"os\"\n" +
	")\n" +
	"\n" +
	"// greeting returns the text main prints.\n" +
	"func greeting(name string) string {\n" +
	"\tif name == \"\" {\n" +
	"\t\tname = \"gateway\"\n" +
	"\t}\n" +
	"\treturn fmt.Sprintf(\"hello, %s\", name)\n" +
	"}\n" +
	"\n" +
	"func main() {\n" +
	"\tname := \"\"\n" +
	"\tif len(os.Args) > 1 {\n" +
	"\t\tname = os.Args[1]\n" +
	"\t}\n" +
	"\tfmt.Println(greeting(name))\n" +
	"}\n" +
	"```\n" +
	"\n" +
	"## How to run it\n" +
	"\n" +
	"Build and run the program, then run the tests with the race detector:\n" +
	"\n" +
	"```sh\n" +
	"$ go build -o hello .\n" +
	"$ ./hello\n" +
	"hello, gateway\n" +
	"$ ./hello team\n" +
	"hello, team\n" +
	"$ go test -race -count=1 ./...\n" +
	"ok  \texample.com/hello\t0.012s\n" +
	"```\n" +
	"\n" +
	"## How the turn went\n" +
	"\n" +
	"The agent worked through the problem in the usual order. First it listed the project " +
	"files to see what it was dealing with, then it read `main.go` and the test next to it, " +
	"and only then did it change anything. Each step produced a tool call, and each tool call " +
	"went through the same states: *pending*, *in progress*, and finally *completed* or " +
	"*failed*. A calm chat thread shows one line per tool call and edits it in place instead " +
	"of posting a new message for every state.\n" +
	"\n" +
	"1. **Explore.** List the files and read the code.\n" +
	"2. **Reproduce.** Run the failing test and keep its output:\n" +
	"   - the test expected `hello, gateway`;\n" +
	"   - the program printed `hello`.\n" +
	"3. **Fix.** Change the greeting and add a parameter for the name.\n" +
	"4. **Verify.** Run the whole suite again, this time with `-race`.\n" +
	"\n" +
	"### Timing\n" +
	"\n" +
	"| Step | Started | Took |\n" +
	"|---|---|---:|\n" +
	"| Explore | 00:00 | 2.1 s |\n" +
	"| Reproduce | 00:02 | 4.7 s |\n" +
	"| Fix | 00:07 | 1.3 s |\n" +
	"| Verify | 00:08 | 6.0 s |\n" +
	"\n" +
	"Most of the time went into running tests, which is typical: the model is fast, the " +
	"toolchain is not. A gateway that shows a typing indicator during those seconds keeps " +
	"people from wondering whether anything is happening at all.\n" +
	"\n" +
	"## Things to watch\n" +
	"\n" +
	"- **Chunk boundaries.** A chunk may end in the middle of a word, a `code span`, a fence " +
	"marker or even a table row; only the concatenation matters.\n" +
	"- **Long lines.** Some platforms fold long lines, so a table wider than the message " +
	"may wrap; that is expected and not a rendering bug.\n" +
	"- **Unicode.** Text such as “curly quotes”, em dashes — like this one — and emoji 🚀 must " +
	"not be cut inside a character.\n" +
	"- **Escaping.** Characters like `*`, `_` and `<tags>` in code must stay literal.\n" +
	"\n" +
	"### Next steps\n" +
	"\n" +
	"- [x] Reproduce the failing test\n" +
	"- [x] Fix the greeting\n" +
	"- [ ] Ask a human to review the change\n" +
	"- [ ] Ship it\n" +
	"\n" +
	"That is all for this report. Send `help` to see the other scenarios, or `tools` to watch " +
	"tool calls stream in, or `slow` and then stop it half way to try cancellation.\n"
