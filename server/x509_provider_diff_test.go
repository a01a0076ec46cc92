package server

import (
	"fmt"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/server/ztest"
)

// TestX509ProviderByAnyKeyMatchesZooKeeper: authProvider.<any N> naming
// X509AuthenticationProvider registers the x509 scheme, as ZooKeeper's ProviderRegistry
// keys providers by their scheme, not by N: on a server without TLS an x509 ACL is
// valid (and matches nobody), and enforce.auth.schemes may name x509.
func TestX509ProviderByAnyKeyMatchesZooKeeper(t *testing.T) {
	opts := ztest.Options{Logf: t.Logf, ExtraConfig: map[string]string{
		"authProvider.1": "org.apache.zookeeper.server.auth.X509AuthenticationProvider"}}
	bothTranscripts(t, opts, func(t *testing.T, addr string) []string {
		var lines []string
		c := zkConnect(t, addr, nil)
		_, err := c.Create("/x509", nil, 0, []zk.ACL{{Perms: zk.PermAll, Scheme: "x509", ID: "CN=client1,O=zkraft"}})
		lines = append(lines, fmt.Sprintf("create with an x509 ACL: %s", zkOutcome(err)))
		_, _, err = c.Get("/x509")
		lines = append(lines, fmt.Sprintf("read it: %s", zkOutcome(err)))
		return lines
	})
}
