package wire_test

import (
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/cluster"
	"github.com/acpgw/gateway/cluster/wire"
)

// Whatever reaches an edge or a worker over NATS is outside input: the
// decoders never panic, and what they take is what the gateway can act on.
func FuzzDecodeInbound(f *testing.F) {
	f.Add([]byte(`{"thread":{"Platform":"p","Channel":"c","Thread":"t"},"id":"1","text":"hi"}`))
	f.Add([]byte(`{"thread":{"Platform":"p","Channel":"c","Thread":"t"},"id":"1","suggest":true,"edge":"e"}`))
	f.Add([]byte(`{"id":"1","files":[{"Data":"AAE="}]}`))
	f.Add([]byte(`{"thread":{"Platform":"p","Channel":"c","Thread":"t"},"id":"takeover:p/c/t:1","takeover":true}`))
	f.Add([]byte(`{"thread":{"Platform":"p","Channel":"c","Thread":"t"},"id":"1","takeover":true,"stop":true}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		w, err := wire.DecodeInbound(b)
		if err != nil {
			return
		}
		if w.ID == "" || w.Thread.Platform == "" || w.Thread.Channel == "" || w.Thread.Thread == "" {
			t.Fatalf("%q taken without an id or a thread", b)
		}
		if (w.Suggest || w.Reply || w.Fetch) && w.Edge == "" {
			t.Fatalf("%q taken with a callback and no edge", b)
		}
		if w.TakeOver && (w.Text != "" || len(w.Files) > 0 || w.Inbound().Intent() != channels.IntentMessage || w.Fetch || w.Suggest || w.Reply) {
			t.Fatalf("%q taken as a take-over with something else", b)
		}
	})
}

func FuzzDecodeOp(f *testing.F) {
	f.Add([]byte(`{"key":"k","op":"post","message":{"Kind":"text","Text":"x"}}`))
	f.Add([]byte(`{"key":"k","op":"card","rows":[{}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if o, err := wire.DecodeOp(b); err == nil && (o.Key == "" || o.Op == "") {
			t.Fatalf("%q taken without a key or an op", b)
		}
	})
}

func FuzzDecodeResult(f *testing.F) {
	f.Add([]byte(`{"handle":{"Thread":{"Platform":"p"},"ID":"1"}}`))
	f.Add([]byte(`{"err":{"kind":"rate_limit","retryAfter":1000}}`))
	f.Add([]byte(`{"page":{"messages":[{"id":"1"}]}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := wire.DecodeResult(b)
		if err != nil {
			return
		}
		if r.Err != nil && r.Err.Err() == nil {
			t.Fatalf("%q: an error decoded to nil", b)
		}
	})
}

func FuzzDecodeCaps(f *testing.F) {
	f.Add([]byte(`{"platform":"p","caps":["edit"],"limits":{"MaxMessageChars":2000}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if c, err := wire.DecodeCaps(b); err == nil && c.Platform == "" {
			t.Fatalf("%q taken without a platform", b)
		}
	})
}

func FuzzDecodeLive(f *testing.F) {
	f.Add([]byte(`{"platform":"discord","edge":"e0","ttl":10000000000}`))
	f.Add([]byte(`{"platform":"discord","edge":"a.b","ttl":1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := wire.DecodeLive(b)
		if err != nil {
			return
		}
		if l.TTL <= 0 || !cluster.ValidName(l.Platform) || !cluster.ValidName(l.Edge) {
			t.Fatalf("%q taken with ttl %v, platform %q, edge %q", b, l.TTL, l.Platform, l.Edge)
		}
	})
}
