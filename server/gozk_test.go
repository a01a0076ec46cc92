package server

import (
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/jute"
)

// go-zookeeper, the Go client, against an in-process server.
func TestGoZookeeperClient(t *testing.T) {
	s := startServer(t, nil)
	c, events, err := zk.Connect([]string{s.Addr().String()}, 5*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	deadline := time.After(10 * time.Second)
	for c.State() != zk.StateHasSession {
		select {
		case <-events:
		case <-deadline:
			t.Fatal("no session")
		}
	}
	if _, err := c.Create("/g", []byte("v"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	data, st, ch, err := c.GetW("/g")
	if err != nil || string(data) != "v" || st.Version != 0 {
		t.Fatalf("get: %q %+v %v", data, st, err)
	}
	if _, err := c.Set("/g", []byte("w"), 0); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-ch:
		if ev.Type != zk.EventNodeDataChanged || ev.Path != "/g" {
			t.Fatalf("event %+v", ev)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event")
	}
	if _, err := c.Set("/g", nil, 0); err != zk.ErrBadVersion {
		t.Fatalf("stale version: %v, want ErrBadVersion", err)
	}
	name, err := c.CreateProtectedEphemeralSequential("/g/lock-", nil, zk.WorldACL(zk.PermAll))
	if err != nil {
		t.Fatal(err)
	}
	kids, _, err := c.Children("/g")
	if err != nil || len(kids) != 1 || "/g/"+kids[0] != name {
		t.Fatalf("children %v (%v), want %s", kids, err, name)
	}
}

// A client that has seen a newer zxid than the server's is refused, so it never travels
// back in time (it must find a server that is caught up).
func TestConnectFromTheFutureIsRefused(t *testing.T) {
	s := startServer(t, nil)
	c := dial(t, s.Addr().String())
	req := &jute.Connect{ConnectRequest: jute.ConnectRequest{TimeOut: 10000, LastZxidSeen: 1 << 40, Passwd: make([]byte, 16)}}
	c.nc.Write(jute.AppendFrame(nil, req))
	if _, err := jute.ReadFrame(c.br, nil, jute.DefaultMaxBuffer); err == nil {
		t.Fatal("a client from the future got a session")
	}
}

// The super user from superDigest passes every ACL check.
func TestSuperDigest(t *testing.T) {
	s := startServer(t, func(c *Config) { c.SuperDigest = datatree.DigestID("super:boss") })
	owner := dial(t, s.Addr().String())
	owner.connect(0, nil)
	owner.call(jute.OpAuth, &jute.AuthPacket{Scheme: "digest", Auth: []byte("alice:pw")}, nil)
	acl := []jute.ACL{{Perms: jute.PermAll, Id: jute.Id{Scheme: "digest", Id: datatree.DigestID("alice:pw")}}}
	if h := owner.call(jute.OpCreate, &jute.CreateRequest{Path: "/private", Data: []byte("p"), Acl: acl}, nil); h.Err != 0 {
		t.Fatalf("create: %d", h.Err)
	}
	other := dial(t, s.Addr().String())
	other.connect(0, nil)
	if h := other.call(jute.OpGetData, &jute.GetDataRequest{Path: "/private"}, nil); jute.Code(h.Err) != jute.ErrNoAuth {
		t.Fatalf("stranger read: %d, want NoAuth", h.Err)
	}
	admin := dial(t, s.Addr().String())
	admin.connect(0, nil)
	admin.call(jute.OpAuth, &jute.AuthPacket{Scheme: "digest", Auth: []byte("super:boss")}, nil)
	var gd jute.GetDataResponse
	if h := admin.call(jute.OpGetData, &jute.GetDataRequest{Path: "/private"}, &gd); h.Err != 0 || string(gd.Data) != "p" {
		t.Fatalf("super read: %d %q", h.Err, gd.Data)
	}
}
