package server

import (
	"crypto/tls"
	"crypto/x509/pkix"
	"fmt"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/zkraft/zkraft/server/tlsconf/tlstest"
	"github.com/zkraft/zkraft/server/ztest"
)

// firstExchange dials secure with the named client certificate ("" for none) and reports
// whether the server answers a ConnectRequest.
func firstExchange(f *tlsFiles, secure, client string) string {
	return firstExchangeWith(secure, f.clientTLS(client))
}

// firstExchangeWith is firstExchange with a client's own TLS config.
func firstExchangeWith(secure string, cfg *tls.Config) string {
	out, _ := firstExchangeState(secure, cfg)
	return out
}

// firstExchangeAs is firstExchange with leaf as the client's certificate, sent whatever
// CAs the server names, as Java's key manager would send it.
func firstExchangeAs(f *tlsFiles, secure string, leaf *tlstest.Leaf) string {
	cfg := f.clientTLS("")
	cert := tls.Certificate{Certificate: [][]byte{leaf.Cert.Raw}, PrivateKey: leaf.Key}
	cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &cert, nil }
	return firstExchangeWith(secure, cfg)
}

// firstExchangeState is firstExchangeWith, with the connection's TLS state once the
// server answered.
func firstExchangeState(secure string, cfg *tls.Config) (string, tls.ConnectionState) {
	nc, err := net.DialTimeout("tcp", secure, 5*time.Second)
	if err != nil {
		return err.Error(), tls.ConnectionState{}
	}
	tc := tls.Client(nc, cfg)
	defer tc.Close()
	// 15 s: a refusal comes at once, but a JVM's first handshake on a loaded machine can
	// take seconds, and a timeout would read as a refusal.
	tc.SetDeadline(time.Now().Add(15 * time.Second))
	if err := tc.Handshake(); err != nil {
		return "handshake refused", tls.ConnectionState{}
	}
	tc.Write(connectFrame())
	if _, err := tc.Read(make([]byte, 1)); err != nil {
		return "refused at first exchange", tls.ConnectionState{}
	}
	return "answered", tc.ConnectionState()
}

// TestNoTrustStoreMatchesZooKeeper: without ssl.trustStore.location the handshake
// trusts the system's roots (here the test CA, through SSL_CERT_FILE for zkraft and
// javax.net.ssl.trustStore for Java), but ZooKeeper's X509AuthenticationProvider, which
// checks a client's certificate again against the configured trust store, has none and
// fails every client that shows a certificate; a client without one (clientAuth=want)
// is served. (An untrusted certificate is not compared: Go's client sends none when the
// server's list of acceptable CAs names other issuers, and Java's lists its default
// roots where zkraft lists none.)
func TestNoTrustStoreMatchesZooKeeper(t *testing.T) {
	f := newTLSFiles(t)
	t.Setenv("SSL_CERT_FILE", f.caPEM)
	for _, mode := range []string{"need", "want"} {
		t.Run(mode, func(t *testing.T) {
			servers := startTLSServers(t, f, map[string]string{"ssl.clientAuth": mode}, func(o *ztest.Options) {
				delete(o.ExtraConfig, "ssl.trustStore.location")
				o.JVMFlags = append(o.JVMFlags, "-Djavax.net.ssl.trustStore="+f.trust,
					"-Djavax.net.ssl.trustStorePassword="+f.password, "-Djavax.net.ssl.trustStoreType=PKCS12")
			})
			steps := func(secure string) []string {
				var lines []string
				for _, client := range []string{"", "client1"} {
					lines = append(lines, fmt.Sprintf("client certificate %q: %s", client, firstExchange(f, secure, client)))
				}
				return lines
			}
			compareSecure(t, servers, steps, func(want []string) bool { return want[1] == `client certificate "client1": refused at first exchange` })
		})
	}
}

// TestExpiredTrustedCAMatchesZooKeeper: a trust store CA is a trust anchor whatever its
// own dates (Java's PKIX validation, RFC 5280 6.1): ZooKeeper serves a client whose
// current certificate that CA issued after the CA certificate expired, and refuses an
// expired client certificate of the same CA. zkraft refused the first.
func TestExpiredTrustedCAMatchesZooKeeper(t *testing.T) {
	f := newTLSFiles(t)
	old := tlstest.NewCAValid(t, "expired CA", time.Now().Add(-48*time.Hour), time.Now().Add(-time.Hour))
	current := old.Issue(t, tlstest.Options{Subject: pkix.Name{CommonName: "current"}})
	expired := old.Issue(t, tlstest.Options{Subject: pkix.Name{CommonName: "expired"},
		NotBefore: time.Now().Add(-48 * time.Hour), NotAfter: time.Now().Add(-24 * time.Hour)})
	trust := tlstest.WriteFile(t, filepath.Join(f.dir, "expired-ca.pem"), old.CertPEM())
	servers := startTLSServers(t, f, nil, func(o *ztest.Options) { o.ExtraConfig["ssl.trustStore.location"] = trust })
	steps := func(secure string) []string {
		var lines []string
		for _, leaf := range []*tlstest.Leaf{current, expired} {
			lines = append(lines, fmt.Sprintf("client certificate %s: %s", leaf.Cert.Subject.CommonName, firstExchangeAs(f, secure, leaf)))
		}
		return lines
	}
	compareSecure(t, servers, steps, func(want []string) bool { return want[0] == "client certificate current: answered" })
}
