package server

import (
	"fmt"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/server/ztest"
)

// TestDigestProviderDisabledMatchesZooKeeper: with DigestAuthenticationProvider.enabled
// false (ZooKeeper 3.7's ZOOKEEPER-3979) the digest scheme is not registered: addauth
// digest, even with the super digest's password, fails and closes the connection, a
// digest ACL is InvalidACL, and a world ACL still works. Both servers alike.
func TestDigestProviderDisabledMatchesZooKeeper(t *testing.T) {
	opts := ztest.Options{Logf: t.Logf, ExtraConfig: map[string]string{"DigestAuthenticationProvider.enabled": "false"},
		JVMFlags: []string{"-Dzookeeper.DigestAuthenticationProvider.superDigest=" + datatree.DigestID("super:secret")}}
	bothTranscripts(t, opts, func(t *testing.T, addr string) []string {
		var lines []string
		step := func(what string, err error) { lines = append(lines, fmt.Sprintf("%s: %s", what, zkOutcome(err))) }
		c := zkConnect(t, addr, nil)
		_, err := c.Create("/open", nil, 0, zk.WorldACL(zk.PermAll))
		step("create with a world ACL", err)
		_, err = c.Create("/digest", nil, 0, zk.DigestACL(zk.PermAll, "u", "p"))
		step("create with a digest ACL", err)
		_, err = c.SetACL("/open", zk.DigestACL(zk.PermAll, "u", "p"), -1)
		step("setACL to a digest ACL", err)
		_, err = c.Create("/auth", nil, 0, zk.AuthACL(zk.PermAll))
		step("create with an auth ACL", err)
		step("addauth digest u:p", c.AddAuth("digest", []byte("u:p")))
		super := zkConnect(t, addr, nil)
		step("addauth digest as the super digest", super.AddAuth("digest", []byte("super:secret")))
		other := zkConnect(t, addr, nil)
		_, _, err = other.Get("/open")
		step("another client reads", err)
		return lines
	})
}
