package server

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/server/tlsconf/tlstest"
	"github.com/zkraft/zkraft/server/ztest"
)

// pemTLS is an in-process server's TLS material as PEM files (no keytool needed).
type pemTLS struct {
	ca       *tlstest.CA
	keyStore string
	trust    string
}

func newPEMTLS(t *testing.T) *pemTLS {
	dir := t.TempDir()
	ca := tlstest.NewCA(t, "in-process CA")
	server := ca.Issue(t, tlstest.Options{Subject: pkix.Name{CommonName: "server-1"}})
	return &pemTLS{ca: ca, keyStore: server.WritePEM(t, filepath.Join(dir, "server.pem")),
		trust: tlstest.WriteFile(t, filepath.Join(dir, "ca.pem"), ca.CertPEM())}
}

// startTLSServer starts an in-process server with a secure client port (or, with
// unified, port unification on the client port) over p's stores.
func startTLSServer(t *testing.T, p *pemTLS, unified bool, mod func(*Config)) *Server {
	return startServer(t, func(c *Config) {
		c.SSL = map[string]string{"ssl.keyStore.location": p.keyStore, "ssl.trustStore.location": p.trust}
		if unified {
			c.PortUnification = true
		} else {
			port, err := ztest.FreePort()
			if err != nil {
				t.Fatal(err)
			}
			c.SecureClientPort, c.SecureClientPortAddress = port, "127.0.0.1"
		}
		if mod != nil {
			mod(c)
		}
	})
}

func (p *pemTLS) client(t *testing.T, cn string) *tls.Config {
	leaf := p.ca.Issue(t, tlstest.Options{Subject: pkix.Name{CommonName: cn}})
	roots := x509.NewCertPool()
	roots.AddCert(p.ca.Cert)
	return &tls.Config{RootCAs: roots, ServerName: "127.0.0.1",
		Certificates: []tls.Certificate{{Certificate: [][]byte{leaf.Cert.Raw}, PrivateKey: leaf.Key}}}
}

// TestTLSHandshakeDeadline: a client that stalls its handshake is closed at the
// deadline and counted, while a TLS client keeps working.
func TestTLSHandshakeDeadline(t *testing.T) {
	p := newPEMTLS(t)
	s := startTLSServer(t, p, false, func(c *Config) { c.TLSHandshakeTimeout = 300 * time.Millisecond })
	good := zkConnect(t, s.SecureAddr().String(), tlsDialer(p.client(t, "good")))
	stalled, err := net.Dial("tcp", s.SecureAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.Close()
	start := time.Now()
	if err := closedWithin(stalled, 3*time.Second); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 250*time.Millisecond {
		t.Errorf("closed after %v, before the deadline", took)
	}
	if _, err := good.Create("/still", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("good client: %v", err)
	}
	if n := s.stats.closed[closedTLSHandshake].Load(); n != 1 {
		t.Errorf("tls_handshake closes: %d", n)
	}
}

// TestTLSKeyStoreReload: a new key store file is used from the next handshake on;
// connections made before keep working.
func TestTLSKeyStoreReload(t *testing.T) {
	p := newPEMTLS(t)
	s := startTLSServer(t, p, false, nil)
	addr := s.SecureAddr().String()
	serverCN := func() string {
		t.Helper()
		c, err := tls.Dial("tcp", addr, p.client(t, "probe"))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		return c.ConnectionState().PeerCertificates[0].Subject.CommonName
	}
	before := zkConnect(t, addr, tlsDialer(p.client(t, "before")))
	if cn := serverCN(); cn != "server-1" {
		t.Fatalf("server certificate %q", cn)
	}
	renewed := p.ca.Issue(t, tlstest.Options{Subject: pkix.Name{CommonName: "server-2"}})
	tmp := p.keyStore + ".new"
	renewed.WritePEM(t, tmp)
	later := time.Now().Add(time.Second)
	os.Chtimes(tmp, later, later)
	if err := os.Rename(tmp, p.keyStore); err != nil { // as a certificate manager replaces it
		t.Fatal(err)
	}
	if cn := serverCN(); cn != "server-2" {
		t.Fatalf("after the key store changed: server certificate %q", cn)
	}
	if _, err := before.Create("/after-reload", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("connection made before the reload: %v", err)
	}
}

// TestPortUnificationGivesX509Identity: on a unified port zkraft registers the x509
// scheme without authProvider.x509 (ZooKeeper 3.8's standalone needs it), so a TLS
// client has its identity and a plaintext client beside it does not.
func TestPortUnificationGivesX509Identity(t *testing.T) {
	p := newPEMTLS(t)
	s := startTLSServer(t, p, true, nil)
	addr := s.Addr().String()
	secure := zkConnect(t, addr, tlsDialer(p.client(t, "unified")))
	plain := zkConnect(t, addr, nil)
	if _, err := secure.Create("/u", nil, 0, zk.AuthACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	acl, _, err := secure.GetACL("/u")
	if err != nil || len(acl) != 1 || acl[0] != (zk.ACL{Perms: zk.PermAll, Scheme: "x509", ID: "CN=unified"}) {
		t.Fatalf("auth ACL of a TLS client: %v %v", acl, err)
	}
	if _, _, err := plain.Get("/u"); zkOutcome(err) != "NoAuth" {
		t.Fatalf("plaintext client read an x509 node: %v", err)
	}
	if out, err := ztest.FourLetter(addr, "ruok"); err != nil || out != "imok" {
		t.Fatalf("ruok on the unified port: %q %v", out, err)
	}
}

// TestTLSOnlyServer: clientPort -1 (zoo.cfg with secureClientPort and no clientPort)
// opens no plaintext port; conf over TLS shows clientPort=-1 as ZooKeeper's does.
func TestTLSOnlyServer(t *testing.T) {
	p := newPEMTLS(t)
	s := startTLSServer(t, p, false, func(c *Config) { c.ClientPort = -1 })
	if s.Addr() != nil {
		t.Fatalf("a plaintext port is open at %v", s.Addr())
	}
	c := zkConnect(t, s.SecureAddr().String(), tlsDialer(p.client(t, "only")))
	if _, err := c.Create("/tls-only", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	tc, err := tls.Dial("tcp", s.SecureAddr().String(), p.client(t, "conf"))
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	tc.SetDeadline(time.Now().Add(5 * time.Second))
	tc.Write([]byte("conf"))
	out, _ := io.ReadAll(tc)
	if !strings.Contains(string(out), "clientPort=-1\n") {
		t.Fatalf("conf:\n%s", out)
	}
	cfg := DefaultConfig()
	cfg.ClientPort = -1
	if err := cfg.Validate(); err == nil {
		t.Fatal("no client port at all was accepted")
	}
}

// shortWriter takes at most limit bytes per Write.
type shortWriter struct {
	net.Conn
	limit int
	got   []byte
}

func (w *shortWriter) Write(b []byte) (int, error) {
	n := min(len(b), w.limit)
	w.got = append(w.got, b[:n]...)
	if n < len(b) {
		return n, os.ErrDeadlineExceeded
	}
	return n, nil
}

// TestWriteFramesConsumesWhatWasWritten: a TLS connection writes a batch of frames at
// once and, after a partial write, keeps exactly the unwritten rest for the next try.
func TestWriteFramesConsumesWhatWasWritten(t *testing.T) {
	w := &shortWriter{limit: 5}
	sc := newSecureConn(nil, nil, false)
	sc.rw = w
	bufs := net.Buffers{[]byte("abc"), []byte("defg"), []byte("hi")}
	for tries := 0; len(bufs) > 0 && tries < 10; tries++ {
		if _, err := writeFrames(sc, &bufs); err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatal(err)
		}
	}
	if string(w.got) != "abcdefghi" || len(bufs) != 0 {
		t.Fatalf("wrote %q, left %q", w.got, bufs)
	}
}

// A batch larger than tlsWriteMax is written in parts of that size, each of them its own
// Write (and so under its own write deadline), the frames consumed exactly.
func TestWriteFramesWritesLargeBatchesInParts(t *testing.T) {
	w := &shortWriter{limit: 1 << 30}
	sc := newSecureConn(nil, nil, false)
	sc.rw = w
	big := bytes.Repeat([]byte("x"), tlsWriteMax+100)
	bufs := net.Buffers{[]byte("head"), big, []byte("tail")}
	n, err := writeFrames(sc, &bufs)
	if err != nil || n != tlsWriteMax || len(w.got) != tlsWriteMax {
		t.Fatalf("first write: %d bytes, %v (wrote %d)", n, err, len(w.got))
	}
	if len(bufs) != 2 || len(bufs[0]) != 104 || string(bufs[1]) != "tail" {
		t.Fatalf("left %d buffers, the first of %d bytes", len(bufs), len(bufs[0]))
	}
	if n, err := writeFrames(sc, &bufs); err != nil || n != 108 || len(bufs) != 0 {
		t.Fatalf("second write: %d bytes, %v, %d buffers left", n, err, len(bufs))
	}
	if want := string(append(append([]byte("head"), big...), "tail"...)); string(w.got) != want {
		t.Fatal("the parts do not add up to the batch")
	}
}
