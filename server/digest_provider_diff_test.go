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

// TestDigestAlgorithmMatchesZooKeeper: with DigestAuthenticationProvider.digestAlg
// (ZooKeeper 3.7's, for moving off SHA1) digest ids are hashed with that algorithm: the
// id addauth gives (shown by an auth ACL), a digest ACL made with it, and the super
// digest all agree between the servers.
func TestDigestAlgorithmMatchesZooKeeper(t *testing.T) {
	sha256, err := datatree.NewDigester("SHA-256")
	if err != nil {
		t.Fatal(err)
	}
	opts := ztest.Options{Logf: t.Logf, JVMFlags: []string{"-Dzookeeper.DigestAuthenticationProvider.digestAlg=SHA-256",
		"-Dzookeeper.DigestAuthenticationProvider.superDigest=" + sha256("super:secret")}}
	bothTranscripts(t, opts, func(t *testing.T, addr string) []string {
		var lines []string
		step := func(what string, v ...any) { lines = append(lines, what+": "+fmt.Sprint(v...)) }
		owner := zkConnect(t, addr, nil)
		step("addauth digest u:p", zkOutcome(owner.AddAuth("digest", []byte("u:p"))))
		_, err := owner.Create("/auth", nil, 0, zk.AuthACL(zk.PermAll))
		step("create with an auth ACL", zkOutcome(err))
		acl, _, err := owner.GetACL("/auth")
		step("its ACL", acl, " ", zkOutcome(err))
		_, err = owner.Create("/digest", nil, 0, []zk.ACL{{Perms: zk.PermAll, Scheme: "digest", ID: sha256("u:p")}})
		step("create with a SHA-256 digest ACL", zkOutcome(err))
		for _, who := range []string{"u:p", "u:wrong", "super:secret"} {
			c := zkConnect(t, addr, nil)
			c.AddAuth("digest", []byte(who))
			_, _, err := c.Get("/digest")
			step(who+" reads it", zkOutcome(err))
		}
		return lines
	})
}
