// Package tooldisplay renders the one line a chat thread shows for an agent's
// tool call. Every tool line of the gateway goes through [Summary].
//
// # Line format
//
// A tool line reads
//
//	<mark> <label> · <status>
//
// for example
//
//	🛠️ `go test ./...` · running
//	📖 Read `notes.txt` · done
//	✏️ Edit `cmd/main.go` · failed
//	🔍 Search `TODO` · done
//	📦 Move `a.txt` → `old/a.txt` · pending
//
// The mark names the ACP tool kind:
//
//	🛠️ execute   📖 read    ✏️ edit    🗑️ delete   📦 move
//	🔍 search    💭 think   🌐 fetch   🔀 switch_mode
//	🔧 other, empty or unknown kinds
//
// The status word is "pending", "running" (in_progress), "done" (completed),
// "failed" or "cancelled". When the status is empty or not one of ACP's, the
// " · <status>" part is left out.
//
// # Label
//
// The label is the tool call's title as the agent sent it, unless that title
// is empty, looks like a raw tool call id, or is one of the generic
// placeholders agents send before the real title arrives (compared without
// regard to case): "Terminal", "Read File", "Write", "Edit", "Tool", "Bash",
// "Read", "Fetch", "Search", "Shell", "ReadFile", "WriteFile". Then a label
// is built from the tool's raw input:
//
//   - execute: the command ("command" or "cmd"; an argument array is joined
//     with spaces, and a shell wrapper such as ["bash", "-lc", script]
//     shows just the script);
//   - read, edit, delete: the verb and the file ("file_path", "path",
//     "filePath", "notebook_path" or "absolute_path");
//   - move: the same, and "→" and the "destination";
//   - search: "Search" and the "query" or "pattern";
//   - fetch: "Fetch" and the "url";
//   - other kinds: the first of the above the input has.
//
// File paths show at most their last two elements ("internal/foo.go"), which
// is usually enough to know the file and keeps the line short. Without a
// usable input the label falls back to the first location (not for execute:
// a command's location is the directory it runs in, which says nothing about
// what it does), then to the title even when generic, then to the words
// "tool call". [Placeholder] tells a label of these last two kinds.
//
// Labels are single lines: line breaks and runs of white space collapse to
// one space, and control characters are dropped. Secret-looking values are
// replaced by "•••" (see [Redact]) before anything is cut. Labels longer
// than about 120 characters are shortened in the middle (see [CutMiddle]);
// the whole line is not cut, callers do that with [Cut].
//
// # Markdown
//
// Lines are CommonMark, like the agent's own text. Values taken from the raw
// input or the locations (commands, paths, queries, URLs) are set in code
// spans: commands and paths are full of characters that Markdown would
// otherwise read as emphasis ("rm *.go", "__init__.py"), and a URL in a code
// span is neither linked nor unfurled. The code span's fence is longer than
// any run of backticks inside the value, so a value containing backticks
// cannot end it early. Titles are the agent's own Markdown and are shown as
// they come (agents often send a command title already in backticks).
package tooldisplay
