package fakeanthropic_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/acpgw/gateway/internal/fakeanthropic"
)

// script reads the request the way the tests' scripts do.
func script(req fakeanthropic.Request) fakeanthropic.Reply {
	if b, ok := req.ToolResult(); ok {
		return fakeanthropic.Reply{Text: "done " + b.ToolUseID, Chunks: 3}
	}
	if req.UserSaid("tool") {
		return fakeanthropic.Reply{Text: "calling", ToolName: strings.Join(req.ToolNames(), ","), ToolInput: `{"a":1}`, ToolID: "toolu_x"}
	}
	return fakeanthropic.Reply{Text: req.UserText()}
}

// FuzzFakeAnthropic feeds arbitrary bodies to the fake: whatever a Claude
// Code version sends, the fake answers (never panics, never hangs).
func FuzzFakeAnthropic(f *testing.F) {
	f.Add(`{"model":"m","stream":true,"messages":[{"role":"user","content":"say hello"}],"tools":[{}]}`)
	f.Add(`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"use a tool"}]}],"tools":[{"name":"Write"}]}`)
	f.Add(`{"model":"m","stream":true,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"ok"}]}],"tools":[{}]}`)
	f.Add(`{"messages":[{"role":"user","content":7}]}`)
	f.Add(`not json`)
	f.Fuzz(func(t *testing.T, body string) {
		fake := fakeanthropic.NewHandler(t, script)
		for _, path := range []string{"/v1/messages", "/v1/messages/count_tokens", "/other"} {
			w := httptest.NewRecorder()
			fake.ServeHTTP(w, httptest.NewRequest(http.MethodPost, path, strings.NewReader(body)))
			if w.Code == 0 {
				t.Errorf("POST %s: no status", path)
			}
		}
	})
}

// TestStreamedToolUse: a streamed reply with a tool_use carries the
// script's id, name and input, and stops for the tool.
func TestStreamedToolUse(t *testing.T) {
	fake := fakeanthropic.NewHandler(t, script)
	w := httptest.NewRecorder()
	body := `{"model":"m","stream":true,"messages":[{"role":"user","content":"use a tool"}],"tools":[{"name":"Write"},{"name":"mcp__gateway__send_file"}]}`
	fake.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/v1/messages", strings.NewReader(body)))
	got := w.Body.String()
	for _, want := range []string{
		`"id":"toolu_x","input":{},"name":"Write,mcp__gateway__send_file","type":"tool_use"`,
		`"partial_json":"{\"a"`, `"partial_json":"\":1}"`,
		`"stop_reason":"tool_use"`,
		"event: message_stop\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("stream lacks %s:\n%s", want, got)
		}
	}
	if calls := fake.MainCalls(); len(calls) != 1 || calls[0].Req.UserText() != "use a tool" {
		t.Errorf("main calls = %+v, want the one request", calls)
	}
}
