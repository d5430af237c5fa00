package acpwire

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzDecode checks that Decode never panics, rejects every line that
// encoding/json rejects, and otherwise reads a line as the encoding/json
// reference does: the same frames are accepted and every extracted field
// (method, id, sessionUpdate, text and the rest) agrees.
func FuzzDecode(f *testing.F) {
	for _, file := range streamFiles(f) {
		for _, line := range readLines(f, file) {
			f.Add(line)
		}
	}
	for _, tc := range decodeTests {
		f.Add([]byte(tc.line))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		var fr Frame
		err := Decode(line, &fr)
		if !json.Valid(line) {
			if err == nil {
				t.Fatalf("Decode accepted invalid JSON %q", line)
			}
			return
		}
		want, refErr := refDecode(line)
		if (err == nil) != (refErr == nil) {
			t.Fatalf("Decode error = %v, reference error = %v for %q", err, refErr, line)
		}
		if err != nil {
			return
		}
		if diff := cmp.Diff(want, gotFrame(&fr)); diff != "" {
			t.Fatalf("frame mismatch for %q (-want +got):\n%s", line, diff)
		}
		if id := fr.IDString(); len(fr.ID) > 0 && fr.ID[0] == '"' {
			var s string
			if err := json.Unmarshal(fr.ID, &s); err != nil || id != `"`+s+`"` {
				t.Fatalf("IDString() = %q, want %q", id, `"`+s+`"`)
			}
		}
	})
}
