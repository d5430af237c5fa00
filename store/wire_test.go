package store

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
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
	slices.Sort(out)
	return out
}

// TestWireKeys pins the JSON names of the shared records, each fully
// filled in: renaming a field of TurnPrompt, channels.Author,
// channels.File or OpenMessage cannot change them.
func TestWireKeys(t *testing.T) {
	at := time.UnixMilli(1_700_000_000_123).UTC()
	p, err := MarshalTurnPrompt(TurnPrompt{ID: "m", Author: channels.Author{ID: "u", Name: "Ann", Bot: true, Self: true, Roles: []string{"r"}},
		Text: "hi", Space: "g", Time: at,
		Files: []channels.File{{Name: "f", ContentType: "text/plain", Size: 1, URL: "u", Text: "t", Data: []byte{1}, Skipped: "s"}}})
	if err != nil {
		t.Fatal(err)
	}
	om, err := EncodeOpenMessages([]OpenMessage{{Key: "k", ID: "m", Card: true, Lines: []OpenLine{{Key: "c", Text: "x"}}}})
	if err != nil {
		t.Fatal(err)
	}
	e, err := MarshalEntry(Entry{Seq: 1, Time: at, Updated: at, Body: ModeChange{Previous: "a", New: "b"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		data []byte
		want []string
	}{
		{"turn prompt", p, []string{"author", "author.bot", "author.id", "author.name", "author.roles", "author.self",
			"files", "files[].contentType", "files[].data", "files[].name", "files[].size", "files[].skipped", "files[].text", "files[].url",
			"id", "space", "text", "timeMs", "v"}},
		{"open messages", om, []string{"messages", "messages[].card", "messages[].id", "messages[].key", "messages[].lines",
			"messages[].lines[].key", "messages[].lines[].text", "v"}},
		{"entry", e, []string{"created_ms", "data", "data.new", "data.previous", "seq", "type", "updated_ms", "v"}},
	} {
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
	newer := []byte(`{"v":2,"author":{},"messages":[],"seq":1,"type":"thought","data":{}}`)
	for name, err := range map[string]error{
		"turn prompt":   second(UnmarshalTurnPrompt(newer)),
		"open messages": second(DecodeOpenMessages(newer)),
		"entry":         second(UnmarshalEntry(newer)),
	} {
		if err == nil || !strings.Contains(err.Error(), "newer than this gateway knows") {
			t.Errorf("%s of version 2: %v, want an error saying it is newer", name, err)
		}
	}
}

func second[T any](_ T, err error) error { return err }

// FuzzUnmarshalTurnPrompt feeds arbitrary stored prompts (either
// version) to the decoder: no panic, and what it accepts survives
// encode → decode unchanged after the first normalisation.
func FuzzUnmarshalTurnPrompt(f *testing.F) {
	f.Add([]byte(`{"id":"m9","author":{"ID":"u1","Name":"Ann","Bot":false,"Self":false,"Roles":["dev"]},"text":"x","files":[{"Name":"a","Data":"iVA="}],"space":"g","time":"2023-11-14T22:13:20.143Z"}`))
	f.Add([]byte(`{"author":{"ID":"","Name":"","Bot":false,"Self":false,"Roles":null},"time":"0001-01-01T00:00:00Z"}`))
	f.Add([]byte(`{"v":1,"id":"m","author":{"id":"u","bot":true,"roles":[]},"files":[{"name":"f","size":-1}],"timeMs":-5}`))
	f.Add([]byte(`{"v":1.5}`))
	f.Add([]byte(`{"v":null,"time":"2023-11-14T22:13:20.999999999+02:00"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := UnmarshalTurnPrompt(b)
		if err != nil {
			return
		}
		m1, err := MarshalTurnPrompt(p)
		if err != nil {
			t.Fatal(err)
		}
		p2, err := UnmarshalTurnPrompt(m1)
		if err != nil {
			t.Fatalf("UnmarshalTurnPrompt(%s) of a marshalled prompt: %v", m1, err)
		}
		m2, err := MarshalTurnPrompt(p2)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(m1, m2) {
			t.Fatalf("encoding not stable:\n%s\n%s", m1, m2)
		}
		p3, _ := UnmarshalTurnPrompt(m2)
		if diff := cmp.Diff(p2, p3); diff != "" {
			t.Fatalf("prompt changed in a round trip (-first +second):\n%s", diff)
		}
	})
}
