package server

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// The rules ZooKeeper 3.9 changed, as a 3.9 client sees them on the wire. Each test names
// the ticket whose rule it checks; docs/compatibility.md lists them.

// notification is one watch event as it came: its type, path and the zxid of its header.
type notification struct {
	Type int32
	Path string
	Zxid int64
}

func (n notification) String() string { return fmt.Sprintf("%d %s @%d", n.Type, n.Path, n.Zxid) }

// notifications sends a ping and returns every notification that arrives before its
// answer: the events of all the changes the server has answered for before.
func (c *rawClient) notifications() []notification {
	c.t.Helper()
	if _, err := c.nc.Write(jute.AppendFrame(nil, &jute.RequestHeader{Xid: jute.XidPing, Type: jute.OpPing})); err != nil {
		c.t.Fatal(err)
	}
	var out []notification
	for {
		b, err := jute.ReadFrame(c.br, nil, jute.DefaultMaxBuffer)
		if err != nil {
			c.t.Fatal(err)
		}
		d := jute.NewDecoder(b)
		var h jute.ReplyHeader
		h.Decode(d)
		switch h.Xid {
		case jute.XidPing:
			return out
		case jute.XidNotification:
			var ev jute.WatcherEvent
			ev.Decode(d)
			if d.Err != nil {
				c.t.Fatal(d.Err)
			}
			out = append(out, notification{ev.Type, ev.Path, h.Zxid})
		default:
			c.t.Fatalf("unexpected reply %+v while waiting for the ping", h)
		}
	}
}

func (c *rawClient) expectNotifications(what string, want ...notification) {
	c.t.Helper()
	if got := c.notifications(); !reflect.DeepEqual(got, want) && (len(got) != 0 || len(want) != 0) {
		c.t.Fatalf("%s: notifications %v, want %v", what, got, want)
	}
}

func (c *rawClient) expectErr(what string, h jute.ReplyHeader, want jute.Code) {
	c.t.Helper()
	if jute.Code(h.Err) != want {
		c.t.Fatalf("%s: err %d, want %d", what, h.Err, want)
	}
}

// ZOOKEEPER-4655 (3.9.0): a notification's reply header carries the zxid of the change
// that fired it (3.8 sent -1); the events of one multi all carry the multi's zxid, those
// of a session's end its closeSession's. An event setWatches fires at once for a change
// the client missed has no change of its own: -1, as 3.9's DataTree.setWatches sends.
// 3.8's Java client, kazoo and go-zookeeper read no zxid from a notification.
func TestNotificationCarriesTheZxidOfItsChange(t *testing.T) {
	s := startServer(t, nil)
	w, x := dial(t, s.Addr().String()), dial(t, s.Addr().String())
	w.connect(0, nil)
	x.connect(0, nil)
	w.expectErr("addWatch", w.call(jute.OpAddWatch, &jute.AddWatchRequest{Path: "/", Mode: jute.AddWatchPersistentRecursive}, nil), jute.OK)

	var mr jute.MultiResponse
	m := x.call(jute.OpMulti, &jute.MultiRequest{Ops: []jute.MultiOp{
		{Type: jute.OpCreate, Req: &jute.CreateRequest{Path: "/m", Acl: openACL}},
		{Type: jute.OpCreate, Req: &jute.CreateRequest{Path: "/m/a", Acl: openACL}},
		{Type: jute.OpSetData, Req: &jute.SetDataRequest{Path: "/m", Data: []byte("v"), Version: -1}},
	}}, &mr)
	x.expectErr("multi", m, jute.OK)
	w.expectNotifications("multi",
		notification{jute.EventNodeCreated, "/m", m.Zxid},
		notification{jute.EventNodeCreated, "/m/a", m.Zxid},
		notification{jute.EventNodeDataChanged, "/m", m.Zxid})

	var sd jute.SetDataResponse
	h := x.call(jute.OpSetData, &jute.SetDataRequest{Path: "/m/a", Data: []byte("w"), Version: -1}, &sd)
	if h.Err != 0 || sd.Stat.Mzxid != h.Zxid || h.Zxid <= m.Zxid {
		t.Fatalf("setData %+v %+v", h, sd)
	}
	w.expectNotifications("setData", notification{jute.EventNodeDataChanged, "/m/a", h.Zxid})

	y := dial(t, s.Addr().String())
	y.connect(0, nil)
	y.expectErr("create ephemeral", y.call(jute.OpCreate, &jute.CreateRequest{Path: "/m/e", Acl: openACL, Flags: jute.FlagEphemeral}, nil), jute.OK)
	w.notifications()
	closed := y.call(jute.OpCloseSession, nil, nil)
	y.expectErr("closeSession", closed, jute.OK)
	w.expectNotifications("ephemeral deleted at its session's end", notification{jute.EventNodeDeleted, "/m/e", closed.Zxid})

	// A reconnecting client that saw nothing after the multi misses the setData on /m/a.
	w.nc.Close()
	w2 := dial(t, s.Addr().String())
	w2.connect(w.sid, w.pw)
	w2.nc.Write(jute.AppendFrame(nil, &jute.RequestHeader{Xid: jute.XidSetWatches, Type: jute.OpSetWatches},
		&jute.SetWatches{RelativeZxid: m.Zxid, DataWatches: []string{"/m/a"}}))
	var eh jute.ReplyHeader
	var ev jute.WatcherEvent
	w2.readFrame(&eh, &ev)
	if eh.Xid != jute.XidNotification || ev.Type != jute.EventNodeDataChanged || ev.Path != "/m/a" || eh.Zxid != -1 {
		t.Fatalf("event fired by setWatches: %+v %+v, want NodeDataChanged /m/a at zxid -1", eh, ev)
	}
}

// ZOOKEEPER-2590 (3.9.2, 3.8.4): exists needs READ on a node that exists, and sets no
// watch when refused; a missing node is not checked, so its creation can still be
// awaited. zookeeper.enableExistsACLCheck=false keeps 3.8.0's rule: exists answers anyone.
func TestExistsNeedsReadOnAnExistingNode(t *testing.T) {
	noRead := []jute.ACL{{Perms: jute.PermAll &^ jute.PermRead, Id: jute.Id{Scheme: "world", Id: "anyone"}}}
	for _, check := range []bool{true, false} {
		t.Run(fmt.Sprintf("enableExistsACLCheck=%v", check), func(t *testing.T) {
			s := startServer(t, func(c *Config) { c.ExistsACLCheck = check })
			c := dial(t, s.Addr().String())
			c.connect(0, nil)
			c.expectErr("create", c.call(jute.OpCreate, &jute.CreateRequest{Path: "/a", Acl: openACL}, nil), jute.OK)
			created := c.call(jute.OpCreate, &jute.CreateRequest{Path: "/secret", Data: []byte("abc"), Acl: noRead}, nil)
			c.expectErr("create", created, jute.OK)

			var st jute.ExistsResponse
			h := c.call(jute.OpExists, &jute.ExistsRequest{Path: "/secret", Watch: true}, &st)
			watched := c.call(jute.OpCheckWatches, &jute.CheckWatchesRequest{Path: "/secret", Type: jute.WatcherData}, nil)
			if check {
				c.expectErr("exists without READ", h, jute.ErrNoAuth)
				if h.Zxid != created.Zxid {
					t.Errorf("NoAuth at zxid %d, want the last one, %d", h.Zxid, created.Zxid)
				}
				c.expectErr("watch of a refused exists", watched, jute.ErrNoWatcher)
			} else {
				c.expectErr("exists without READ", h, jute.OK)
				if st.Stat.Czxid != created.Zxid || st.Stat.DataLength != 3 {
					t.Errorf("stat %+v", st.Stat)
				}
				c.expectErr("watch of exists", watched, jute.OK)
			}
			c.expectErr("exists of a missing node", c.call(jute.OpExists, &jute.ExistsRequest{Path: "/secret/none", Watch: true}, nil), jute.ErrNoNode)
			c.expectErr("watch on a missing node", c.call(jute.OpCheckWatches, &jute.CheckWatchesRequest{Path: "/secret/none", Type: jute.WatcherData}, nil), jute.OK)

			// The root's own ACL counts too (ACLTest.testExistACLCheckAtRootPath).
			c.expectErr("setACL /", c.call(jute.OpSetACL, &jute.SetACLRequest{Path: "/", Acl: []jute.ACL{{Perms: 0, Id: jute.Id{Scheme: "world", Id: "anyone"}}}, Version: -1}, &jute.SetACLResponse{}), jute.OK)
			want := jute.OK
			if check {
				want = jute.ErrNoAuth
			}
			c.expectErr("exists /", c.call(jute.OpExists, &jute.ExistsRequest{Path: "/"}, &jute.ExistsResponse{}), want)
			c.expectErr("exists /a", c.call(jute.OpExists, &jute.ExistsRequest{Path: "/a"}, &jute.ExistsResponse{}), jute.OK)
		})
	}
}

// ZOOKEEPER-2623 (3.9.3, 3.8.5): a check outside a multi is not a request ZooKeeper
// takes: Unimplemented at zxid -1, its body unread, and the connection closed, nothing
// logged. Inside a multi it is what it was.
func TestCheckOutsideMultiIsUnimplemented(t *testing.T) {
	s := startServer(t, nil)
	frames := map[string][]byte{
		"check":                  jute.AppendFrame(nil, &jute.RequestHeader{Xid: 7, Type: jute.OpCheck}, &jute.CheckVersionRequest{Path: "/", Version: 0}),
		"check with a bad body":  {0, 0, 0, 10, 0, 0, 0, 7, 0, 0, 0, 13, 0xff, 0xff},
		"check of a missing one": jute.AppendFrame(nil, &jute.RequestHeader{Xid: 7, Type: jute.OpCheck}, &jute.CheckVersionRequest{Path: "/none", Version: 3}),
	}
	clients := map[string]*rawClient{}
	for name := range frames {
		clients[name] = dial(t, s.Addr().String())
		clients[name].connect(0, nil)
	}
	c := dial(t, s.Addr().String())
	c.connect(0, nil)
	var mr jute.MultiResponse
	before := c.call(jute.OpMulti, &jute.MultiRequest{Ops: []jute.MultiOp{{Type: jute.OpCheck, Req: &jute.CheckVersionRequest{Path: "/", Version: 0}}}}, &mr)
	if before.Err != 0 || len(mr.Results) != 1 || mr.Results[0].Type != jute.OpCheck {
		t.Fatalf("check in a multi: %+v %+v", before, mr)
	}

	for name, frame := range frames {
		d := clients[name]
		d.nc.Write(frame)
		var h jute.ReplyHeader
		d.readFrame(&h)
		if h != (jute.ReplyHeader{Xid: 7, Zxid: -1, Err: int32(jute.ErrUnimplemented)}) {
			t.Errorf("%s: %+v, want Unimplemented at zxid -1", name, h)
		}
		expectClosed(t, d, 5*time.Second, name)
	}
	if h := c.call(jute.OpExists, &jute.ExistsRequest{Path: "/"}, &jute.ExistsResponse{}); h.Err != 0 || h.Zxid != before.Zxid {
		t.Fatalf("after the refused checks: %+v, want nothing logged since zxid %d", h, before.Zxid)
	}
}

// ZOOKEEPER-4466, ZOOKEEPER-4471, ZOOKEEPER-4472 (3.9.0): watches of several modes live
// side by side on one path for one client; removeWatches and checkWatches take
// Persistent (4) and PersistentRecursive (5) and touch that mode only; Data and Children
// touch the one-shot watches only. Another type is MarshallingError, as both 3.8 and 3.9
// answer (WatcherType.fromInt throws).
func TestWatchModesSideBySideAndRemovedOneByOne(t *testing.T) {
	s := startServer(t, nil)
	c, x := dial(t, s.Addr().String()), dial(t, s.Addr().String())
	c.connect(0, nil)
	x.connect(0, nil)
	x.expectErr("create", x.call(jute.OpCreate, &jute.CreateRequest{Path: "/p", Acl: openACL}, nil), jute.OK)
	has := func(wtype int32, want jute.Code) {
		t.Helper()
		c.expectErr(fmt.Sprintf("checkWatches type %d", wtype), c.call(jute.OpCheckWatches, &jute.CheckWatchesRequest{Path: "/p", Type: wtype}, nil), want)
	}

	c.expectErr("addWatch persistent", c.call(jute.OpAddWatch, &jute.AddWatchRequest{Path: "/p", Mode: jute.AddWatchPersistent}, nil), jute.OK)
	c.expectErr("getData with a watch", c.call(jute.OpGetData, &jute.GetDataRequest{Path: "/p", Watch: true}, &jute.GetDataResponse{}), jute.OK)
	has(jute.WatcherData, jute.OK)
	has(jute.WatcherPersistent, jute.OK)
	has(jute.WatcherPersistentRecursive, jute.ErrNoWatcher)
	has(jute.WatcherChildren, jute.ErrNoWatcher)

	for i := 0; i < 2; i++ {
		h := x.call(jute.OpSetData, &jute.SetDataRequest{Path: "/p", Version: -1}, &jute.SetDataResponse{})
		c.expectNotifications(fmt.Sprintf("setData %d: one notification for both watches", i),
			notification{jute.EventNodeDataChanged, "/p", h.Zxid})
		has(jute.WatcherData, jute.ErrNoWatcher) // used up by the first
		has(jute.WatcherPersistent, jute.OK)
	}

	c.expectErr("addWatch recursive", c.call(jute.OpAddWatch, &jute.AddWatchRequest{Path: "/p", Mode: jute.AddWatchPersistentRecursive}, nil), jute.OK)
	c.expectErr("removeWatches Children", c.call(jute.OpRemoveWatches, &jute.RemoveWatchesRequest{Path: "/p", Type: jute.WatcherChildren}, nil), jute.ErrNoWatcher)
	c.expectErr("removeWatches Data", c.call(jute.OpRemoveWatches, &jute.RemoveWatchesRequest{Path: "/p", Type: jute.WatcherData}, nil), jute.ErrNoWatcher)
	c.expectErr("removeWatches Persistent", c.call(jute.OpRemoveWatches, &jute.RemoveWatchesRequest{Path: "/p", Type: jute.WatcherPersistent}, nil), jute.OK)
	has(jute.WatcherPersistent, jute.ErrNoWatcher)
	has(jute.WatcherPersistentRecursive, jute.OK)
	h := x.call(jute.OpCreate, &jute.CreateRequest{Path: "/p/c", Acl: openACL}, nil)
	c.expectNotifications("recursive only: no children-changed of /p",
		notification{jute.EventNodeCreated, "/p/c", h.Zxid})

	c.expectErr("removeWatches PersistentRecursive", c.call(jute.OpRemoveWatches, &jute.RemoveWatchesRequest{Path: "/p", Type: jute.WatcherPersistentRecursive}, nil), jute.OK)
	c.expectErr("removeWatches PersistentRecursive again", c.call(jute.OpRemoveWatches, &jute.RemoveWatchesRequest{Path: "/p", Type: jute.WatcherPersistentRecursive}, nil), jute.ErrNoWatcher)
	has(jute.WatcherAny, jute.ErrNoWatcher)
	x.call(jute.OpSetData, &jute.SetDataRequest{Path: "/p/c", Version: -1}, &jute.SetDataResponse{})
	c.expectNotifications("no watch left")

	for _, wtype := range []int32{0, 6, -1} {
		c.expectErr(fmt.Sprintf("removeWatches type %d", wtype), c.call(jute.OpRemoveWatches, &jute.RemoveWatchesRequest{Path: "/p", Type: wtype}, nil), jute.ErrMarshallingError)
		has(wtype, jute.ErrMarshallingError)
	}
	c.expectNotifications("connection still open")
}

// ZOOKEEPER-4799 (3.9.2, 3.8.4; CVE-2024-23944): a watch event reaches only a client
// with READ in the ACL the node had at the change, one-shot watches included (used up
// all the same); before, 3.8.0 delivered every event.
func TestEventsNeedReadOnTheNode(t *testing.T) {
	s := startServer(t, nil)
	c, x := dial(t, s.Addr().String()), dial(t, s.Addr().String())
	c.connect(0, nil)
	x.connect(0, nil)
	x.call(jute.OpAuth, &jute.AuthPacket{Scheme: "digest", Auth: []byte("bob:pw")}, nil)
	bobOnly := []jute.ACL{{Perms: jute.PermAll, Id: jute.Id{Scheme: "auth"}}}
	c.expectErr("exists", c.call(jute.OpExists, &jute.ExistsRequest{Path: "/h", Watch: true}, nil), jute.ErrNoNode)
	c.expectErr("addWatch", c.call(jute.OpAddWatch, &jute.AddWatchRequest{Path: "/", Mode: jute.AddWatchPersistentRecursive}, nil), jute.OK)
	x.expectErr("create /h", x.call(jute.OpCreate, &jute.CreateRequest{Path: "/h", Acl: bobOnly}, nil), jute.OK)
	o := x.call(jute.OpCreate, &jute.CreateRequest{Path: "/o", Acl: openACL}, nil)
	c.expectNotifications("node without READ: nothing, open node: created",
		notification{jute.EventNodeCreated, "/o", o.Zxid})
	c.expectErr("exists watch on /h used up", c.call(jute.OpCheckWatches, &jute.CheckWatchesRequest{Path: "/h", Type: jute.WatcherData}, nil), jute.ErrNoWatcher)
	x.expectNotifications("bob set no watch")

	// A node whose READ goes away: its deletion is checked against its last ACL.
	c.expectErr("exists /o", c.call(jute.OpExists, &jute.ExistsRequest{Path: "/o", Watch: true}, &jute.ExistsResponse{}), jute.OK)
	x.expectErr("setACL", x.call(jute.OpSetACL, &jute.SetACLRequest{Path: "/o", Acl: bobOnly, Version: -1}, &jute.SetACLResponse{}), jute.OK)
	x.expectErr("delete", x.call(jute.OpDelete, &jute.DeleteRequest{Path: "/o", Version: -1}, nil), jute.OK)
	c.expectNotifications("deleted, READ gone before")
}
