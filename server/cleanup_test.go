package server

import (
	"testing"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// Containers go once their last child is gone (never-used ones stay), TTL nodes once
// their TTL passes with no change; both through the log, by the leader's cleanup.
func TestContainerAndTTLCleanup(t *testing.T) {
	s := startServer(t, func(c *Config) { c.ContainerCheckInterval = 20 * time.Millisecond })
	c := dial(t, s.Addr().String())
	c.connect(0, nil)
	mk := func(op int32, req jute.Record) {
		t.Helper()
		if h := c.call(op, req, nil); h.Err != 0 {
			t.Fatalf("op %d: %d", op, h.Err)
		}
	}
	mk(jute.OpCreateContainer, &jute.CreateRequest{Path: "/used", Acl: openACL, Flags: jute.FlagContainer})
	mk(jute.OpCreateContainer, &jute.CreateRequest{Path: "/unused", Acl: openACL, Flags: jute.FlagContainer})
	mk(jute.OpCreate, &jute.CreateRequest{Path: "/used/x", Acl: openACL})
	mk(jute.OpCreateTTL, &jute.CreateTTLRequest{Path: "/ttl", Acl: openACL, Flags: jute.FlagPersistentWithTTL, Ttl: 100})
	mk(jute.OpCreateTTL, &jute.CreateTTLRequest{Path: "/ttl-parent", Acl: openACL, Flags: jute.FlagPersistentWithTTL, Ttl: 100})
	mk(jute.OpCreate, &jute.CreateRequest{Path: "/ttl-parent/kid", Acl: openACL})
	mk(jute.OpDelete, &jute.DeleteRequest{Path: "/used/x", Version: -1})

	exists := func(p string) bool {
		h := c.call(jute.OpExists, &jute.ExistsRequest{Path: p}, &jute.ExistsResponse{})
		return h.Err == 0
	}
	deadline := time.Now().Add(10 * time.Second)
	for (exists("/used") || exists("/ttl")) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if exists("/used") {
		t.Error("emptied container was not deleted")
	}
	if exists("/ttl") {
		t.Error("expired TTL node was not deleted")
	}
	if !exists("/unused") {
		t.Error("never-used container was deleted")
	}
	if !exists("/ttl-parent") {
		t.Error("TTL node with a child was deleted")
	}
}
