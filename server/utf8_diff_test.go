package server

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/server/ztest"
)

// ZooKeeper reads every string of a request as Java reads UTF-8 (new String(b, UTF_8)):
// bytes that are not UTF-8 become U+FFFD, one per malformed sequence. A client that
// sends such bytes (the C and Go clients send a path's or an id's bytes as they are)
// must get the same strings back from both servers: a sync echoes its path, whoAmI
// shows a digest user, getACL an ACL's id.
func TestStringsThatAreNotUTF8ReadAsZooKeeperReadsThem(t *testing.T) {
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	paths := []string{"/a\xff", "/a\xff\xfe", "/\xe2\x82", "/\xe2\x82A", "/\xed\xa0\x80", "/\xc0\xaf", "/\xe0\x80",
		"/\xf4\x90\x80\x80", "/\xf0\x9f\x98", "/\xf0\x9f\x98A", "/ok\xc3\xa9"}
	r := rand.New(rand.NewPCG(1, 2))
	pool := []byte{0x41, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc2, 0xdf, 0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff}
	for i := 0; i < 100; i++ {
		b := []byte{'/'}
		for n := 1 + r.IntN(10); n > 0; n-- {
			b = append(b, pool[r.IntN(len(pool))])
		}
		paths = append(paths, string(b))
	}
	run := func(name string, start func(ztest.Options) (*ztest.Server, error)) []string {
		s, err := start(ztest.Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		defer s.Stop()
		c := dial(t, s.Addr)
		c.connect(0, nil)
		var out []string
		for _, p := range paths {
			var sr jute.SyncResponse
			if h := c.call(jute.OpSync, &jute.SyncRequest{Path: p}, &sr); h.Err != 0 {
				t.Fatalf("%s: sync %q: %d", name, p, h.Err)
			}
			out = append(out, fmt.Sprintf("sync %x: %x", p, sr.Path))
		}
		for _, auth := range []string{"a\xff:b", "\xe2\x82:\xff", "u:\xc0\xaf"} {
			a := dial(t, s.Addr)
			a.connect(0, nil)
			if _, err := a.nc.Write(jute.AppendFrame(nil, &jute.RequestHeader{Xid: jute.XidAuth, Type: jute.OpAuth}, &jute.AuthPacket{Scheme: "digest", Auth: []byte(auth)})); err != nil {
				t.Fatal(err)
			}
			var h jute.ReplyHeader
			a.readFrame(&h)
			var who jute.WhoAmIResponse
			if h := a.call(jute.OpWhoAmI, nil, &who); h.Err != 0 {
				t.Fatalf("%s: whoAmI: %d", name, h.Err)
			}
			var ids []string
			for _, ci := range who.ClientInfo {
				ids = append(ids, fmt.Sprintf("%s:%x", ci.AuthScheme, ci.User))
			}
			sort.Strings(ids)
			out = append(out, fmt.Sprintf("addauth %x: %d %v", auth, h.Err, ids))
			// The auth scheme's ACL shows the digest itself, the hash included.
			p := fmt.Sprintf("/auth%d", len(out))
			authACL := []jute.ACL{{Perms: jute.PermAll, Id: jute.Id{Scheme: "auth", Id: ""}}}
			if h := a.call(jute.OpCreate, &jute.CreateRequest{Path: p, Acl: authACL}, nil); h.Err != 0 {
				t.Fatalf("%s: create with the auth ACL: %d", name, h.Err)
			}
			var ga jute.GetACLResponse
			if h := a.call(jute.OpGetACL, &jute.GetACLRequest{Path: p}, &ga); h.Err != 0 {
				t.Fatalf("%s: getACL: %d", name, h.Err)
			}
			for _, e := range ga.Acl {
				if e.Id.Scheme == "digest" {
					out = append(out, fmt.Sprintf("auth ACL %x", e.Id.Id))
				}
			}
		}
		acl := []jute.ACL{{Perms: jute.PermRead, Id: jute.Id{Scheme: "world", Id: "anyone"}},
			{Perms: jute.PermAll, Id: jute.Id{Scheme: "digest", Id: "u\xff:2jmj7l5rSw0yVb/vlWAYkK/YBwk="}}}
		if h := c.call(jute.OpCreate, &jute.CreateRequest{Path: "/acl", Acl: acl}, nil); h.Err != 0 {
			t.Fatalf("%s: create with a digest id that is not UTF-8: %d", name, h.Err)
		}
		var ga jute.GetACLResponse
		if h := c.call(jute.OpGetACL, &jute.GetACLRequest{Path: "/acl"}, &ga); h.Err != 0 {
			t.Fatalf("%s: getACL: %d", name, h.Err)
		}
		out = append(out, fmt.Sprintf("acl %d ids, the digest one %x", len(ga.Acl), ga.Acl[len(ga.Acl)-1].Id.Id))
		return out
	}
	zk, us := run("zookeeper", ztest.StartZooKeeper), run("zkraft", ztest.StartZkraft)
	differ := 0
	for i := range zk {
		if zk[i] != us[i] {
			if differ++; differ <= 10 {
				t.Errorf("zookeeper %s\n                zkraft    %s", zk[i], us[i])
			}
		}
	}
	if differ > 0 {
		t.Fatalf("%d of %d answers differ", differ, len(zk))
	}
	for _, l := range us[len(paths):] {
		t.Log(l)
	}
}
