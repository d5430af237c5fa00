package channeltest

import (
	"bytes"
	"encoding/json"
	"testing"
)

func encodingJSON(t *testing.T, o Op) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(o); err != nil {
		t.Fatal(err)
	}
	return string(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

// FuzzAppendJSON: AppendJSON writes exactly what encoding/json writes.
func FuzzAppendJSON(f *testing.F) {
	for _, s := range []string{"", "plain", "quote \" backslash \\ <html> & done", "\n\t\r\b\f\x00\x1f\x7f", "é 你好 👩‍💻", "\u2028\u2029", "bad \xff\xfe utf8", "\xed\xa0\x80"} {
		f.Add("send", s, "k", true)
	}
	f.Fuzz(func(t *testing.T, op, text, key string, opts bool) {
		o := Op{Op: op, Msg: "m1", Kind: "text", Key: key, Text: text, StopReason: text}
		if opts {
			o.Options = []string{key, text}
			o.File, o.ContentType, o.Bytes = key, text, len(text)-3
		}
		want := encodingJSON(t, o)
		if got := string(o.AppendJSON(nil)); got != want {
			t.Errorf("AppendJSON = %s\nencoding/json = %s", got, want)
		}
	})
}
