package server

import (
	"crypto/tls"
	"fmt"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/server/tlsconf/tlstest"
)

// TestEmptySubjectCertificateMatchesZooKeeper: a client certificate with an empty
// subject (names in its SANs only, as service-mesh certificates have) gives the
// identity x509:"" (Java prints an empty X500Principal as ""), so an auth ACL holds it
// and the client passes it; zkraft took such a client for one without a certificate.
func TestEmptySubjectCertificateMatchesZooKeeper(t *testing.T) {
	f := newTLSFiles(t)
	leaf := f.ca.Issue(t, tlstest.Options{})
	servers := startTLSServers(t, f, nil)
	steps := func(secure string) []string {
		cfg := f.clientTLS("")
		cfg.Certificates = []tls.Certificate{{Certificate: [][]byte{leaf.Cert.Raw}, PrivateKey: leaf.Key}}
		c := zkConnect(t, secure, tlsDialer(cfg))
		_, err := c.Create("/empty-subject", nil, 0, zk.AuthACL(zk.PermAll))
		lines := []string{"create with an auth ACL: " + zkOutcome(err)}
		acl, _, err := c.GetACL("/empty-subject")
		lines = append(lines, fmt.Sprintf("its ACL: %v %s", acl, zkOutcome(err)))
		_, _, err = c.Get("/empty-subject")
		lines = append(lines, "read it: "+zkOutcome(err))
		other := f.zkOverTLS(t, secure, "client1")
		_, _, err = other.Get("/empty-subject")
		return append(lines, "client1 reads it: "+zkOutcome(err))
	}
	compareSecure(t, servers, steps, func(want []string) bool { return want[0] == "create with an auth ACL: OK" })
}
