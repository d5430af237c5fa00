package fakemodel_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/acpgw/gateway/internal/fakemodel"
)

// script: a text answer to "say hello"; for "run it" a shell call, then
// after its result a text; for "patch" a custom tool call.
var script = fakemodel.Script{
	{Prompt: "say hello", Steps: []fakemodel.Step{{Text: "Hello there.", Chunks: 3}}},
	{Prompt: "run it", Steps: []fakemodel.Step{
		{Text: "Running.", Tool: "shell", Args: `{"command":"echo hi"}`, ID: "call_1"},
		{Text: "It said hi."},
	}},
	{Prompt: "patch", Steps: []fakemodel.Step{{Tool: "apply_patch", Custom: true, Args: "*** Begin Patch\n*** End Patch", ID: "call_p"}}},
	{Prompt: "wait", Steps: []fakemodel.Step{{Text: "Working", Hold: true}}},
}

// post sends body to path of the fake and returns the answer's body.
func post(t *testing.T, url, path, body string) string {
	t.Helper()
	resp, err := http.Post(url+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %s: %s", path, resp.Status, b)
	}
	return string(b)
}

// events returns the data lines of an SSE body, decoded.
func events(t *testing.T, body string) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		d, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || d == "[DONE]" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(d), &m); err != nil {
			t.Fatalf("event %q: %v", d, err)
		}
		out = append(out, m)
	}
	return out
}

// pick walks m by keys and indexes.
func pick(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

func TestGeminiStreamTextAndTool(t *testing.T) {
	fake := fakemodel.New(t, script)
	body := post(t, fake.URL, "/v1beta/models/gemini-3.8-flash:streamGenerateContent?alt=sse",
		`{"contents":[{"role":"user","parts":[{"text":"please say hello"}]}],"tools":[{"functionDeclarations":[{"name":"shell"}]}]}`)
	var text string
	evs := events(t, body)
	for _, e := range evs {
		text += pick(e, "candidates", 0, "content", "parts", 0, "text").(string)
	}
	if text != "Hello there." || len(evs) != 3 || pick(evs[2], "candidates", 0, "finishReason") != "STOP" {
		t.Errorf("text %q in %d events, last %v; want the script's text in 3 ending STOP", text, len(evs), evs[len(evs)-1])
	}

	// The call, then after its result the next step.
	conv := `{"role":"user","parts":[{"text":"run it"}]}`
	evs = events(t, post(t, fake.URL, "/v1beta/models/m:streamGenerateContent?alt=sse",
		`{"contents":[`+conv+`],"tools":[{"functionDeclarations":[{"name":"shell"},{"name":"read"}]}]}`))
	last := evs[len(evs)-1]
	if fc := pick(last, "candidates", 0, "content", "parts", 0, "functionCall"); pick(fc, "name") != "shell" || pick(fc, "args", "command") != "echo hi" {
		t.Errorf("last event %v, want the shell call", last)
	}
	conv += `,{"role":"model","parts":[{"functionCall":{"name":"shell","args":{"command":"echo hi"}}}]},{"role":"user","parts":[{"functionResponse":{"name":"shell","response":{"output":"hi"}}}]}`
	evs = events(t, post(t, fake.URL, "/v1beta/models/m:streamGenerateContent?alt=sse",
		`{"contents":[`+conv+`],"tools":[{"functionDeclarations":[{"name":"shell"}]}]}`))
	if got := pick(evs[0], "candidates", 0, "content", "parts", 0, "text"); got != "It said hi." {
		t.Errorf("after the result: %v, want the second step", evs)
	}
	main := fake.Main()
	if len(main) != 3 || main[1].Step != 0 || main[2].Step != 1 || main[2].Req.Messages[2].Output != `{"output":"hi"}` {
		t.Errorf("main calls = %+v", main)
	}
}

// TestGeminiRouterAndCountTokens: a generateContent that asks for JSON
// with a schema (the model router) gets an object with the schema's
// required fields; countTokens gets a count.
func TestGeminiRouterAndCountTokens(t *testing.T) {
	fake := fakemodel.New(t, script)
	body := post(t, fake.URL, "/v1beta/models/gemini-3.5-flash-lite:generateContent",
		`{"contents":[{"role":"user","parts":[{"text":"say hello"}]}],"generationConfig":{"responseMimeType":"application/json","responseJsonSchema":{"type":"OBJECT","properties":{"complexity_reasoning":{"type":"STRING"},"complexity_score":{"type":"INTEGER"},"x":{"type":"STRING"}},"required":["complexity_reasoning","complexity_score"]}}}`)
	var resp map[string]any
	if err := json.Unmarshal([]byte(body), &resp); err != nil {
		t.Fatal(err)
	}
	var verdict map[string]any
	text, _ := pick(resp, "candidates", 0, "content", "parts", 0, "text").(string)
	if err := json.Unmarshal([]byte(text), &verdict); err != nil || verdict["complexity_score"] != 1.0 || verdict["complexity_reasoning"] != "fake" || len(verdict) != 2 {
		t.Errorf("router answer %q (%v), want the two required fields", text, err)
	}
	if got := post(t, fake.URL, "/v1beta/models/m:countTokens", `{"contents":[]}`); !strings.Contains(got, `"totalTokens":`) {
		t.Errorf("countTokens = %s", got)
	}
	if len(fake.Main()) != 0 {
		t.Errorf("side calls counted as main: %+v", fake.Main())
	}
}

func TestResponsesFunctionAndCustomTools(t *testing.T) {
	fake := fakemodel.New(t, script)
	tools := `"tools":[{"type":"function","name":"shell"},{"type":"custom","name":"apply_patch"}]`
	evs := events(t, post(t, fake.URL, "/v1/responses",
		`{"model":"fake-model","stream":true,"instructions":"be good","input":[{"type":"message","role":"developer","content":[{"type":"input_text","text":"run it"}]},{"type":"message","role":"user","content":[{"type":"input_text","text":"run it"}]}],`+tools+`}`))
	types := func() []string {
		var out []string
		for _, e := range evs {
			out = append(out, e["type"].(string))
		}
		return out
	}
	want := "response.created response.in_progress response.output_item.added response.content_part.added response.output_text.delta response.output_text.done response.content_part.done response.output_item.done response.output_item.added response.function_call_arguments.delta response.function_call_arguments.delta response.function_call_arguments.done response.output_item.done response.completed"
	if got := strings.Join(types(), " "); got != want {
		t.Errorf("events\n%s\nwant\n%s", got, want)
	}
	done := evs[len(evs)-1]
	if fc := pick(done, "response", "output", 1); pick(fc, "type") != "function_call" || pick(fc, "call_id") != "call_1" || pick(fc, "arguments") != `{"command":"echo hi"}` {
		t.Errorf("completed output = %v", pick(done, "response", "output"))
	}
	if pick(done, "response", "usage", "total_tokens") != 15.0 {
		t.Errorf("no usage: %v", done)
	}

	evs = events(t, post(t, fake.URL, "/v1/responses",
		`{"model":"fake-model","stream":true,"input":[{"role":"user","content":"run it"},{"type":"function_call","call_id":"call_1","name":"shell","arguments":"{}"},{"type":"function_call_output","call_id":"call_1","output":"hi"}],`+tools+`}`))
	if got := pick(evs[len(evs)-1], "response", "output", 0, "content", 0, "text"); got != "It said hi." {
		t.Errorf("after the result: %v", got)
	}

	evs = events(t, post(t, fake.URL, "/v1/responses", `{"model":"m","stream":true,"input":"patch","tools":[{"type":"custom","name":"apply_patch"}]}`))
	if got := strings.Join(types(), " "); !strings.Contains(got, "response.custom_tool_call_input.done") {
		t.Errorf("custom call events: %s", got)
	}
	if c := pick(evs[len(evs)-1], "response", "output", 0); pick(c, "type") != "custom_tool_call" || pick(c, "input") != "*** Begin Patch\n*** End Patch" {
		t.Errorf("custom call = %v", c)
	}
	// A developer message with the prompt's words is not the user's.
	if m := fake.Main(); len(m) != 3 || m[0].Req.System != "be good" || m[0].Req.Messages[0].Role != "system" {
		t.Errorf("main = %+v", m)
	}
}

func TestChatCompletions(t *testing.T) {
	fake := fakemodel.New(t, script)
	evs := events(t, post(t, fake.URL, "/v1/chat/completions",
		`{"model":"fake-model","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"system","content":"sys"},{"role":"user","content":[{"type":"text","text":"<system-reminder>x</system-reminder>"},{"type":"text","text":"run it"}]}],"tools":[{"type":"function","function":{"name":"shell"}}]}`))
	var text, name, args, finish string
	for _, e := range evs {
		d := pick(e, "choices", 0, "delta")
		if s, ok := pick(d, "content").(string); ok {
			text += s
		}
		if s, ok := pick(d, "tool_calls", 0, "function", "name").(string); ok {
			name += s
		}
		if s, ok := pick(d, "tool_calls", 0, "function", "arguments").(string); ok {
			args += s
		}
		if s, ok := pick(e, "choices", 0, "finish_reason").(string); ok {
			finish = s
		}
	}
	if text != "Running." || name != "shell" || args != `{"command":"echo hi"}` || finish != "tool_calls" {
		t.Errorf("text %q name %q args %q finish %q", text, name, args, finish)
	}
	body := post(t, fake.URL, "/v1/chat/completions",
		`{"model":"fake-model","messages":[{"role":"user","content":"run it"},{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"shell","arguments":"{}"}}]},{"role":"tool","tool_call_id":"call_1","content":"hi"}],"tools":[{"type":"function","function":{"name":"shell"}}]}`)
	var whole map[string]any
	if err := json.Unmarshal([]byte(body), &whole); err != nil || pick(whole, "choices", 0, "message", "content") != "It said hi." || pick(whole, "choices", 0, "finish_reason") != "stop" {
		t.Errorf("whole answer %s (%v)", body, err)
	}
	// A title request (no tools; the prompt quoted) and a side request
	// with tools but not the step's are not the script's.
	for _, b := range []string{
		`{"model":"m","messages":[{"role":"user","content":"Title for: run it"}]}`,
		`{"model":"m","messages":[{"role":"user","content":"remember: run it"}],"tools":[{"type":"function","function":{"name":"save_memory"}}]}`,
	} {
		if got := post(t, fake.URL, "/v1/chat/completions", b); !strings.Contains(got, `"content":"ok"`) {
			t.Errorf("side request %s answered %s", b, got)
		}
	}
	if got := len(fake.Main()); got != 2 {
		t.Errorf("%d main calls, want 2", got)
	}
}

// TestHoldUntilDropped: a Hold step streams its text and then waits; the
// client dropping the request ends it.
func TestHoldUntilDropped(t *testing.T) {
	fake := fakemodel.New(t, script)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, fake.URL+"/v1/chat/completions",
		strings.NewReader(`{"model":"m","stream":true,"messages":[{"role":"user","content":"wait"}],"tools":[{"type":"function","function":{"name":"shell"}}]}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	<-fake.Held(1)
	br := bufio.NewReader(resp.Body)
	var got string
	for !strings.Contains(got, "Working") {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("after %q: %v", got, err)
		}
		got += line
	}
	if strings.Contains(got, "finish_reason\":\"stop") {
		t.Errorf("a held answer finished: %s", got)
	}
	cancel()
	if _, err := io.ReadAll(br); err == nil {
		t.Errorf("the held answer ended cleanly after the client left")
	}
}

// FuzzFakeModel feeds arbitrary bodies to every endpoint: whatever an
// agent's version sends, the fake answers (never panics, never hangs).
func FuzzFakeModel(f *testing.F) {
	f.Add(`{"contents":[{"role":"user","parts":[{"text":"run it"}]}],"tools":[{"functionDeclarations":[{"name":"shell"}]}]}`)
	f.Add(`{"generationConfig":{"responseJsonSchema":{"type":"object","properties":{"a":{"type":["integer"],"minimum":3},"b":{"type":"array","items":{"enum":["x"]}}}}}}`)
	f.Add(`{"stream":true,"input":[{"type":"custom_tool_call_output","call_id":"c","output":[{"type":"input_text","text":"x"}]},{"role":"user","content":"patch"}],"tools":[{"type":"custom","name":"apply_patch"}]}`)
	f.Add(`{"stream":true,"messages":[{"role":"user","content":"say hello"}],"response_format":{"type":"json_schema","json_schema":{"schema":{"properties":{"p":{"properties":{}}}}}}}`)
	f.Add(`{"input":7}`)
	f.Add(`not json`)
	f.Fuzz(func(t *testing.T, body string) {
		fake := fakemodel.NewHandler(t, script[:3])
		for _, path := range []string{
			"/v1beta/models/m:streamGenerateContent", "/v1beta/models/m:generateContent", "/v1beta/models/m:countTokens",
			"/v1/responses", "/v1/chat/completions", "/other",
		} {
			w := httptest.NewRecorder()
			fake.ServeHTTP(w, httptest.NewRequest(http.MethodPost, path, strings.NewReader(body)))
			if w.Code == 0 {
				t.Errorf("POST %s: no status", path)
			}
		}
	})
}

// TestLatestPromptWins: a user text holding two prompts (a stopped one
// sent again before the next) is answered for the one that comes last.
func TestLatestPromptWins(t *testing.T) {
	fake := fakemodel.New(t, script)
	got := post(t, fake.URL, "/v1/chat/completions",
		`{"model":"m","messages":[{"role":"user","content":"wait\nsay hello"}],"tools":[{"type":"function","function":{"name":"shell"}}]}`)
	if !strings.Contains(got, `"content":"Hello there."`) {
		t.Errorf("answered %s, want the later prompt's text", got)
	}
}
