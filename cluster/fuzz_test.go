package cluster

import (
	"encoding/base64"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// A stored lease or worker entry is outside input (anyone with access to
// the bucket writes it): decoding never panics, and what decodes names an
// owner.
func FuzzDecodeLease(f *testing.F) {
	f.Add([]byte(`{"owner":"w1"}`))
	f.Add([]byte(`{"owner":""}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if v, err := decodeLease(b); err == nil && v.Owner == "" {
			t.Fatalf("%q decoded without an owner", b)
		}
	})
}

func FuzzDecodeWorker(f *testing.F) {
	f.Add([]byte(`{"id":"w1","load":3,"agents":["demo"]}`))
	f.Add([]byte(`{"id":"a.b"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if w, err := decodeWorker(b); err == nil && !nameRE.MatchString(w.ID) {
			t.Fatalf("%q decoded with id %q", b, w.ID)
		}
	})
}

// An inbound message's headers come from edges (and anyone who can
// publish): an event without an id or a thread is refused.
func FuzzEventOf(f *testing.F) {
	f.Add("slack:Ev1", "slack/T/C/1.0", "demo", []byte("x"))
	f.Add("", "t", "", []byte(nil))
	f.Add("a", "t", "", []byte("12x"))
	f.Fuzz(func(t *testing.T, id, thread, agent string, data []byte) {
		h := nats.Header{}
		h.Set(hdrSeq, string(data))
		h.Set("Nats-Msg-Id", id)
		h.Set(hdrThread, thread)
		h.Set(hdrAgent, agent)
		ev, err := eventOf(h, data)
		if err == nil && (ev.ID == "" || ev.Thread == "") {
			t.Fatalf("accepted %+v", ev)
		}
	})
}

// A thread's key is a valid bucket key and subject token, and tells
// threads apart.
func FuzzThreadKey(f *testing.F) {
	f.Add("discord/1/2", "discord/1/3")
	f.Add("a.b", "a*b")
	f.Fuzz(func(t *testing.T, a, b string) {
		ka, kb := threadKey(a), threadKey(b)
		if (a == b) != (ka == kb) {
			t.Fatalf("%q→%q, %q→%q", a, ka, b, kb)
		}
		for _, c := range ka {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				t.Fatalf("%q has key %q", a, ka)
			}
		}
		if d, err := base64.RawURLEncoding.DecodeString(ka); err != nil || string(d) != a {
			t.Fatalf("%q does not round-trip: %q", a, d)
		}
	})
}

// Placement: the least loaded worker able to run the agent; equal loads
// spread threads, the same way in every worker.
func TestPick(t *testing.T) {
	ws := []WorkerInfo{
		{ID: "a", Load: 2, Agents: []string{"demo", "codex"}},
		{ID: "b", Load: 1, Agents: []string{"demo"}},
		{ID: "c", Load: 1, Agents: []string{"demo"}},
		{ID: "d", Load: 0, Agents: []string{"claude"}},
	}
	if id, ok := pick(ws, "t", "codex"); !ok || id != "a" {
		t.Errorf("codex: %q %v, want a", id, ok)
	}
	if _, ok := pick(ws, "t", "gemini"); ok {
		t.Error("gemini: picked a worker that cannot run it")
	}
	if id, _ := pick(ws, "t", ""); id != "d" {
		t.Errorf("any agent: %q, want the least loaded, d", id)
	}
	count := map[string]int{}
	for i := range 200 {
		th := string(rune('A'+i%26)) + string(rune('0'+i/26))
		id, _ := pick(ws, th, "demo")
		if again, _ := pick([]WorkerInfo{ws[3], ws[2], ws[1], ws[0]}, th, "demo"); again != id {
			t.Fatalf("%s: %s, or %s in another order", th, id, again)
		}
		count[id]++
	}
	if count["a"] != 0 || count["b"] < 50 || count["c"] < 50 {
		t.Errorf("demo threads over b and c (equal load): %v", count)
	}
}

// Equal workers named alike (w1, w2, w3) share ties evenly.
func TestPickSpreadsTies(t *testing.T) {
	ws := []WorkerInfo{{ID: "w1"}, {ID: "w2"}, {ID: "w3"}}
	count := map[string]int{}
	for i := range 3000 {
		id, _ := pick(ws, fmt.Sprintf("web/r0/%d", i), "")
		count[id]++
	}
	for _, w := range ws {
		if n := count[w.ID]; n < 900 || n > 1100 {
			t.Errorf("%s got %d of 3000 threads, want 900 to 1100: %v", w.ID, n, count)
		}
	}
}

// Place counts what it placed into the view until the worker announces
// again: threads placed one after another fill the least loaded worker up
// to the others, then spread evenly; an announcement replaces the count.
func TestPlace(t *testing.T) {
	r := &Registry{workers: map[string]WorkerInfo{
		"a": {ID: "a", Load: 10, Agents: []string{"demo"}},
		"b": {ID: "b", Agents: []string{"demo"}},
		"c": {ID: "c", Agents: []string{"demo"}},
	}, placed: map[string]int{}, changed: make(chan struct{})}
	count := map[string]int{}
	for i := range 20 {
		id, _ := r.Place(fmt.Sprint("t", i), "demo")
		count[id]++
	}
	if count["a"] != 0 || count["b"] != 10 || count["c"] != 10 {
		t.Errorf("20 threads after loads 10, 0, 0: %v, want b and c 10 each", count)
	}
	for i := 20; i < 320; i++ {
		id, _ := r.Place(fmt.Sprint("t", i), "demo")
		count[id]++
	}
	if count["a"] != 100 || count["b"] != 110 || count["c"] != 110 {
		t.Errorf("320 threads: %v, want a 100, b and c 110", count)
	}
	if got := r.Workers(); got[1].Load != 0 {
		t.Errorf("Workers shows %+v, want the announced loads", got)
	}
	// b announces 50 threads (those placed there, and others): the
	// count placed there since is dropped.
	r.seenLocked("b", true, []byte(`{"id":"b","load":50,"agents":["demo"]}`))
	if id, _ := r.Pick("x", "demo"); id != "b" {
		t.Errorf("picked %s after b announced 50 (a and c 110), want b", id)
	}
	r.seenLocked("b", false, nil)
	if id, _ := r.Pick("x", "demo"); id == "b" {
		t.Error("picked b after it went")
	}
}

// An inbound message's signature headers are outside input (whoever may
// publish or forward one sets them): verifying never panics, and nothing
// but the edge's own signature of the very event verifies.
func FuzzVerify(f *testing.F) {
	kp, _ := nkeys.CreateUser()
	seed, _ := kp.Seed()
	s, _ := NewSigner(seed)
	keys, _ := NewEdgeKeys(s.PublicKey())
	signed := Event{ID: "web:1", Thread: "web/local/t", Data: []byte(`{}`)}
	_ = s.sign(&signed)
	f.Add(signed.ID, signed.Thread, signed.Agent, signed.Data, signed.Signer, signed.Sig)
	f.Add("", "", "", []byte(nil), "", "")
	f.Add("web:1", "web/local/t", "", []byte(`{}`), s.PublicKey(), "AAAA")
	f.Fuzz(func(t *testing.T, id, thread, agent string, data []byte, signer, sig string) {
		ev := Event{ID: id, Thread: thread, Agent: agent, Data: data, Signer: signer, Sig: sig}
		if keys.Verify(ev) == nil {
			want := Event{ID: id, Thread: thread, Agent: agent, Data: data}
			if err := s.sign(&want); err != nil || want.Sig != sig || signer != s.PublicKey() {
				t.Fatalf("%+v verified, not the edge's signature of it", ev)
			}
		}
	})
}
