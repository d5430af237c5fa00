package store

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzDecodeBody feeds arbitrary stored entry data to the decoder: it must
// not panic, and what it accepts must survive encode → decode unchanged
// after the first normalisation (compacted raw JSON, unknown statuses).
func FuzzDecodeBody(f *testing.F) {
	f.Add("message", []byte(`{"role":"assistant","text":"hi <there>"}`))
	f.Add("thought", []byte(`{"text":"hmm"}`))
	f.Add("tool_call", []byte(`{"id":"c1","title":"ls","kind":"execute","status":"in_progress","input":{"command": "ls"},"output":null,"content":[{"type":"diff","path":"a","oldText":"x","newText":"y"}],"locations":[{"path":"a","line":3}]}`))
	f.Add("tool_call", []byte(`{"id":"c1","status":"cancelled"}`))
	f.Add("permission_request", []byte(`{"requestId":"r","toolCallId":"c","options":[{"id":"allow","name":"Allow","kind":"allow_once"}],"chosen":"allow","askedMs":1700000000000,"answeredMs":-5}`))
	f.Add("plan", []byte(`{"entries":[{"content":"a","priority":"high","status":"pending"}]}`))
	f.Add("meta", []byte(`{"modes":[{"id":"ask","name":"Ask"}],"currentMode":"ask","models":[{"id":"m"}],"commands":[{"name":"init"}],"config":[{"id":"e","value":"1"}]}`))
	f.Add("mode_change", []byte(`{"previous":"ask","new":"code"}`))
	f.Add("meta", []byte(`null`))
	f.Add("hologram", []byte(`{}`))
	f.Add("message", []byte("{\"role\":\"user\",\"text\":\"\xff\"}"))
	f.Fuzz(func(t *testing.T, typ string, data []byte) {
		b, err := decodeBody(EntryType(typ), data)
		if err != nil {
			return
		}
		if got := b.entryType(); got != EntryType(typ) {
			t.Fatalf("decoded a %q entry as %q", typ, got)
		}
		b2, data2 := roundTrip(t, b)
		b3, data3 := roundTrip(t, b2)
		if !bytes.Equal(data2, data3) {
			t.Fatalf("encoding not stable:\n%s\n%s", data2, data3)
		}
		if diff := cmp.Diff(b2, b3); diff != "" {
			t.Fatalf("body changed in a round trip (-first +second):\n%s", diff)
		}
	})
}

func roundTrip(t *testing.T, b Body) (Body, []byte) {
	t.Helper()
	typ, data, err := encodeBody(b)
	if err != nil {
		t.Fatalf("encodeBody(%#v): %v", b, err)
	}
	b2, err := decodeBody(typ, data)
	if err != nil {
		t.Fatalf("decodeBody(%s, %s) of an encoded body: %v", typ, data, err)
	}
	return b2, data
}
