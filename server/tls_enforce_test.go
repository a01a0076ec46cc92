package server

import (
	"fmt"
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"
)

// TestEnforceAuthX509MatchesZooKeeper: enforce.auth.schemes=x509 with a secure client
// port is a valid setting, as a secure port registers the x509 provider before
// ZooKeeper's AuthenticationHelper looks for it: a TLS client with a certificate is
// served, a plaintext one (with a digest identity, not enforced) is answered
// SessionClosedRequireSASLAuth (-124).
func TestEnforceAuthX509MatchesZooKeeper(t *testing.T) {
	f := newTLSFiles(t)
	servers := startTLSServers(t, f, map[string]string{"enforce.auth.enabled": "true", "enforce.auth.schemes": "x509"})
	steps := func(addrs [2]string) []string {
		var lines []string
		c := f.zkOverTLS(t, addrs[1], "client1")
		_, err := c.Create("/enforced", nil, 0, zk.WorldACL(zk.PermAll))
		lines = append(lines, fmt.Sprintf("client1 over TLS creates: %s", zkOutcome(err)))
		_, _, err = c.Get("/enforced")
		lines = append(lines, fmt.Sprintf("client1 over TLS reads: %s", zkOutcome(err)))
		anon := zkConnect(t, addrs[0], nil)
		lines = append(lines, fmt.Sprintf("plaintext client adds a digest: %s", zkOutcome(anon.AddAuth("digest", []byte("u:p")))))
		_, _, err = anon.Get("/enforced")
		lines = append(lines, fmt.Sprintf("plaintext client reads: %s", zkOutcome(err)))
		return lines
	}
	want := steps(servers["zookeeper"])
	if len(want) != 4 || want[1] != "client1 over TLS reads: OK" || !strings.HasSuffix(want[3], "-124") {
		t.Fatalf("reference run:\n%s", strings.Join(want, "\n"))
	}
	t.Logf("zookeeper:\n%s", strings.Join(want, "\n"))
	compareLines(t, want, steps(servers["zkraft"]))
}
