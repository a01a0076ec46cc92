package server

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"fmt"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/server/tlsconf/tlstest"
	"github.com/zkraft/zkraft/server/ztest"
)

// tlsFiles are the certificates and stores of a TLS test, made when it runs: the
// servers' key store (JKS, by keytool) and trust store (PKCS12, by keytool), and
// clients' certificates as PEM files, JKS key stores and tls.Certificates.
type tlsFiles struct {
	dir      string
	ca       *tlstest.CA
	password string
	keyStore string // the servers' (JKS)
	trust    string // the CA (PKCS12)
	caPEM    string
	clients  map[string]*tlsClient
}

type tlsClient struct {
	leaf     *tlstest.Leaf
	pem      string // key and certificate
	certPEM  string
	keyPEM   string
	keyStore string // JKS, made on demand by jks()
}

// Subjects of the test clients. "tricky" has what RFC 2253 printing must get right:
// several values of one attribute, characters to escape, attributes Java prints as
// OIDs with hex values.
var tlsClientNames = map[string]pkix.Name{
	"client1": {CommonName: "client1", Organization: []string{"zkraft"}},
	"client2": {CommonName: "client2", Organization: []string{"zkraft"}},
	"admin":   {CommonName: "admin", Organization: []string{"zkraft"}},
	"solo":    {CommonName: "solo"},
	"tricky": {CommonName: `Smith, John "J" <x+y=z;#>`, Country: []string{"NZ"},
		OrganizationalUnit: []string{"ops", " padded "}, SerialNumber: "42",
		ExtraNames: []pkix.AttributeTypeAndValue{
			{Type: asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 1}, Value: "john@example.com"},
			{Type: asn1.ObjectIdentifier{0, 9, 2342, 19200300, 100, 1, 25}, Value: "example"},
		}},
}

func newTLSFiles(t *testing.T) *tlsFiles {
	t.Helper()
	tlstest.RequireKeytool(t)
	dir := t.TempDir()
	f := &tlsFiles{dir: dir, ca: tlstest.NewCA(t, "zkraft test CA"), password: "changeit1", clients: map[string]*tlsClient{}}
	server := f.ca.Issue(t, tlstest.Options{Subject: pkix.Name{CommonName: "server"}})
	f.keyStore = server.KeytoolKeyStore(t, dir, filepath.Join(dir, "server.jks"), "JKS", f.password)
	f.trust = f.ca.KeytoolTrustStore(t, dir, filepath.Join(dir, "trust.p12"), "PKCS12", f.password)
	f.caPEM = tlstest.WriteFile(t, filepath.Join(dir, "ca.pem"), f.ca.CertPEM())
	for name, subject := range tlsClientNames {
		f.addClient(t, name, f.ca.Issue(t, tlstest.Options{Subject: subject}))
	}
	other := tlstest.NewCA(t, "another CA")
	f.addClient(t, "untrusted", other.Issue(t, tlstest.Options{Subject: pkix.Name{CommonName: "untrusted"}}))
	f.addClient(t, "expired", f.ca.Issue(t, tlstest.Options{Subject: pkix.Name{CommonName: "expired"},
		NotBefore: time.Now().Add(-72 * time.Hour), NotAfter: time.Now().Add(-24 * time.Hour)}))
	return f
}

func (f *tlsFiles) addClient(t *testing.T, name string, leaf *tlstest.Leaf) {
	c := &tlsClient{leaf: leaf}
	c.pem = leaf.WritePEM(t, filepath.Join(f.dir, name+".pem"))
	c.certPEM = tlstest.WriteFile(t, filepath.Join(f.dir, name+".crt"), leaf.CertPEM())
	c.keyPEM = tlstest.WriteFile(t, filepath.Join(f.dir, name+".key"), leaf.KeyPEM(t))
	f.clients[name] = c
}

// jks is the client's JKS key store (for Java clients), made once.
func (f *tlsFiles) jks(t *testing.T, name string) string {
	c := f.clients[name]
	if c.keyStore == "" {
		c.keyStore = c.leaf.KeytoolKeyStore(t, f.dir, filepath.Join(f.dir, name+".jks"), "JKS", f.password)
	}
	return c.keyStore
}

// serverOptions configures ZooKeeper and zkraft alike for TLS: Netty, a secure client
// port, the stores in zoo.cfg, their passwords as -D flags (JVMFLAGS for zkraft), and
// admin as the x509 super user.
func (f *tlsFiles) serverOptions(t *testing.T, securePort int, extra map[string]string) ztest.Options {
	cfg := map[string]string{
		"serverCnxnFactory":                    "org.apache.zookeeper.server.NettyServerCnxnFactory",
		"ssl.keyStore.location":                f.keyStore,
		"ssl.trustStore.location":              f.trust,
		"X509AuthenticationProvider.superUser": "CN=admin,O=zkraft",
	}
	if securePort != 0 {
		cfg["secureClientPort"] = fmt.Sprint(securePort)
	}
	for k, v := range extra {
		cfg[k] = v
	}
	return ztest.Options{Logf: t.Logf, ExtraConfig: cfg, JVMFlags: []string{
		"-Dzookeeper.ssl.keyStore.password=" + f.password, "-Dzookeeper.ssl.trustStore.password=" + f.password}}
}

// clientTLS is a Go client's TLS config with the named certificate ("" for none).
func (f *tlsFiles) clientTLS(name string) *tls.Config {
	roots := x509.NewCertPool()
	roots.AddCert(f.ca.Cert)
	cfg := &tls.Config{RootCAs: roots, ServerName: "127.0.0.1"}
	if c := f.clients[name]; c != nil {
		cfg.Certificates = []tls.Certificate{{Certificate: [][]byte{c.leaf.Cert.Raw}, PrivateKey: c.leaf.Key, Leaf: c.leaf.Cert}}
	}
	return cfg
}

// zkOverTLS connects go-zookeeper over TLS with the named certificate.
func (f *tlsFiles) zkOverTLS(t *testing.T, addr, name string) *zk.Conn {
	t.Helper()
	return zkConnect(t, addr, tlsDialer(f.clientTLS(name)))
}

// tlsDialer is a go-zookeeper dialer over TLS with cfg.
func tlsDialer(cfg *tls.Config) zk.Dialer {
	return func(network, address string, timeout time.Duration) (net.Conn, error) {
		nc, err := net.DialTimeout(network, address, timeout)
		if err != nil {
			return nil, err
		}
		// The handshake gets 10 s of its own: go-zookeeper's dial timeout is 1 s, and a
		// loaded machine can keep a JVM's first handshake past that; the client would
		// give up and dial again, and the server count a failed handshake.
		tc := tls.Client(nc, cfg)
		tc.SetDeadline(time.Now().Add(10 * time.Second))
		if err := tc.Handshake(); err != nil {
			nc.Close()
			return nil, err
		}
		tc.SetDeadline(time.Time{})
		return tc, nil
	}
}

// zkConnect connects go-zookeeper (through dial, if not nil) and waits for its session.
func zkConnect(t *testing.T, addr string, dial zk.Dialer) *zk.Conn {
	t.Helper()
	if dial == nil {
		dial = func(network, address string, timeout time.Duration) (net.Conn, error) {
			return net.DialTimeout(network, address, timeout)
		}
	}
	c, events, err := zk.Connect([]string{addr}, 10*time.Second, zk.WithDialer(dial), zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	deadline := time.After(15 * time.Second)
	for {
		select {
		case ev := <-events:
			if ev.State == zk.StateHasSession {
				return c
			}
		case <-deadline:
			t.Fatalf("no session with %s", addr)
		}
	}
}
