package server

import (
	"crypto/tls"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/server/ztest"
)

// firstExchange dials secure with the named client certificate ("" for none) and reports
// whether the server answers a ConnectRequest.
func firstExchange(f *tlsFiles, secure, client string) string {
	nc, err := net.DialTimeout("tcp", secure, 5*time.Second)
	if err != nil {
		return err.Error()
	}
	tc := tls.Client(nc, f.clientTLS(client))
	defer tc.Close()
	tc.SetDeadline(time.Now().Add(5 * time.Second))
	if err := tc.Handshake(); err != nil {
		return "handshake refused"
	}
	tc.Write(connectFrame())
	if _, err := tc.Read(make([]byte, 1)); err != nil {
		return "refused at first exchange"
	}
	return "answered"
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
			want := steps(servers["zookeeper"][1])
			if want[1] != `client certificate "client1": refused at first exchange` {
				t.Fatalf("reference run:\n%s", strings.Join(want, "\n"))
			}
			t.Logf("zookeeper:\n%s", strings.Join(want, "\n"))
			compareLines(t, want, steps(servers["zkraft"][1]))
		})
	}
}
