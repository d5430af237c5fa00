package store

import (
	"reflect"
	"testing"
)

// FuzzDecodeOpenMessages feeds arbitrary bytes (a thread's open messages
// as either backend keeps them, of either version) to DecodeOpenMessages: it must not
// panic, what it accepts has a message id and lines for each message, and
// survives encoding and decoding unchanged.
func FuzzDecodeOpenMessages(f *testing.F) {
	f.Add([]byte(`[{"key":"tool:t1","id":"m1","lines":[{"key":"t1","text":"🛠️ make · cancelled"}]}]`))
	f.Add([]byte(`[{"key":"card:1","id":"m2","card":true,"lines":[{"key":"a","text":"x"},{"key":"b","text":"y"}]}]`))
	f.Add([]byte(`[{"key":"tool:t1","id":"","lines":[]}]`))
	f.Add([]byte(`{"v":1,"messages":[{"key":"card:1","id":"m2","card":true,"lines":[{"key":"a","text":"x"}]}]}`))
	f.Add([]byte(`{"v":1,"messages":null}`))
	f.Add([]byte(`{"v":3,"messages":[]}`))
	f.Add([]byte(` []`))
	f.Add([]byte(`null`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		ms, err := DecodeOpenMessages(b)
		if err != nil {
			return
		}
		for _, m := range ms {
			if m.ID == "" || len(m.Lines) == 0 {
				t.Fatalf("accepted %+v", m)
			}
		}
		enc, err := EncodeOpenMessages(ms)
		if err != nil {
			t.Fatal(err)
		}
		again, err := DecodeOpenMessages(enc)
		if err != nil || !reflect.DeepEqual(again, ms) {
			t.Fatalf("%s decoded as %+v, %v; want %+v", enc, again, err, ms)
		}
	})
}
