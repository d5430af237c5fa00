package edge

import "testing"

// The results bucket is outside input: a record decodes only with the edge
// that wrote it, and a result's error always has a kind.
func FuzzDecodeRecord(f *testing.F) {
	f.Add([]byte(`{"edge":"e1","began":"2026-11-25T22:00:00Z"}`))
	f.Add([]byte(`{"edge":"e1","began":"2026-11-25T22:00:00Z","result":{"handle":{"ID":"1"}}}`))
	f.Add([]byte(`{"edge":"e1","result":{"err":{"message":"x"}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		rec, ok := decodeRecord(b)
		if !ok {
			return
		}
		if rec.Edge == "" || (rec.Result != nil && rec.Result.Err != nil && rec.Result.Err.Err() == nil) {
			t.Fatalf("%q decoded to %+v", b, rec)
		}
	})
}
