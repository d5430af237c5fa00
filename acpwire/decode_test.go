package acpwire

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/acpgw/gateway/projector"
	"github.com/google/go-cmp/cmp"
)

type decodeTest struct {
	name    string
	line    string
	want    refFrame
	wantErr string // substring of the error; "" for success
	// malformed is set when the line is not valid JSON at all.
	malformed bool
}

// su builds a session/update line for session "s1" around an update object.
func su(update string) string {
	return `{"jsonrpc":"2.0","method":"session/update","params":` + suParams(update) + `}`
}

func suParams(update string) string { return `{"sessionId":"s1","update":` + update + `}` }

// upd is the frame su(update) decodes to.
func upd(update string, u projector.Update) refFrame {
	u.SessionID = "s1"
	return refFrame{Kind: Notification, Method: "session/update", Params: suParams(update), Update: u}
}

// updateTest is a decodeTest of su(update).
func updateTest(name, update string, u projector.Update) decodeTest {
	return decodeTest{name: name, line: su(update), want: upd(update, u)}
}

func chunk(text string) projector.Update {
	return projector.Update{Tag: projector.TagAgentMessageChunk, RawTag: "agent_message_chunk", Text: text, ContentType: "text"}
}

func thought(text string) projector.Update {
	u := chunk(text)
	u.Thought = true
	return u
}

func unknown(tag string) projector.Update { return projector.Update{RawTag: tag} }

func tag133(tag projector.Tag) projector.Update {
	return projector.Update{Tag: tag, RawTag: tag.String()}
}

func with(u projector.Update, edit func(*projector.Update)) projector.Update {
	edit(&u)
	return u
}

var decodeTests = append(baseDecodeTests, subagentDecodeTests...)

// subagentDecodeTests are the subagent updates of ACP 1.33.
var subagentDecodeTests = []decodeTest{
	updateTest("subagent_update: announce", `{"sessionUpdate":"subagent_update","sessionId":"child-7f3a","title":"Explore the test suite","description":"Find slow tests","state":{"state":"running"},"capabilities":{"cancel":{}},"cwd":"/workspace"}`,
		subagent(projector.SubagentUpdate{ID: "child-7f3a", Title: "Explore the test suite", TitleSet: true, Description: "Find slow tests", DescriptionSet: true, State: "running", StateSet: true, Cancel: true, CapsSet: true})),
	updateTest("subagent_update: state only", `{"sessionId":"c1","state":{"state":"requires_action","_meta":{}},"sessionUpdate":"subagent_update"}`,
		subagent(projector.SubagentUpdate{ID: "c1", State: "requires_action", StateSet: true})),
	updateTest("subagent_update: nulls clear", `{"sessionUpdate":"subagent_update","sessionId":"c1","title":null,"description":null,"state":null,"capabilities":null}`,
		subagent(projector.SubagentUpdate{ID: "c1", TitleSet: true, DescriptionSet: true, StateSet: true, CapsSet: true})),
	updateTest("subagent_update: no cancel", `{"sessionUpdate":"subagent_update","sessionId":"c1","capabilities":{"cancel":null,"_x":1},"state":{}}`,
		subagent(projector.SubagentUpdate{ID: "c1", CapsSet: true, StateSet: true})),
	updateTest("subagent_update: wrong types", `{"sessionUpdate":"subagent_update","sessionId":7,"title":3,"state":"running","capabilities":[{"cancel":{}}]}`,
		subagent(projector.SubagentUpdate{})),
	updateTest("subagent_update: duplicates, last wins", `{"sessionUpdate":"subagent_update","sessionId":"a","sessionId":"b","state":{"state":"idle","state":"running"},"state":{"state":"idle"}}`,
		subagent(projector.SubagentUpdate{ID: "b", State: "idle", StateSet: true})),
	updateTest("session_message_chunk", `{"sessionUpdate":"session_message_chunk","messageId":"m1","senderSessionId":"s1","recipientSessionId":"c1","content":{"type":"text","text":"Review the diff"}}`,
		projector.Update{Tag: projector.TagSessionMessageChunk, RawTag: "session_message_chunk", MessageID: "m1", Sender: "s1", Recipient: "c1", Text: "Review the diff", ContentType: "text"}),
	updateTest("session_message: image", `{"sessionUpdate":"session_message","content":{"type":"image","data":"AA=="},"senderSessionId":null}`,
		projector.Update{Tag: projector.TagSessionMessage, RawTag: "session_message", ContentType: "image"}),
}

func subagent(s projector.SubagentUpdate) projector.Update {
	return projector.Update{Tag: projector.TagSubagent, RawTag: "subagent_update", Subagent: s}
}

var baseDecodeTests = []decodeTest{
	// Frame kinds and ids.
	{
		name: "request with number id",
		line: `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}`,
		want: refFrame{Kind: Request, Method: "session/prompt", ID: `3`, Params: `{"sessionId":"s1","prompt":[]}`},
	},
	{
		name: "request with string id and array params",
		line: `{"jsonrpc":"2.0","id":"a\u0062c","method":"x/custom","params":[1,2]}`,
		want: refFrame{Kind: Request, Method: "x/custom", ID: `"a\u0062c"`, Params: `[1,2]`},
	},
	{
		name: "notification without params",
		line: `{"jsonrpc":"2.0","method":"session/cancel"}`,
		want: refFrame{Kind: Notification, Method: "session/cancel"},
	},
	{
		name: "result with stopReason",
		line: `{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn","usage":{"inputTokens":1}}}`,
		want: refFrame{Kind: Result, ID: `3`, Result: `{"stopReason":"end_turn","usage":{"inputTokens":1}}`, StopReason: "end_turn"},
	},
	{
		name: "result null",
		line: `{"id":"x","result":null,"jsonrpc":"2.0"}`,
		want: refFrame{Kind: Result, ID: `"x"`, Result: `null`},
	},
	{
		name: "result string",
		line: `{"jsonrpc":"2.0","id":0,"result":"ok"}`,
		want: refFrame{Kind: Result, ID: `0`, Result: `"ok"`},
	},
	{
		name: "result stopReason not a string",
		line: `{"jsonrpc":"2.0","id":1,"result":{"stopReason":7}}`,
		want: refFrame{Kind: Result, ID: `1`, Result: `{"stopReason":7}`},
	},
	{
		name: "error with data",
		line: `{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"Internal \"error\"","data":{"details":"boom"}}}`,
		want: refFrame{Kind: Error, ID: `3`, Err: &RPCError{Code: -32603, Message: `Internal "error"`, Data: []byte(`{"details":"boom"}`)}},
	},
	{
		name: "error with null id and string data",
		line: `{"jsonrpc":"2.0","id":null,"error":{"message":"Parse error","code":-32700,"data":"x"}}`,
		want: refFrame{Kind: Error, ID: `null`, Err: &RPCError{Code: -32700, Message: "Parse error", Data: []byte(`"x"`)}},
	},
	{
		name: "whitespace and CRLF",
		line: " \t{ \"jsonrpc\" : \"2.0\" , \"id\" : 7 , \"result\" : { } }\r\n",
		want: refFrame{Kind: Result, ID: `7`, Result: `{ }`},
	},
	{
		name: "params before method",
		line: `{"params":{"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}},"sessionId":"s1"},"method":"session/update","jsonrpc":"2.0"}`,
		want: refFrame{Kind: Notification, Method: "session/update",
			Params: `{"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}},"sessionId":"s1"}`,
			Update: with(chunk("hi"), func(u *projector.Update) { u.SessionID = "s1" })},
	},
	{
		name: "duplicate method: last wins",
		line: `{"jsonrpc":"2.0","method":"session/update","params":{"x":1},"method":"other"}`,
		want: refFrame{Kind: Notification, Method: "other", Params: `{"x":1}`},
	},
	{
		name: "session/update request with id",
		line: `{"jsonrpc":"2.0","id":9,"method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"current_mode_update","currentModeId":"plan"}}}`,
		want: refFrame{Kind: Request, Method: "session/update", ID: `9`,
			Params: `{"sessionId":"s1","update":{"sessionUpdate":"current_mode_update","currentModeId":"plan"}}`,
			Update: projector.Update{Tag: projector.TagCurrentMode, RawTag: "current_mode_update", SessionID: "s1", ModeID: "plan"}},
	},

	// Chunks.
	updateTest("agent_message_chunk", `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Hello"},"messageId":"m1"}`,
		with(chunk("Hello"), func(u *projector.Update) { u.MessageID = "m1" })),
	updateTest("agent_thought_chunk", `{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"hmm"}}`,
		projector.Update{Tag: projector.TagAgentThoughtChunk, RawTag: "agent_thought_chunk", Text: "hmm", ContentType: "text"}),
	updateTest("user_message_chunk", `{"sessionUpdate":"user_message_chunk","content":{"text":"hi","type":"text"}}`,
		projector.Update{Tag: projector.TagUserMessageChunk, RawTag: "user_message_chunk", Text: "hi", ContentType: "text"}),
	updateTest("image chunk has no text", `{"sessionUpdate":"agent_message_chunk","content":{"type":"image","data":"AAAA","mimeType":"image/png","text":"no"}}`,
		projector.Update{Tag: projector.TagAgentMessageChunk, RawTag: "agent_message_chunk", ContentType: "image", Image: projector.ImageBlock{MimeType: "image/png", Data: "AAAA"}}),
	updateTest("image chunk with its data after a second type", `{"sessionUpdate":"agent_message_chunk","content":{"data":"AAAA","type":"text","uri":"file:///w/a.png","type":"image","mimeType":"image/png","name":"n"}}`,
		projector.Update{Tag: projector.TagAgentMessageChunk, RawTag: "agent_message_chunk", ContentType: "image", Image: projector.ImageBlock{MimeType: "image/png", Data: "AAAA", URI: "file:///w/a.png"}}),
	updateTest("audio chunk is no picture", `{"sessionUpdate":"agent_message_chunk","content":{"type":"audio","data":"AAAA","mimeType":"audio/wav"}}`,
		projector.Update{Tag: projector.TagAgentMessageChunk, RawTag: "agent_message_chunk", ContentType: "audio"}),
	updateTest("resource link to an image", `{"sessionUpdate":"agent_message_chunk","content":{"type":"resource_link","uri":"file:///w/chart.PNG","name":"chart.PNG"}}`,
		projector.Update{Tag: projector.TagAgentMessageChunk, RawTag: "agent_message_chunk", ContentType: "resource_link", Image: projector.ImageBlock{URI: "file:///w/chart.PNG", Name: "chart.PNG"}}),
	updateTest("resource link to a text file", `{"sessionUpdate":"agent_message_chunk","content":{"type":"resource_link","uri":"file:///w/a.png","mimeType":"text/plain","name":"a"}}`,
		projector.Update{Tag: projector.TagAgentMessageChunk, RawTag: "agent_message_chunk", ContentType: "resource_link"}),
	updateTest("empty chunk", `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":""}}`, chunk("")),
	updateTest("chunk content not an object", `{"sessionUpdate":"agent_message_chunk","content":"text"}`,
		projector.Update{Tag: projector.TagAgentMessageChunk, RawTag: "agent_message_chunk"}),
	updateTest("sessionUpdate after content", `{"content":{"type":"text","text":"late"},"messageId":"m2","sessionUpdate":"agent_message_chunk"}`,
		with(chunk("late"), func(u *projector.Update) { u.MessageID = "m2" })),
	updateTest("sessionUpdate repeated with another tag", `{"sessionUpdate":"tool_call","content":{"type":"text","text":"x"},"title":"T","sessionUpdate":"agent_message_chunk"}`,
		chunk("x")),
	updateTest("duplicate content: last wins", `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"a"},"content":{"type":"text","text":"b"}}`,
		chunk("b")),
	updateTest("duplicate type in content: last wins", `{"sessionUpdate":"agent_message_chunk","content":{"type":"image","text":"a","type":"text"}}`,
		chunk("a")),
	updateTest("big chunk snapshot", `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"`+strings.Repeat("abcdefghij", 300)+`"}}`,
		chunk(strings.Repeat("abcdefghij", 300))),

	// Thought markers, one place at a time.
	updateTest("thought: update.segment", `{"sessionUpdate":"agent_message_chunk","segment":"thought","content":{"type":"text","text":"t"}}`, thought("t")),
	updateTest("thought: update.kind", `{"sessionUpdate":"agent_message_chunk","kind":"THINKING","content":{"type":"text","text":"t"}}`, thought("t")),
	updateTest("thought: update.channel", `{"sessionUpdate":"agent_message_chunk","channel":"reasoning","content":{"type":"text","text":"t"}}`, thought("t")),
	updateTest("thought: update.role", `{"sessionUpdate":"agent_message_chunk","role":"Intent","content":{"type":"text","text":"t"}}`, thought("t")),
	updateTest("thought: content.segment", `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"t","segment":"segment"}}`, thought("t")),
	updateTest("thought: content.channel", `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"t","channel":"think"}}`, thought("t")),
	updateTest("thought: content.role", `{"sessionUpdate":"agent_message_chunk","content":{"role":"thought","type":"text","text":"t"}}`, thought("t")),
	updateTest("thought: content.annotations", `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"t","annotations":{"audience":["user"],"x":"Reasoning"}}}`, thought("t")),
	updateTest("thought: update._meta string", `{"sessionUpdate":"agent_message_chunk","_meta":{"type":"thinking"},"content":{"type":"text","text":"t"}}`, thought("t")),
	updateTest("thought: update._meta bool", `{"sessionUpdate":"agent_message_chunk","_meta":{"thought":true},"content":{"type":"text","text":"t"}}`, thought("t")),
	updateTest("thought: content._meta bool", `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"t","_meta":{"thinking":true}}}`, thought("t")),
	updateTest("thought: content._meta string", `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"t","_meta":{"kind":"thought"}}}`, thought("t")),
	updateTest("thought: escaped marker", `{"sessionUpdate":"agent_message_chunk","segment":"th\u006fught","content":{"type":"text","text":"t"}}`, thought("t")),
	updateTest("thought: marker before sessionUpdate", `{"segment":"thought","content":{"type":"text","text":"t"},"sessionUpdate":"agent_message_chunk"}`, thought("t")),
	updateTest("not thought: text mentions thinking", `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"thinking"}}`, chunk("thinking")),
	updateTest("not thought: _meta thought is a string", `{"sessionUpdate":"agent_message_chunk","_meta":{"thought":"true"},"content":{"type":"text","text":"t"}}`, chunk("t")),
	updateTest("not thought: nested _meta", `{"sessionUpdate":"agent_message_chunk","_meta":{"claudeCode":{"segment":"thought"}},"content":{"type":"text","text":"t"}}`, chunk("t")),
	updateTest("not thought: other words", `{"sessionUpdate":"agent_message_chunk","segment":"answer","role":"assistant","content":{"type":"text","text":"t","annotations":{"priority":1}}}`, chunk("t")),
	updateTest("not thought: duplicate marker, last wins", `{"sessionUpdate":"agent_message_chunk","segment":"thought","segment":"text","content":{"type":"text","text":"t","annotations":{"a":"think","a":"x"}}}`, chunk("t")),
	updateTest("thought: content.annotations._meta.segment", `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"t","annotations":{"audience":["user"],"_meta":{"segment":"thinking"}}}}`, thought("t")),
	updateTest("thought: content.annotations._meta.channel", `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"t","annotations":{"_meta":{"channel":"Intent"},"priority":0.5}}}`, thought("t")),
	updateTest("thought: content.annotations list", `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"t","annotations":[{"priority":1},{"_meta":{"segment":"thought"}}]}}`, thought("t")),
	updateTest("not thought: content.annotations._meta segment final", `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"t","annotations":{"_meta":{"segment":"final"}}}}`, chunk("t")),
	updateTest("not thought: content.annotations._meta.claudeCode", `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"t","annotations":{"_meta":{"claudeCode":{"segment":"thought"}}}}}`, chunk("t")),
	updateTest("not thought: content.annotations audience and priority", `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"t","annotations":{"audience":["assistant"],"priority":0.9,"lastModified":"2026-01-01T00:00:00Z"}}}`, chunk("t")),
	updateTest("not thought: annotations._meta marker replaced by a later _meta", `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"t","annotations":{"_meta":{"segment":"thought"},"_meta":{"segment":"final"}}}}`, chunk("t")),
	updateTest("not thought: content.kind is not a marker", `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"t","kind":"thought"}}`, chunk("t")),

	// Tool calls.
	updateTest("tool_call", `{"_meta":{"claudeCode":{"toolName":"Bash"}},"toolCallId":"call_1","sessionUpdate":"tool_call","rawInput":{"command":"ls"},"status":"pending","title":"Terminal","kind":"execute",`+
		`"content":[{"type":"content","content":{"type":"text","text":"Run ls"}},{"type":"diff","path":"/a","oldText":null,"newText":"x"},{"type":"terminal","terminalId":"t1"},{"type":"content","content":{"type":"image","data":""}},7],`+
		`"locations":[{"path":"/a","line":3},{"path":"/b"}],"rawOutput":"done"}`,
		projector.Update{Tag: projector.TagToolCall, RawTag: "tool_call", Tool: projector.ToolUpdate{
			ID: "call_1", Title: "Terminal", HasTitle: true, Kind: "execute", Status: projector.StatusPending,
			RawInput: []byte(`{"command":"ls"}`), RawOutput: []byte(`"done"`), HasContent: true,
			Content: []projector.ToolContent{
				{Type: "content", Text: "Run ls"},
				{Type: "diff", Path: "/a", NewText: "x"},
				{Type: "terminal", TerminalID: "t1"},
				{Type: "content"},
			},
			Locations: []projector.Location{{Path: "/a", Line: 3}, {Path: "/b"}},
		}}),
	updateTest("tool_call_update sparse", `{"sessionUpdate":"tool_call_update","toolCallId":"call_1","status":"completed"}`,
		projector.Update{Tag: projector.TagToolCallUpdate, RawTag: "tool_call_update", Tool: projector.ToolUpdate{ID: "call_1", Status: projector.StatusCompleted}}),
	updateTest("tool_call_update nulls and empty content", `{"sessionUpdate":"tool_call_update","toolCallId":"c","title":null,"rawInput":null,"rawOutput":null,"content":[],"locations":[],"status":"weird"}`,
		projector.Update{Tag: projector.TagToolCallUpdate, RawTag: "tool_call_update", Tool: projector.ToolUpdate{
			ID: "c", HasContent: true, Content: []projector.ToolContent{}, Locations: []projector.Location{}}}),
	updateTest("tool_call_update with a screenshot", `{"sessionUpdate":"tool_call_update","toolCallId":"c","content":[{"type":"content","content":{"type":"image","mimeType":"image/png","data":"iVBORw0K"}},{"type":"content","content":{"type":"text","text":"saved"}}]}`,
		projector.Update{Tag: projector.TagToolCallUpdate, RawTag: "tool_call_update", Tool: projector.ToolUpdate{ID: "c", HasContent: true, Content: []projector.ToolContent{
			{Type: "content", Image: projector.ImageBlock{MimeType: "image/png", Data: "iVBORw0K"}}, {Type: "content", Text: "saved"}}}}),
	updateTest("tool_call_update content null", `{"sessionUpdate":"tool_call_update","toolCallId":"c","content":null,"title":""}`,
		projector.Update{Tag: projector.TagToolCallUpdate, RawTag: "tool_call_update", Tool: projector.ToolUpdate{ID: "c", HasTitle: true}}),

	// Other known tags.
	updateTest("plan", `{"sessionUpdate":"plan","entries":[{"content":"Do it","priority":"high","status":"pending"},{"content":"Test","priority":"low","status":"completed"}]}`,
		projector.Update{Tag: projector.TagPlan, RawTag: "plan", Plan: []projector.PlanEntry{
			{Content: "Do it", Priority: "high", Status: "pending"}, {Content: "Test", Priority: "low", Status: "completed"}}}),
	updateTest("usage_update", `{"sessionUpdate":"usage_update","used":53377,"size":200000,"cost":{"amount":0.0419,"currency":"USD"},"_meta":{"x":1}}`,
		projector.Update{Tag: projector.TagUsage, RawTag: "usage_update", Usage: projector.UsageUpdate{
			Used: 53377, Size: 200000, UsedKnown: true, SizeKnown: true, Cost: 0.0419, Currency: "USD", CostKnown: true}}),
	updateTest("usage_update used null", `{"sessionUpdate":"usage_update","used":null,"size":200000,"cost":{"amount":1e-3,"currency":"EUR"}}`,
		projector.Update{Tag: projector.TagUsage, RawTag: "usage_update", Usage: projector.UsageUpdate{
			Size: 200000, SizeKnown: true, Cost: 0.001, Currency: "EUR", CostKnown: true}}),
	updateTest("usage_update cost null", `{"sessionUpdate":"usage_update","used":1.0e3,"size":2.5,"cost":null}`,
		projector.Update{Tag: projector.TagUsage, RawTag: "usage_update", Usage: projector.UsageUpdate{Used: 1000, UsedKnown: true}}),
	updateTest("current_mode_update", `{"sessionUpdate":"current_mode_update","currentModeId":"plan"}`,
		projector.Update{Tag: projector.TagCurrentMode, RawTag: "current_mode_update", ModeID: "plan"}),
	updateTest("session_info_update title", `{"sessionUpdate":"session_info_update","title":"Fix flaky retry test"}`,
		projector.Update{Tag: projector.TagSessionInfo, RawTag: "session_info_update", Title: "Fix flaky retry test", TitleSet: true}),
	updateTest("session_info_update title null", `{"sessionUpdate":"session_info_update","title":null,"updatedAt":"2026-05-14T10:00:00Z"}`,
		projector.Update{Tag: projector.TagSessionInfo, RawTag: "session_info_update", TitleSet: true}),
	updateTest("session_info_update without title", `{"sessionUpdate":"session_info_update","updatedAt":"2026-05-14T10:00:00Z"}`,
		projector.Update{Tag: projector.TagSessionInfo, RawTag: "session_info_update"}),
	updateTest("available_commands_update", `{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"review","description":"Review","input":{"hint":"[path]"}},{"name":"compact"}]}`,
		projector.Update{Tag: projector.TagAvailableCommands, RawTag: "available_commands_update", Commands: []projector.Command{
			{Name: "review", Description: "Review"}, {Name: "compact"}}}),
	updateTest("config_option_update", `{"sessionUpdate":"config_option_update","configOptions":[{"id":"mode","name":"Mode","currentValue":"plan","options":[]},{"id":"fast","name":"Fast","currentValue":true},{"id":"n","currentValue":{"a": 1}}]}`,
		projector.Update{Tag: projector.TagConfigOption, RawTag: "config_option_update", Config: []projector.ConfigOption{
			{ID: "mode", Name: "Mode", Value: "plan"}, {ID: "fast", Name: "Fast", Value: "true"}, {ID: "n", Value: `{"a": 1}`}}}),

	// Unknown tags: routed by the raw string, never by shape.
	// ACP 1.33: notices, compaction, plan operations.
	updateTest("notice", `{"sessionUpdate":"notice","severity":"warning","title":"Context window 80% full","description":"Older messages may be compacted soon."}`,
		with(tag133(projector.TagNotice), func(u *projector.Update) {
			u.Notice = projector.NoticeUpdate{Severity: "warning", Title: "Context window 80% full", Description: "Older messages may be compacted soon."}
		})),
	updateTest("notice: null description, unknown severity", `{"description":null,"sessionUpdate":"notice","title":"Hi","severity":"_x"}`,
		with(tag133(projector.TagNotice), func(u *projector.Update) { u.Notice = projector.NoticeUpdate{Severity: "_x", Title: "Hi"} })),
	updateTest("notice: not strings", `{"sessionUpdate":"notice","severity":1,"title":{"a":1},"description":["x"]}`,
		tag133(projector.TagNotice)),
	updateTest("compaction_update in progress", `{"sessionUpdate":"compaction_update","compactionId":"c1","status":"in_progress"}`,
		with(tag133(projector.TagCompaction), func(u *projector.Update) { u.Compaction = projector.CompactionUpdate{ID: "c1", Status: "in_progress"} })),
	updateTest("compaction_update completed with a summary", `{"sessionUpdate":"compaction_update","compactionId":"c1","status":"completed","summary":[{"type":"text","text":"One."},{"type":"image","data":"x"},7,{"type":"text","text":" Two."}]}`,
		with(tag133(projector.TagCompaction), func(u *projector.Update) {
			u.Compaction = projector.CompactionUpdate{ID: "c1", Status: "completed", Summary: []string{"One.", " Two."}, SummarySet: true}
		})),
	updateTest("compaction_update summary null, empty, error null", `{"summary":null,"sessionUpdate":"compaction_update","compactionId":"c1","error":null}`,
		with(tag133(projector.TagCompaction), func(u *projector.Update) {
			u.Compaction = projector.CompactionUpdate{ID: "c1", SummarySet: true, ErrorSet: true}
		})),
	updateTest("compaction_update summary []", `{"sessionUpdate":"compaction_update","compactionId":"c1","summary":[]}`,
		with(tag133(projector.TagCompaction), func(u *projector.Update) { u.Compaction = projector.CompactionUpdate{ID: "c1", SummarySet: true} })),
	updateTest("compaction_update failed", `{"sessionUpdate":"compaction_update","compactionId":"c1","status":"failed","error":"too big","summary":"no"}`,
		with(tag133(projector.TagCompaction), func(u *projector.Update) {
			u.Compaction = projector.CompactionUpdate{ID: "c1", Status: "failed", Error: "too big", ErrorSet: true}
		})),
	updateTest("compaction_summary_chunk", `{"sessionUpdate":"compaction_summary_chunk","compactionId":"cmp-1","content":{"type":"text","text":"Summary so far."},"status":"failed"}`,
		with(tag133(projector.TagCompactionChunk), func(u *projector.Update) {
			u.Compaction = projector.CompactionUpdate{ID: "cmp-1", Chunk: "Summary so far."}
		})),
	updateTest("compaction_summary_chunk not text", `{"sessionUpdate":"compaction_summary_chunk","compactionId":"c","content":{"type":"image","text":"alt"}}`,
		with(tag133(projector.TagCompactionChunk), func(u *projector.Update) { u.Compaction = projector.CompactionUpdate{ID: "c"} })),
	updateTest("plan_update items", `{"sessionUpdate":"plan_update","planId":"p1","plan":{"type":"items","entries":[{"content":"Switch","priority":"high","status":"in_progress"}]}}`,
		with(tag133(projector.TagPlanUpdate), func(u *projector.Update) {
			u.PlanID, u.PlanDoc = "p1", projector.PlanDoc{Type: "items"}
			u.Plan = []projector.PlanEntry{{Content: "Switch", Priority: "high", Status: "in_progress"}}
		})),
	updateTest("plan_update planId inside the plan", `{"sessionUpdate":"plan_update","plan":{"type":"items","planId":"plan-1","entries":[{"content":"Switch","priority":"high","status":"in_progress"}]}}`,
		with(tag133(projector.TagPlanUpdate), func(u *projector.Update) {
			u.PlanID, u.PlanDoc = "plan-1", projector.PlanDoc{Type: "items"}
			u.Plan = []projector.PlanEntry{{Content: "Switch", Priority: "high", Status: "in_progress"}}
		})),
	updateTest("plan_update update's planId wins", `{"plan":{"planId":"inner","type":"file","uri":"file:///w/PLAN.md"},"sessionUpdate":"plan_update","planId":"outer"}`,
		with(tag133(projector.TagPlanUpdate), func(u *projector.Update) {
			u.PlanID, u.PlanDoc = "outer", projector.PlanDoc{Type: "file", URI: "file:///w/PLAN.md"}
		})),
	updateTest("plan_update markdown, second plan wins", `{"sessionUpdate":"plan_update","planId":"p","plan":{"type":"items","planId":"x","entries":[]},"plan":{"type":"markdown","content":"# Do\n- it"}}`,
		with(tag133(projector.TagPlanUpdate), func(u *projector.Update) {
			u.PlanID, u.PlanDoc = "p", projector.PlanDoc{Type: "markdown", Markdown: "# Do\n- it"}
		})),
	updateTest("plan_update plan not an object", `{"sessionUpdate":"plan_update","planId":"p","plan":[1]}`,
		with(tag133(projector.TagPlanUpdate), func(u *projector.Update) { u.PlanID = "p" })),
	updateTest("config_option_update with a boolean option", `{"sessionUpdate":"config_option_update","configOptions":[{"id":"fast","name":"Fast mode","type":"boolean","currentValue":true},{"id":"x","type":"boolean","currentValue":false}]}`,
		projector.Update{Tag: projector.TagConfigOption, RawTag: "config_option_update", Config: []projector.ConfigOption{{ID: "fast", Name: "Fast mode", Value: "true"}, {ID: "x", Value: "false"}}}),
	updateTest("plan_removed", `{"sessionUpdate":"plan_removed","planId":"p1","plan":{"type":"items","entries":[{}]}}`,
		with(tag133(projector.TagPlanRemoved), func(u *projector.Update) { u.PlanID = "p1" })),
	updateTest("unknown: shaped like a tool call", `{"sessionUpdate":"tool_call_v2","toolCallId":"c","title":"Run","status":"pending"}`,
		with(unknown("tool_call_v2"), func(u *projector.Update) { u.Summary = "Run" })),
	updateTest("unknown: text member", `{"sessionUpdate":"x","text":"plain"}`,
		with(unknown("x"), func(u *projector.Update) { u.Summary = "plain" })),
	updateTest("unknown: non-text content", `{"sessionUpdate":"x","content":{"type":"image","text":"alt"}}`,
		with(unknown("x"), func(u *projector.Update) { u.Summary = "alt" })),

	// Escapes.
	updateTest("escapes", `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"a\n\t\"q\"\\\/\u00e9\ud83d\ude00\b\f\r"}}`,
		chunk("a\n\t\"q\"\\/é😀\b\f\r")),
	updateTest("lone surrogates", `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"\ud800x\udc00\ud800\u0041"}}`,
		chunk("\uFFFDx\uFFFD\uFFFDA")),
	updateTest("invalid UTF-8", "{\"sessionUpdate\":\"agent_message_chunk\",\"content\":{\"type\":\"text\",\"text\":\"a\xffb\xe2\x82c→\"}}",
		chunk("a\uFFFDb\uFFFD\uFFFDc→")),
	updateTest("escaped keys and tag", `{"sessi\u006fnUpdate":"agent_m\u0065ssage_chunk","c\u006fntent":{"typ\u0065":"text","t\u0065xt":"k"}}`,
		chunk("k")),
	updateTest("escaped tag", `{"sessionUpdate":"n\u006ftice","title":"\u263a"}`,
		with(tag133(projector.TagNotice), func(u *projector.Update) { u.Notice.Title = "☺" })),

	// Malformed JSON.
	{name: "empty line", line: ``, wantErr: "unexpected end of line", malformed: true},
	{name: "blank line", line: "  \r\n", wantErr: "unexpected end of line", malformed: true},
	{name: "truncated", line: `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","upd`, wantErr: "closing '\"'", malformed: true},
	{name: "truncated after colon", line: `{"jsonrpc":"2.0","id":`, wantErr: "expected value", malformed: true},
	{name: "trailing garbage", line: `{"jsonrpc":"2.0","id":1,"result":null} x`, wantErr: "end of line", malformed: true},
	{name: "two frames on a line", line: `{"jsonrpc":"2.0","id":1,"result":null}{"jsonrpc":"2.0","id":2,"result":null}`, wantErr: "end of line", malformed: true},
	{name: "trailing comma", line: `{"jsonrpc":"2.0","id":1,"result":[1,],}`, wantErr: "value", malformed: true},
	{name: "bad escape", line: `{"jsonrpc":"2.0","method":"a\x"}`, wantErr: "escape", malformed: true},
	{name: "short unicode escape", line: `{"jsonrpc":"2.0","method":"\u12"}`, wantErr: "hexadecimal", malformed: true},
	{name: "control character in string", line: "{\"jsonrpc\":\"2.0\",\"method\":\"a\nb\"}", wantErr: "control", malformed: true},
	{name: "leading zero", line: `{"jsonrpc":"2.0","id":01,"result":null}`, wantErr: "',' or '}'", malformed: true},
	{name: "bad fraction", line: `{"jsonrpc":"2.0","id":1.,"result":null}`, wantErr: "digit", malformed: true},
	{name: "bad exponent", line: `{"jsonrpc":"2.0","id":1e+,"result":null}`, wantErr: "digit", malformed: true},
	{name: "bare word", line: `{"jsonrpc":"2.0","id":1,"result":nul}`, wantErr: "literal null", malformed: true},
	{name: "single quotes", line: `{'jsonrpc':'2.0'}`, wantErr: "string key", malformed: true},
	{name: "missing colon", line: `{"jsonrpc" "2.0"}`, wantErr: "':'", malformed: true},
	{name: "unclosed object", line: `{"jsonrpc":"2.0","id":1,"result":{"a":1}`, wantErr: "',' or '}'", malformed: true},
	{name: "extra closing brace", line: `{"jsonrpc":"2.0","id":1,"result":null}}`, wantErr: "end of line", malformed: true},
	{name: "NaN", line: `{"jsonrpc":"2.0","id":1,"result":NaN}`, wantErr: "value", malformed: true},
	{name: "byte order mark", line: "\ufeff{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":null}", wantErr: "'{'", malformed: true},
	{name: "malformed deep inside skipped params", line: `{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":[{"b":tru}]}}`, wantErr: "literal true", malformed: true},
	{name: "malformed deep inside update", line: su(`{"sessionUpdate":"tool_call","rawInput":{"a":[1 2]}}`), wantErr: "',' or ']'", malformed: true},

	// Valid JSON that is not a JSON-RPC 2.0 frame.
	{name: "top-level array", line: `[{"jsonrpc":"2.0"}]`, wantErr: "'{'"},
	{name: "top-level string", line: `"x"`, wantErr: "'{'"},
	{name: "no jsonrpc", line: `{"id":1,"result":null}`, wantErr: `"jsonrpc": "2.0"`},
	{name: "jsonrpc 1.0", line: `{"jsonrpc":"1.0","id":1,"result":null}`, wantErr: `"jsonrpc": "2.0"`},
	{name: "no method and no id", line: `{"jsonrpc":"2.0","result":null}`, wantErr: "method or id"},
	{name: "id without result", line: `{"jsonrpc":"2.0","id":1}`, wantErr: "method, result or error"},
	{name: "result and error", line: `{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"x"}}`, wantErr: "not both"},
	{name: "method and result", line: `{"jsonrpc":"2.0","id":1,"method":"x","result":1}`, wantErr: "no result"},
	{name: "method not a string", line: `{"jsonrpc":"2.0","method":5}`, wantErr: "string method"},
	{name: "id is an object", line: `{"jsonrpc":"2.0","id":{},"result":1}`, wantErr: "id"},
	{name: "params is a string", line: `{"jsonrpc":"2.0","method":"x","params":"p"}`, wantErr: "params"},
	{name: "error not an object", line: `{"jsonrpc":"2.0","id":1,"error":"bad"}`, wantErr: "object error"},
	{name: "error without code", line: `{"jsonrpc":"2.0","id":1,"error":{"message":"x"}}`, wantErr: "integer error code"},
	{name: "error with fractional code", line: `{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"x"}}`, wantErr: "integer error code"},
	{name: "error without message", line: `{"jsonrpc":"2.0","id":1,"error":{"code":1}}`, wantErr: "error message"},
	{name: "session/update without params", line: `{"jsonrpc":"2.0","method":"session/update"}`, wantErr: "object params"},
	{name: "session/update without update", line: `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1"}}`, wantErr: "update object"},
	{name: "session/update with update null", line: su(`null`), wantErr: "object update"},
	{name: "update without sessionUpdate", line: su(`{"content":{"type":"text","text":"x"}}`), wantErr: "string sessionUpdate"},
	{name: "sessionUpdate not a string", line: su(`{"sessionUpdate":3}`), wantErr: "string sessionUpdate"},
}

func TestDecode(t *testing.T) {
	for _, tc := range decodeTests {
		t.Run(tc.name, func(t *testing.T) {
			var f Frame
			err := Decode([]byte(tc.line), &f)
			if tc.wantErr != "" {
				var de *DecodeError
				if !errors.As(err, &de) {
					t.Fatalf("Decode(%q) error = %v, want a *DecodeError containing %q", tc.line, err, tc.wantErr)
				}
				if !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("Decode(%q) error = %q, want it to contain %q", tc.line, err, tc.wantErr)
				}
				if de.Offset < 0 || de.Offset > len(tc.line) {
					t.Errorf("error offset %d outside the line (length %d)", de.Offset, len(tc.line))
				}
				if json.Valid([]byte(tc.line)) == tc.malformed {
					t.Errorf("json.Valid = %v, want %v", !tc.malformed, !tc.malformed)
				}
				return
			}
			if err != nil {
				t.Fatalf("Decode(%q) error = %v", tc.line, err)
			}
			if diff := cmp.Diff(tc.want, gotFrame(&f)); diff != "" {
				t.Errorf("Decode(%q) mismatch (-want +got):\n%s", tc.line, diff)
			}
			// The reference reading must agree, so the table checks both.
			ref, err := refDecode([]byte(tc.line))
			if err != nil {
				t.Fatalf("reference: %v", err)
			}
			if diff := cmp.Diff(tc.want, ref); diff != "" {
				t.Errorf("reference mismatch (-want +ref):\n%s", diff)
			}
		})
	}
}

// TestDecodeReuse decodes different frames into one Frame and checks that
// nothing from an earlier frame survives.
func TestDecodeReuse(t *testing.T) {
	var f Frame
	lines := []string{
		su(`{"sessionUpdate":"tool_call","toolCallId":"c","title":"T","content":[],"rawInput":{"a":1}}`),
		`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}}`,
		`{"jsonrpc":"2.0","id":2,"result":{"stopReason":"cancelled"}}`,
		su(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}`),
		`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}`,
	}
	for _, line := range lines {
		if err := Decode([]byte(line), &f); err != nil {
			t.Fatalf("Decode(%q): %v", line, err)
		}
		want, err := refDecode([]byte(line))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, gotFrame(&f)); diff != "" {
			t.Errorf("Decode(%q) after other frames (-want +got):\n%s", line, diff)
		}
	}
}

// TestDecodeOwnership checks that byte slices alias the line and strings
// and raw tool values do not.
func TestDecodeOwnership(t *testing.T) {
	line := []byte(`{"jsonrpc":"2.0","id":"i","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"c","title":"T","rawInput":{"a":1}}}}`)
	var f Frame
	if err := Decode(line, &f); err != nil {
		t.Fatal(err)
	}
	for i := range line {
		line[i] = 'X'
	}
	if got := string(f.ID); got != `XXX` {
		t.Errorf("ID = %q after overwriting the line, want it to alias the line", got)
	}
	tool := f.Update.Tool
	if tool.ID != "c" || tool.Title != "T" || f.Update.SessionID != "s1" || f.Method != "session/update" {
		t.Errorf("strings changed with the line: %+v", f.Update)
	}
	if got := string(tool.RawInput); got != `{"a":1}` {
		t.Errorf("RawInput = %q after overwriting the line, want a copy", got)
	}
}

// TestDecodeDepth checks that the nesting limit matches encoding/json's.
func TestDecodeDepth(t *testing.T) {
	for _, depth := range []int{maxDepth, maxDepth + 1} {
		// The frame object is one level; params adds the rest.
		n := depth - 1
		line := []byte(`{"jsonrpc":"2.0","method":"x","params":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}`)
		var f Frame
		err := Decode(line, &f)
		if valid := json.Valid(line); (err == nil) != valid {
			t.Errorf("depth %d: Decode error = %v, json.Valid = %v", depth, err, valid)
		}
	}
}

func TestIDString(t *testing.T) {
	tests := []struct{ line, want string }{
		{`{"jsonrpc":"2.0","id":3,"result":1}`, `3`},
		{`{"jsonrpc":"2.0","id":3.0,"result":1}`, `3`},
		{`{"jsonrpc":"2.0","id":3e0,"result":1}`, `3`},
		{`{"jsonrpc":"2.0","id":-0,"result":1}`, `0`},
		{`{"jsonrpc":"2.0","id":1.5,"result":1}`, `1.5`},
		{`{"jsonrpc":"2.0","id":"abc","result":1}`, `"abc"`},
		{`{"jsonrpc":"2.0","id":"\u0061bc","result":1}`, `"abc"`},
		{`{"jsonrpc":"2.0","id":"3","result":1}`, `"3"`},
		{`{"jsonrpc":"2.0","id":null,"result":1}`, `null`},
		{`{"jsonrpc":"2.0","method":"session/cancel"}`, ``},
	}
	for _, tc := range tests {
		t.Run(tc.line, func(t *testing.T) {
			var f Frame
			if err := Decode([]byte(tc.line), &f); err != nil {
				t.Fatal(err)
			}
			if got := f.IDString(); got != tc.want {
				t.Errorf("IDString() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestKindString(t *testing.T) {
	for k, want := range map[Kind]string{Request: "request", Notification: "notification", Result: "result", Error: "error", 0: "invalid"} {
		if got := k.String(); got != want {
			t.Errorf("Kind(%d).String() = %q, want %q", k, got, want)
		}
	}
}

// TestDecodeAllocs checks that a warm Frame decodes a text chunk with one
// allocation: the text.
func TestDecodeAllocs(t *testing.T) {
	tests := []struct {
		line string
		want float64
	}{
		{su(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Hello"}}`), 1},
		{su(`{"sessionUpdate":"usage_update","used":1,"size":2,"cost":{"amount":0.5,"currency":"USD"}}`), 0},
		{`{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}`, 0},
		{`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}`, 0},
	}
	for _, tc := range tests {
		var f Frame
		line := []byte(tc.line)
		if err := Decode(line, &f); err != nil {
			t.Fatal(err)
		}
		got := testing.AllocsPerRun(100, func() { _ = Decode(line, &f) })
		if got != tc.want {
			t.Errorf("Decode(%q): %v allocations, want %v", tc.line, got, tc.want)
		}
	}
}

// TestThoughtMarkerPlaces checks every place seed 001 names for a thought
// marker, with each thought word (a thought) and with other values (answer
// text), and places it does not name (answer text).
func TestThoughtMarkerPlaces(t *testing.T) {
	places := []struct {
		name string
		upd  string // %s is the marker value, a JSON string
	}{
		{"update.segment", `{"sessionUpdate":"agent_message_chunk","segment":%s,"content":{"type":"text","text":"t"}}`},
		{"update.kind", `{"sessionUpdate":"agent_message_chunk","kind":%s,"content":{"type":"text","text":"t"}}`},
		{"update.channel", `{"sessionUpdate":"agent_message_chunk","channel":%s,"content":{"type":"text","text":"t"}}`},
		{"update.role", `{"sessionUpdate":"agent_message_chunk","role":%s,"content":{"type":"text","text":"t"}}`},
		{"content.segment", `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"t","segment":%s}}`},
		{"content.channel", `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"t","channel":%s}}`},
		{"content.role", `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"t","role":%s}}`},
		{"content.annotations", `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"t","annotations":{"audience":["user"],"segment":%s}}}`},
		{"content.annotations._meta.segment", `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"t","annotations":{"_meta":{"segment":%s}}}}`},
		{"content.annotations._meta.channel", `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"t","annotations":{"priority":1,"_meta":{"channel":%s}}}}`},
		{"update._meta.segment", `{"sessionUpdate":"agent_message_chunk","_meta":{"segment":%s},"content":{"type":"text","text":"t"}}`},
		{"update._meta.channel", `{"sessionUpdate":"agent_message_chunk","_meta":{"channel":%s},"content":{"type":"text","text":"t"}}`},
		{"content._meta.segment", `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"t","_meta":{"segment":%s}}}`},
		{"content._meta.role", `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"t","_meta":{"role":%s}}}`},
		{"content.annotations[]._meta.channel", `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"t","annotations":[{"audience":["user"]},{"_meta":{"channel":%s}}]}}`},
	}
	thoughtWords := []string{"think", "thought", "thinking", "segment", "intent", "THINKING"}
	answerWords := []string{"final", "answer", "assistant", "text", "user", ""}
	for _, p := range places {
		for _, w := range thoughtWords {
			checkThought(t, p.name+"/"+w, fmt.Sprintf(p.upd, strconv.Quote(w)), true)
		}
		for _, w := range answerWords {
			checkThought(t, p.name+"/"+w, fmt.Sprintf(p.upd, strconv.Quote(w)), false)
		}
	}
	// Annotations that carry only audience and priority are answer text.
	for _, a := range []string{`{"audience":["assistant"]}`, `{"audience":["user","assistant"],"priority":0.9}`, `{"priority":0}`, `[{"audience":["assistant"],"priority":1}]`} {
		checkThought(t, "content.annotations "+a, `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"t","annotations":`+a+`}}`, false)
	}
	// Places seed 001 does not name stay answer text whatever they hold.
	for _, w := range thoughtWords {
		q := strconv.Quote(w)
		checkThought(t, "update._meta.claudeCode/"+w, `{"sessionUpdate":"agent_message_chunk","_meta":{"claudeCode":{"segment":`+q+`}},"content":{"type":"text","text":"t"}}`, false)
		checkThought(t, "content.annotations._meta.claudeCode/"+w, `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"t","annotations":{"_meta":{"claudeCode":{"channel":`+q+`}}}}}`, false)
		checkThought(t, "content.kind/"+w, `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"t","kind":`+q+`}}`, false)
		checkThought(t, "text/"+w, `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":`+q+`}}`, false)
	}
}

func checkThought(t *testing.T, name, update string, want bool) {
	t.Helper()
	var f Frame
	if err := Decode([]byte(su(update)), &f); err != nil {
		t.Errorf("%s: Decode: %v", name, err)
		return
	}
	if f.Update.Thought != want {
		t.Errorf("%s: Thought = %v, want %v (update %s)", name, f.Update.Thought, want, update)
	}
	ref, err := refDecode([]byte(su(update)))
	if err != nil {
		t.Errorf("%s: reference: %v", name, err)
		return
	}
	if ref.Update.Thought != want {
		t.Errorf("%s: reference Thought = %v, want %v", name, ref.Update.Thought, want)
	}
}
