package server

import (
	"fmt"
	"strings"
	"testing"

	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/server/ztest"
)

// With zookeeper.skipACL=yes every ACL check passes, as ZooKeeperServer.checkACL returns
// at once: a client without any identity reads, changes, lists, deletes under and
// re-ACLs nodes only their creator may touch, sees their getACL unredacted, and sets a
// persistent recursive watch there; fixing up an "auth" ACL still needs an identity
// (InvalidACL). The same steps on ZooKeeper 3.8 and zkraft must answer alike, and
// zkraft without the setting must refuse them.
func TestSkipACLMatchesZooKeeper(t *testing.T) {
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	skip := func(string) ztest.Options {
		return ztest.Options{Logf: t.Logf, JVMFlags: []string{"-Dzookeeper.skipACL=yes"}}
	}
	servers := startBoth(t, skip)
	checked, err := ztest.StartZkraft(ztest.Options{Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	defer checked.Stop()

	creatorOnly := []jute.ACL{{Perms: jute.PermAll, Id: jute.Id{Scheme: "auth"}}}
	readOnly := []jute.ACL{{Perms: jute.PermRead, Id: jute.Id{Scheme: "world", Id: "anyone"}}}
	script := func(addr string) []string {
		owner, other := rawSession(t, addr), rawSession(t, addr)
		if _, err := owner.nc.Write(jute.AppendFrame(nil, &jute.RequestHeader{Xid: jute.XidAuth, Type: jute.OpAuth},
			&jute.AuthPacket{Scheme: "digest", Auth: []byte("owner:secret")})); err != nil {
			t.Fatal(err)
		}
		var ah jute.ReplyHeader
		if owner.readFrame(&ah); ah.Err != 0 {
			t.Fatalf("addauth: %d", ah.Err)
		}
		for _, n := range []struct {
			path string
			acl  []jute.ACL
		}{{"/s", creatorOnly}, {"/s/c", creatorOnly}, {"/r", readOnly}} {
			if h := owner.call(jute.OpCreate, &jute.CreateRequest{Path: n.path, Data: []byte("data"), Acl: n.acl}, nil); h.Err != 0 {
				t.Fatalf("create %s: %d", n.path, h.Err)
			}
		}
		var out []string
		step := func(what string, op int32, req, resp jute.Record, show func() string) {
			h := other.call(op, req, resp)
			line := fmt.Sprintf("%s: err=%d", what, h.Err)
			if h.Err == 0 && show != nil {
				line += " " + show()
			}
			out = append(out, line)
		}
		var get jute.GetDataResponse
		step("getData /s", jute.OpGetData, &jute.GetDataRequest{Path: "/s"}, &get, func() string { return string(get.Data) })
		var kids jute.GetChildrenResponse
		step("getChildren /s", jute.OpGetChildren, &jute.GetChildrenRequest{Path: "/s"}, &kids, func() string { return strings.Join(kids.Children, ",") })
		var acl jute.GetACLResponse
		step("getACL /s", jute.OpGetACL, &jute.GetACLRequest{Path: "/s"}, &acl, func() string { return fmt.Sprint(acl.Acl) })
		step("setData /s", jute.OpSetData, &jute.SetDataRequest{Path: "/s", Data: []byte("x"), Version: -1}, nil, nil)
		step("create /s/d", jute.OpCreate, &jute.CreateRequest{Path: "/s/d", Acl: openACL}, nil, nil)
		step("create /s/e with an auth ACL", jute.OpCreate, &jute.CreateRequest{Path: "/s/e", Acl: creatorOnly}, nil, nil)
		step("delete /s/c", jute.OpDelete, &jute.DeleteRequest{Path: "/s/c", Version: -1}, nil, nil)
		step("addWatch /s", jute.OpAddWatch, &jute.AddWatchRequest{Path: "/s", Mode: 1}, nil, nil)
		step("setData /r", jute.OpSetData, &jute.SetDataRequest{Path: "/r", Data: []byte("y"), Version: -1}, nil, nil)
		step("setACL /s", jute.OpSetACL, &jute.SetACLRequest{Path: "/s", Acl: openACL, Version: -1}, nil, nil)
		step("getData /s", jute.OpGetData, &jute.GetDataRequest{Path: "/s"}, &get, func() string { return string(get.Data) })
		return out
	}
	zk, us := script(servers["zookeeper"].Addr), script(servers["zkraft"].Addr)
	if !strings.HasPrefix(zk[0], "getData /s: err=0 ") {
		t.Fatalf("ZooKeeper did not skip its ACL checks: %q", zk)
	}
	compareLines(t, zk, us)
	refused := 0
	for _, l := range script(checked.Addr) {
		if strings.Contains(l, fmt.Sprintf("err=%d", jute.ErrNoAuth)) {
			refused++
		}
	}
	if refused < 7 {
		t.Errorf("without skipACL zkraft refused %d of the steps with NoAuth, want at least 7", refused)
	}
}
