package cluster

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/nats-io/nkeys"
)

// Headers of a signed inbound message: the edge's public signing key and
// its signature over the event's canonical bytes (signedBytes).
const (
	hdrSigner = "Gateway-Signer"
	hdrSig    = "Gateway-Sig"
)

// Signer signs the inbound events an edge publishes, with the edge's
// signing key (an ed25519 key in the NKey encoding; gateway nats makes
// one in its auth directory, edge-signing.nk). Workers accept an event
// only when its signature verifies under one of the keys they trust
// (EdgeKeys), so neither a holder of a worker's NATS credentials nor
// anyone who can write to the inbound stream can speak for an author.
type Signer struct {
	kp  nkeys.KeyPair
	pub string
}

// NewSigner returns a Signer of the key pair seed (an NKey seed, "S...").
func NewSigner(seed []byte) (*Signer, error) {
	kp, err := nkeys.FromSeed(bytes.TrimSpace(seed))
	if err != nil {
		return nil, fmt.Errorf("cluster: signing key: %w", err)
	}
	pub, err := kp.PublicKey()
	if err != nil {
		return nil, fmt.Errorf("cluster: signing key: %w", err)
	}
	return &Signer{kp: kp, pub: pub}, nil
}

// LoadSigner reads the seed file of cluster.signingKey.
func LoadSigner(file string) (*Signer, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("cluster.signingKey: %w", err)
	}
	s, err := NewSigner(b)
	if err != nil {
		return nil, fmt.Errorf("cluster.signingKey: %s: %w", file, err)
	}
	return s, nil
}

// PublicKey is the key workers verify this signer's events with.
func (s *Signer) PublicKey() string { return s.pub }

// sign sets ev's signer and signature.
func (s *Signer) sign(ev *Event) error {
	sig, err := s.kp.Sign(signedBytes(*ev))
	if err != nil {
		return fmt.Errorf("cluster: signing %s: %w", ev.ID, err)
	}
	ev.Signer, ev.Sig = s.pub, base64.RawURLEncoding.EncodeToString(sig)
	return nil
}

// signedBytes are the bytes an event's signature covers: a domain tag,
// then the id, the thread and the agent (the headers a worker routes
// by), each after its length, then the edge's encoding of the event.
func signedBytes(ev Event) []byte {
	b := []byte("gateway inbound event v1\x00")
	for _, s := range []string{ev.ID, ev.Thread, ev.Agent} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return append(b, ev.Data...)
}

// EdgeKeys are the edges' public signing keys a worker trusts
// (cluster.edgeKeys).
type EdgeKeys struct {
	keys map[string]nkeys.KeyPair
}

// ErrUnsigned and ErrBadSignature are Verify's refusals.
var (
	ErrUnsigned     = errors.New("cluster: inbound event without a signature")
	ErrBadSignature = errors.New("cluster: inbound event whose signature does not verify under a trusted edge key")
)

// NewEdgeKeys returns the keys of pubs (public NKeys, "U..." or any
// other NKey prefix); at least one.
func NewEdgeKeys(pubs ...string) (*EdgeKeys, error) {
	k := &EdgeKeys{keys: map[string]nkeys.KeyPair{}}
	for _, p := range pubs {
		kp, err := nkeys.FromPublicKey(p)
		if err != nil {
			return nil, fmt.Errorf("edge key %q: %w", p, err)
		}
		k.keys[p] = kp
	}
	if len(k.keys) == 0 {
		return nil, errors.New("no edge key")
	}
	return k, nil
}

// LoadEdgeKeys reads the file of cluster.edgeKeys: one public key a
// line; blank lines and lines starting with # are skipped.
func LoadEdgeKeys(file string) (*EdgeKeys, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("cluster.edgeKeys: %w", err)
	}
	defer f.Close()
	var pubs []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" && !strings.HasPrefix(l, "#") {
			pubs = append(pubs, l)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("cluster.edgeKeys: %s: %w", file, err)
	}
	k, err := NewEdgeKeys(pubs...)
	if err != nil {
		return nil, fmt.Errorf("cluster.edgeKeys: %s: %w", file, err)
	}
	return k, nil
}

// Verify reports whether ev was signed by a trusted edge: ErrUnsigned,
// ErrBadSignature, or nil.
func (k *EdgeKeys) Verify(ev Event) error {
	if ev.Sig == "" || ev.Signer == "" {
		return ErrUnsigned
	}
	kp, ok := k.keys[ev.Signer]
	if !ok {
		return fmt.Errorf("%w (signer %s is not trusted)", ErrBadSignature, ev.Signer)
	}
	sig, err := base64.RawURLEncoding.Strict().DecodeString(ev.Sig)
	if err != nil || kp.Verify(signedBytes(ev), sig) != nil {
		return ErrBadSignature
	}
	return nil
}
