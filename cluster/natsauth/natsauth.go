// Package natsauth makes and reads the credentials of a gateway cluster's
// NATS, as gateway nats keeps them in its auth directory: an NKey user per
// role (edge, worker, and an admin for operators' tools), the edges'
// signing key and its public half for the workers, and a certificate
// authority with the server's certificate for TLS. It also says what each
// role may publish and subscribe to (Permissions), which the NATS server
// enforces.
package natsauth

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"
)

// The files of an auth directory. Every file is 0600 and the directory
// 0700. What each machine needs:
//
//   - the NATS node: all of them (it reads the users' public keys from
//     the seeds, and serves TLS with server.pem);
//   - an edge: EdgeNKey (cluster.nats.nkey), EdgeSigningKey
//     (cluster.signingKey) and CA (cluster.nats.tls.ca);
//   - a worker: WorkerNKey (cluster.nats.nkey), EdgeKeys
//     (cluster.edgeKeys) and CA.
const (
	EdgeNKey       = "edge.nk"
	WorkerNKey     = "worker.nk"
	AdminNKey      = "admin.nk"
	EdgeSigningKey = "edge-signing.nk"
	EdgeKeys       = "edge-keys.pub"
	CA             = "ca.pem"
	CAKey          = "ca-key.pem"
	ServerCert     = "server.pem"
	ServerKey      = "server-key.pem"
	RoutePassword  = "route-password"
)

// Dir is an auth directory, made or read by Ensure.
type Dir struct {
	Path string
	// The users' public NKeys.
	Edge, Worker, Admin string
	// SigningKey is the edges' public signing key.
	SigningKey string
	// Route is the password the nodes' routes ask of each other.
	Route string
	cert  tls.Certificate
	pool  *x509.CertPool
}

// File is the path of one of the directory's files.
func (d *Dir) File(name string) string { return filepath.Join(d.Path, name) }

// Ensure makes the auth directory dir when it holds no credentials yet
// (the server's certificate valid for hosts, besides localhost, 127.0.0.1
// and ::1), and reads it. A directory made before is used as it is: its
// keys and certificates stay (delete it to make new ones, then copy the
// new files to every edge and worker).
func Ensure(dir string, hosts []string) (*Dir, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("natsauth: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, fmt.Errorf("natsauth: %w", err)
	}
	for _, f := range []string{EdgeNKey, WorkerNKey, AdminNKey, EdgeSigningKey} {
		if err := ensureSeed(filepath.Join(dir, f)); err != nil {
			return nil, err
		}
	}
	if err := ensureCerts(dir, hosts); err != nil {
		return nil, err
	}
	routeFile := filepath.Join(dir, RoutePassword)
	if _, err := os.Stat(routeFile); errors.Is(err, os.ErrNotExist) {
		var b [24]byte
		_, _ = rand.Read(b[:])
		if err := writeNew(routeFile, []byte(hex.EncodeToString(b[:])+"\n")); err != nil {
			return nil, err
		}
	}
	d := &Dir{Path: dir}
	var err error
	for _, k := range []struct {
		file string
		to   *string
	}{{EdgeNKey, &d.Edge}, {WorkerNKey, &d.Worker}, {AdminNKey, &d.Admin}, {EdgeSigningKey, &d.SigningKey}} {
		if *k.to, err = publicOf(filepath.Join(dir, k.file)); err != nil {
			return nil, err
		}
	}
	route, err := os.ReadFile(routeFile)
	if err != nil {
		return nil, fmt.Errorf("natsauth: %w", err)
	}
	d.Route = string(bytes.TrimSpace(route))
	pubFile := filepath.Join(dir, EdgeKeys)
	if _, err := os.Stat(pubFile); errors.Is(err, os.ErrNotExist) {
		body := "# The edges' public signing keys, one a line (cluster.edgeKeys of every worker).\n" + d.SigningKey + "\n"
		if err := os.WriteFile(pubFile, []byte(body), 0o600); err != nil {
			return nil, fmt.Errorf("natsauth: %w", err)
		}
	}
	if d.cert, err = tls.LoadX509KeyPair(filepath.Join(dir, ServerCert), filepath.Join(dir, ServerKey)); err != nil {
		return nil, fmt.Errorf("natsauth: server certificate: %w", err)
	}
	ca, err := os.ReadFile(filepath.Join(dir, CA))
	if err != nil {
		return nil, fmt.Errorf("natsauth: %w", err)
	}
	d.pool = x509.NewCertPool()
	if !d.pool.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("natsauth: %s holds no certificate", CA)
	}
	return d, nil
}

// ensureSeed writes a new NKey user seed to file unless it exists.
func ensureSeed(file string) error {
	if _, err := os.Stat(file); err == nil {
		return nil
	}
	kp, err := nkeys.CreateUser()
	if err != nil {
		return fmt.Errorf("natsauth: %w", err)
	}
	seed, err := kp.Seed()
	if err != nil {
		return fmt.Errorf("natsauth: %w", err)
	}
	return writeNew(file, append(seed, '\n'))
}

// writeNew writes a 0600 file that must not exist yet.
func writeNew(file string, b []byte) error {
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("natsauth: %w", err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("natsauth: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("natsauth: %w", err)
	}
	return nil
}

// publicOf reads a seed file's public key.
func publicOf(file string) (string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("natsauth: %w", err)
	}
	kp, err := nkeys.FromSeed(bytes.TrimSpace(b))
	if err != nil {
		return "", fmt.Errorf("natsauth: %s: %w", file, err)
	}
	return kp.PublicKey()
}

// ensureCerts makes a CA and a server certificate signed by it unless the
// certificate exists.
func ensureCerts(dir string, hosts []string) error {
	if _, err := os.Stat(filepath.Join(dir, ServerCert)); err == nil {
		return nil
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("natsauth: %w", err)
	}
	now := time.Now()
	ca := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: "gateway NATS CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.AddDate(10, 0, 0),
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign, BasicConstraintsValid: true, IsCA: true, MaxPathLenZero: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return fmt.Errorf("natsauth: CA: %w", err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("natsauth: %w", err)
	}
	srv := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: "gateway NATS"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.AddDate(10, 0, 0),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			srv.IPAddresses = append(srv.IPAddresses, ip)
		} else if h != "" && !slices.Contains(srv.DNSNames, h) {
			srv.DNSNames = append(srv.DNSNames, h)
		}
	}
	srvDER, err := x509.CreateCertificate(rand.Reader, srv, caCert, &key.PublicKey, caKey)
	if err != nil {
		return fmt.Errorf("natsauth: server certificate: %w", err)
	}
	caKeyDER, err := x509.MarshalECPrivateKey(caKey)
	if err != nil {
		return fmt.Errorf("natsauth: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return fmt.Errorf("natsauth: %w", err)
	}
	// The certificate last: Ensure takes a directory with it as made.
	for _, f := range []struct {
		name, typ string
		der       []byte
	}{{CA, "CERTIFICATE", caDER}, {CAKey, "EC PRIVATE KEY", caKeyDER}, {ServerKey, "EC PRIVATE KEY", keyDER}, {ServerCert, "CERTIFICATE", srvDER}} {
		if err := writeNew(filepath.Join(dir, f.name), pem.EncodeToMemory(&pem.Block{Type: f.typ, Bytes: f.der})); err != nil {
			return err
		}
	}
	return nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 126))
	return n
}

// ServerTLS is the NATS server's TLS configuration.
func (d *Dir) ServerTLS() *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{d.cert}, MinVersion: tls.VersionTLS12}
}

// ClientTLS is a client's TLS configuration trusting the directory's CA
// (what cluster.nats.tls.ca gives a role).
func (d *Dir) ClientTLS() *tls.Config {
	return &tls.Config{RootCAs: d.pool, MinVersion: tls.VersionTLS12}
}

// RouteTLS is the TLS of the routes between nodes: each presents the
// server certificate and verifies the other's against the CA (every node
// has a copy of the directory).
func (d *Dir) RouteTLS() *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{d.cert}, RootCAs: d.pool, ClientCAs: d.pool,
		ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12}
}

// Users are the NATS users of cluster (cluster.name) with their
// permissions: the edge, the worker and the admin.
func (d *Dir) Users(cluster string) []*server.NkeyUser {
	return []*server.NkeyUser{
		{Nkey: d.Edge, Permissions: Permissions(RoleEdge, cluster)},
		{Nkey: d.Worker, Permissions: Permissions(RoleWorker, cluster)},
		{Nkey: d.Admin}, // every subject: an operator's tools
	}
}

// RoleFiles are the files of the directory that a machine of role needs
// (its NKey, its signing key or the edges' keys, the CA), nil for another
// role.
func RoleFiles(role string) []string {
	switch role {
	case RoleEdge:
		return []string{EdgeNKey, EdgeSigningKey, CA}
	case RoleWorker:
		return []string{WorkerNKey, EdgeKeys, CA}
	}
	return nil
}

// Export writes the files of role (RoleFiles) into dir, 0600 each, in
// place of what it held: what an edge's or a worker's machine gets, and
// nothing of the other role's (a worker never holds the edges' signing
// key).
func (d *Dir) Export(role, dir string) error {
	files := RoleFiles(role)
	if files == nil {
		return fmt.Errorf("natsauth: no role %q", role)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("natsauth: export %s: %w", role, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(d.File(f))
		if err != nil {
			return fmt.Errorf("natsauth: export %s: %w", role, err)
		}
		tmp := filepath.Join(dir, "."+f+".new")
		if err := os.WriteFile(tmp, b, 0o600); err != nil {
			return fmt.Errorf("natsauth: export %s: %w", role, err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, f)); err != nil {
			return fmt.Errorf("natsauth: export %s: %w", role, err)
		}
	}
	return nil
}
