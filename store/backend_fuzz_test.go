package store

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzUnmarshalEntry feeds arbitrary bytes (an entry as another backend,
// the cluster's, stores it) to UnmarshalEntry: it must not panic, and what
// it accepts must survive MarshalEntry → UnmarshalEntry unchanged after the
// first normalisation.
func FuzzUnmarshalEntry(f *testing.F) {
	f.Add([]byte(`{"seq":0,"type":"message","created_ms":1700000000000,"updated_ms":1700000000001,"data":{"role":"user","text":"hi"}}`))
	f.Add([]byte(`{"seq":3,"type":"tool_call","created_ms":1,"updated_ms":0,"data":{"id":"c1","status":"in_progress","input":{"command": "ls"}}}`))
	f.Add([]byte(`{"seq":-1,"type":"meta","data":null}`))
	f.Add([]byte(`{"seq":1,"type":"hologram","data":{}}`))
	f.Add([]byte(`{"seq":1,"type":"plan"}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := UnmarshalEntry(b)
		if err != nil {
			return
		}
		m1, err := MarshalEntry(e)
		if err != nil {
			t.Fatalf("MarshalEntry(%#v): %v", e, err)
		}
		e2, err := UnmarshalEntry(m1)
		if err != nil {
			t.Fatalf("UnmarshalEntry(%s) of a marshalled entry: %v", m1, err)
		}
		m2, err := MarshalEntry(e2)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(m1, m2) {
			t.Fatalf("encoding not stable:\n%s\n%s", m1, m2)
		}
		e3, err := UnmarshalEntry(m2)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(e2, e3); diff != "" {
			t.Fatalf("entry changed in a round trip (-first +second):\n%s", diff)
		}
	})
}
