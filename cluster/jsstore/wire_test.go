package jsstore

import (
	"bytes"
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/store"
	"github.com/google/go-cmp/cmp"
)

// jsonKeys lists the key paths of a JSON document ("a.b", "a[].c"),
// sorted.
func jsonKeys(t *testing.T, b []byte) []string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	seen := map[string]bool{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				p := k
				if prefix != "" {
					p = prefix + "." + k
				}
				seen[p] = true
				walk(p, x)
			}
		case []any:
			for _, x := range v {
				walk(prefix+"[]", x)
			}
		}
	}
	walk("", v)
	var out []string
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

var (
	wThread = channels.ThreadRef{Platform: "discord", Channel: "c", Thread: "t"}
	wAt     = time.UnixMilli(1_700_000_000_123).UTC()
	wPrompt = store.TurnPrompt{ID: "m", Author: channels.Author{ID: "u", Name: "Ann", Bot: true, Self: true, Roles: []string{"r"}},
		Text: "hi", Space: "g", Time: wAt,
		Files: []channels.File{{Name: "f", ContentType: "text/plain", Size: 1, URL: "u", Text: "t", Data: []byte{1}, Skipped: "s"}}}
)

func threadKeys(prefix string) []string {
	return []string{prefix, prefix + ".channel", prefix + ".platform", prefix + ".thread"}
}

func keys(ks ...[]string) []string {
	out := slices.Concat(ks...)
	sort.Strings(out)
	return out
}

// TestWireKeys pins the JSON names of every record kind, each fully
// filled in: the wire types are what is marshalled, so renaming a field
// of a store type cannot change them, and renaming one of a wire type
// fails here.
func TestWireKeys(t *testing.T) {
	enc := func(b []byte, err error) []byte {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	tests := []struct {
		name string
		data []byte
		want []string
	}{
		{"binding", enc(bindingCodec.enc(store.Binding{Thread: wThread, Agent: "a", SessionID: "s", Cwd: "/", Title: "t", Created: wAt, Updated: wAt})),
			keys([]string{"v", "agent", "sessionId", "cwd", "title", "createdMs", "updatedMs"}, threadKeys("thread"))},
		{"prompt", enc(promptCodec.enc(store.Prompt{ID: "p", Thread: wThread, SessionID: "s", RequestID: "r", ToolCallID: "c", Title: "t", Kind: "k",
			Options: []store.PromptOption{{ID: "o", Name: "n", Kind: "k"}}, MessageID: "m", Status: store.PromptAnswered, Chosen: "o", ChosenBy: "u",
			CreatedAt: wAt, ExpiresAt: wAt, ResolvedAt: wAt})),
			keys([]string{"v", "id", "sessionId", "requestId", "toolCallId", "title", "kind", "options", "options[].id", "options[].name", "options[].kind",
				"messageId", "status", "chosen", "chosenBy", "createdMs", "expiresMs", "resolvedMs"}, threadKeys("thread"))},
		{"budget hold", enc(holdCodec.enc(store.BudgetHold{Thread: wThread, Budget: "b", Reached: wAt})),
			keys([]string{"v", "budget", "reachedMs"}, threadKeys("thread"))},
		{"choices", enc(choicesCodec.enc(map[string]string{"model": "x"})), []string{"choices", "choices.model", "v"}},
		{"running", enc(runningCodec.enc(store.RunningTurn{Thread: wThread, SessionID: "s", Started: wAt, Prompt: wPrompt, Attempts: 1})),
			keys([]string{"v", "sessionId", "startedMs", "attempts", "prompt", "prompt.v", "prompt.id", "prompt.author", "prompt.author.id",
				"prompt.author.name", "prompt.author.bot", "prompt.author.self", "prompt.author.roles", "prompt.text", "prompt.space", "prompt.timeMs",
				"prompt.files", "prompt.files[].name", "prompt.files[].contentType", "prompt.files[].size", "prompt.files[].url",
				"prompt.files[].text", "prompt.files[].data", "prompt.files[].skipped"}, threadKeys("thread"))},
		{"seen", enc(seenCodec.enc(seenMark{Thread: wThread, MessageID: "m", At: wAt})),
			keys([]string{"v", "messageId", "atMs"}, threadKeys("thread"))},
		{"session claim", enc(claimCodec.enc(sessionClaim{Thread: wThread, At: wAt, Gone: true})),
			keys([]string{"v", "atMs", "gone"}, threadKeys("thread"))},
		{"turn", enc(turnCodec.enc(store.Turn{Thread: wThread, SessionID: "s", Seq: 1, StopReason: "end_turn", Error: "e", Started: wAt, Ended: wAt,
			Used: 1, Size: 2, UsedKnown: true, SizeKnown: true, Cost: 0.5, Currency: "USD", CostKnown: true, PromptChars: 1, ReplyChars: 2})),
			keys([]string{"v", "sessionId", "seq", "stopReason", "error", "startedMs", "endedMs", "used", "size", "cost", "currency",
				"promptChars", "replyChars"}, threadKeys("thread"))},
		{"saved entries", enc(marshalSaved([]store.Entry{{Seq: 1, Time: wAt, Updated: wAt, Body: store.Thought{Text: "t", Length: 9}}})),
			[]string{"entries", "entries[].created_ms", "entries[].data", "entries[].data.length", "entries[].data.text", "entries[].seq",
				"entries[].type", "entries[].updated_ms", "entries[].v", "v"}},
		{"spend", enc(spendCodec.enc(spendIndex{Seq: 9, Sum: spendSum{Turns: 3, CostTurns: 2, Cost: 0.5}})),
			[]string{"cost", "costTurns", "seq", "turns", "v"}},
		{"open messages", enc(openCodec.enc([]store.OpenMessage{{Key: "k", ID: "m", Card: true, Lines: []store.OpenLine{{Key: "c", Text: "x"}}}})),
			[]string{"messages", "messages[].card", "messages[].id", "messages[].key", "messages[].lines", "messages[].lines[].key", "messages[].lines[].text", "v"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, jsonKeys(t, tc.data)); diff != "" {
				t.Errorf("keys of %s (-want +got):\n%s", tc.data, diff)
			}
			if !bytes.HasPrefix(tc.data, []byte(`{"v":1,`)) {
				t.Errorf("%s does not start with its version", tc.data)
			}
		})
	}
}

// TestWireRefusesNewer: a record of a version this code does not know is
// an error, not a guess.
func TestWireRefusesNewer(t *testing.T) {
	for name, dec := range map[string]func([]byte) error{
		"binding": func(b []byte) error { _, err := bindingCodec.dec(b); return err },
		"choices": func(b []byte) error { _, err := choicesCodec.dec(b); return err },
		"running": func(b []byte) error { _, err := runningCodec.dec(b); return err },
		"turn":    func(b []byte) error { _, err := turnCodec.dec(b); return err },
		"open":    func(b []byte) error { _, err := openCodec.dec(b); return err },
		"saved":   func(b []byte) error { _, err := unmarshalSaved(b); return err },
		"spend":   func(b []byte) error { _, err := spendCodec.dec(b); return err },
	} {
		err := dec([]byte(`{"v":2,"thread":{"platform":"p"},"choices":{},"messages":[],"entries":[]}`))
		if err == nil || !strings.Contains(err.Error(), "newer than this gateway knows") {
			t.Errorf("%s of version 2: %v, want an error saying it is newer", name, err)
		}
	}
}

// TestChoicesV0WithOptionV: a version 0 map may have an option called
// "v"; it is read as an option, not as a version.
func TestChoicesV0WithOptionV(t *testing.T) {
	m, err := choicesCodec.dec([]byte(`{"v":"2","model":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"v": "2", "model": "x"}, m); diff != "" {
		t.Errorf("choices (-want +got):\n%s", diff)
	}
}

// FuzzWire feeds arbitrary stored values to each record's decoder: no
// panic, and what it accepts survives encode → decode unchanged after the
// first normalisation (a version 0 record comes back as version 1).
func FuzzWire(f *testing.F) {
	seeds := map[string][]string{
		"binding": {`{"Thread":{"Platform":"discord","Channel":"c","Thread":"t"},"Agent":"a","SessionID":"s","Created":"2023-11-14T22:13:20.123Z","Updated":"0001-01-01T00:00:00Z"}`,
			`{"v":1,"thread":{"platform":"discord","channel":"c","thread":"t"},"sessionId":"s","createdMs":1700000000123}`},
		"prompt": {`{"ID":"p","Options":[{"ID":"a","Name":"A","Kind":"allow_once"}],"Status":"pending","CreatedAt":"2023-11-14T22:13:20.123456Z"}`,
			`{"v":1,"id":"p","thread":{"platform":"x"},"options":[{"id":"a"}],"status":"answered","resolvedMs":-1}`},
		"hold":    {`{"Thread":{"Platform":"p"},"Budget":"channel","Reached":"2023-11-14T22:13:20Z"}`, `{"v":1,"budget":"b","reachedMs":5}`},
		"choices": {`{"model":"x","v":"y"}`, `{"v":1,"choices":{"a":"b"}}`, `{"v":1,"choices":null}`, `{}`},
		"running": {`{"Thread":{"Platform":"p"},"Started":"2023-11-14T22:13:20Z","Prompt":{"id":"m","author":{"ID":"u"},"files":[{"Name":"f","Data":"AQ=="}],"time":"2023-11-14T22:13:20Z"},"Attempts":2}`,
			`{"v":1,"startedMs":1,"prompt":{"v":1,"id":"m","author":{"id":"u","roles":[]},"timeMs":3}}`, `{"v":1,"prompt":null}`, `{"v":1,"prompt":{"v":9}}`},
		"seen":  {`{"MessageID":"m","At":"2023-11-14T22:13:20Z","Thread":{"Platform":"p"}}`, `{"v":1,"messageId":"m","atMs":1}`},
		"claim": {`{"thread":{"Platform":"p"},"at":"2026-12-03T14:18:58.417524998Z","gone":true}`, `{"v":1,"atMs":1}`},
		"turn": {`{"SessionID":"s","Seq":1,"Used":5,"UsedKnown":true,"Cost":0.25,"CostKnown":false}`,
			`{"v":1,"sessionId":"s","seq":2,"used":0,"cost":1e308,"size":null}`},
		"saved": {`{"seq":0,"type":"message","created_ms":1,"updated_ms":2,"data":{"role":"user","text":"hi"}}`,
			`{"v":1,"seq":3,"type":"thought","created_ms":1,"updated_ms":2,"data":{"text":"hm"}}`,
			`{"v":1,"entries":[{"v":1,"seq":0,"type":"message","created_ms":1,"updated_ms":2,"data":{"role":"user","text":"hi"}},{"seq":1,"type":"mode_change","data":{"previous":"a","new":"b"}}]}`,
			`{"v":1,"entries":[]}`, `{"v":2,"entries":[]}`},
		"open": {`[{"key":"k","id":"m","lines":[{"key":"c","text":"x"}]}]`, `{"v":1,"messages":[{"key":"k","id":"m","card":true,"lines":[{"key":"c","text":"x"}]}]}`, `{"v":1,"messages":[]}`},
	}
	for kind, ss := range seeds {
		for _, s := range ss {
			f.Add(kind, []byte(s))
		}
	}
	f.Add("binding", []byte(`{"v":0}`))
	f.Add("turn", []byte(`{"v":"1"}`))
	f.Add("open", []byte(`[]`))
	f.Fuzz(func(t *testing.T, kind string, data []byte) {
		switch kind {
		case "binding":
			stable(t, bindingCodec, data)
		case "prompt":
			stable(t, promptCodec, data)
		case "hold":
			stable(t, holdCodec, data)
		case "choices":
			stable(t, choicesCodec, data)
		case "running":
			stable(t, runningCodec, data)
		case "seen":
			stable(t, seenCodec, data)
		case "claim":
			stable(t, claimCodec, data)
		case "turn":
			stable(t, turnCodec, data)
		case "open":
			stable(t, openCodec, data)
		case "saved":
			stable(t, codec[[]store.Entry]{enc: marshalSaved, dec: unmarshalSaved}, data)
		}
	})
}

// stable decodes data with c and, if c accepts it, checks that encoding
// and decoding again changes nothing.
func stable[T any](t *testing.T, c codec[T], data []byte) {
	t.Helper()
	v, err := c.dec(data)
	if err != nil {
		return
	}
	b1, err := c.enc(v)
	if err != nil {
		t.Fatalf("encode %#v: %v", v, err)
	}
	v2, err := c.dec(b1)
	if err != nil {
		t.Fatalf("decode %s of an encoded value: %v", b1, err)
	}
	b2, err := c.enc(v2)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b1, b2) {
		t.Fatalf("encoding not stable:\n%s\n%s", b1, b2)
	}
	v3, err := c.dec(b2)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(v2, v3); diff != "" {
		t.Fatalf("value changed in a round trip (-first +second):\n%s", diff)
	}
}
