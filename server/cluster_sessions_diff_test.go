package server

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/server/ztest"
)

// Sessions and watches across the members of a 3-member ZooKeeper 3.8 ensemble and a
// 3-member zkraft cluster, compared line by line: a client that loses its connection
// and comes back on another member with its session id, password and last zxid, and
// re-sends its watches; a reattach with a wrong password and one after expiry; the
// ephemerals of a moved session, closed through a follower; expiry, ephemerals and
// container and TTL cleanup across a leader change.

// kept starts a transcript line that must differ: docs/compatibility.md lists the
// difference.
const kept = "kept: "

// sessionsOn are a cluster's members as a test uses them: the leader and two followers.
type sessionsOn struct {
	t         *testing.T
	c         *ztest.Cluster
	l, f1, f2 string
	lines     []string
}

var totalWatches = regexp.MustCompile(`Total watches:\d+`)

// member is the member serving on addr.
func (s *sessionsOn) member(addr string) *ztest.Server {
	for _, m := range s.c.Members {
		if m.Addr == addr {
			return m
		}
	}
	s.t.Fatalf("no member on %s", addr)
	return nil
}

func (s *sessionsOn) say(format string, args ...any) {
	s.lines = append(s.lines, fmt.Sprintf(format, args...))
}

// wchs says each member's watch totals, leader last.
func (s *sessionsOn) wchs(when string) {
	s.t.Helper()
	var parts []string
	for _, m := range []struct{ name, addr string }{{"f1", s.f1}, {"f2", s.f2}, {"l", s.l}} {
		out := askFourLetter(s.t, m.addr, "wchs")
		parts = append(parts, m.name+"="+strings.TrimPrefix(totalWatches.FindString(out), "Total watches:"))
	}
	s.say("%s: wchs %s", when, strings.Join(parts, " "))
}

// syncEvents sends a sync and returns the notifications that came before its reply: those
// of every change the member applied before the sync's point.
func syncEvents(c *rawClient) []string {
	c.t.Helper()
	c.send(jute.OpSync, &jute.SyncRequest{Path: "/"})
	out, _, err := eventsBeforeReply(c)
	if err != nil {
		return append(out, "closed")
	}
	return out
}

// afterReply reads what a server sends after its answer to a handshake: "closed" if it
// closes the connection within a second, "open" otherwise.
func afterReply(c *rawClient) string {
	c.nc.SetReadDeadline(time.Now().Add(time.Second))
	defer c.nc.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := jute.ReadFrame(c.br, nil, jute.DefaultMaxBuffer); err != nil {
		if isTimeout(err) {
			return "open"
		}
		return "closed"
	}
	return "a frame"
}

// reattach opens a connection to addr for session sid, as a client that saw lastZxid.
func (s *sessionsOn) reattach(addr string, sid int64, pw []byte, lastZxid int64, timeout int32) (*rawClient, string) {
	c := dial(s.t, addr)
	r := c.tryConnect(jute.Connect{ConnectRequest: jute.ConnectRequest{LastZxidSeen: lastZxid, TimeOut: timeout,
		SessionId: sid, Passwd: pw}, HasReadOnly: true})
	if r == nil {
		return c, "no answer, closed"
	}
	return c, fmt.Sprintf("timeout=%d same id=%v id zero=%v password kept=%v zero password=%v readOnly=%v, then %s",
		r.TimeOut, r.SessionId == sid, r.SessionId == 0, bytes.Equal(r.Passwd, pw), bytes.Equal(r.Passwd, make([]byte, 16)),
		r.ReadOnly, afterReply(c))
}

func (s *sessionsOn) create(c *rawClient, path string, flags int32) {
	s.t.Helper()
	if h := c.call(jute.OpCreate, &jute.CreateRequest{Path: path, Data: []byte("d"), Acl: openACL, Flags: flags}, nil); h.Err != 0 {
		s.t.Fatalf("%s: create %s: %d", s.c.Name, path, h.Err)
	}
}

func (s *sessionsOn) write(c *rawClient, op int32, req jute.Record) {
	s.t.Helper()
	if h := c.call(op, req, nil); h.Err != 0 {
		s.t.Fatalf("%s: op %d %+v: %d", s.c.Name, op, req, h.Err)
	}
}

// sessionsTranscript runs the scenarios on c.
func sessionsTranscript(t *testing.T, c *ztest.Cluster) []string {
	leader := c.Leader()
	s := &sessionsOn{t: t, c: c, l: c.Members[leader].Addr, f1: c.Members[(leader+1)%3].Addr,
		f2: c.Members[(leader+2)%3].Addr}
	watchesAcrossMove(s)
	leftOpen(s)
	expiredElsewhere(s)
	timeoutsPerMember(s)
	leaderChange(s)
	return s.lines
}

// connectWith opens a session of timeout ms on addr.
func connectWith(t *testing.T, addr string, timeout int32) (*rawClient, *jute.Connected) {
	c := dial(t, addr)
	r := c.tryConnect(jute.Connect{ConnectRequest: jute.ConnectRequest{TimeOut: timeout, Passwd: make([]byte, 16)}, HasReadOnly: true})
	if r == nil {
		t.Fatalf("no session on %s", addr)
	}
	return c, r
}

// awaitGone polls exists on path through a session of its own on addr until it is
// NoNode, for at most limit, and returns how long that took, or -1.
func awaitGone(t *testing.T, addr, path string, limit time.Duration) time.Duration {
	start := time.Now()
	c := dial(t, addr)
	c.connect(0, nil)
	defer c.nc.Close()
	for time.Since(start) < limit {
		c.nc.SetDeadline(time.Now().Add(10 * time.Second))
		if h := c.call(jute.OpExists, &jute.ExistsRequest{Path: path}, nil); h.Err == int32(jute.ErrNoNode) {
			return time.Since(start)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return -1
}

// negotiated says the session timeout each member answers to each of asks.
func (s *sessionsOn) negotiated(when string, asks ...int32) {
	for _, ask := range asks {
		var got []string
		for _, m := range []string{s.f1, s.f2, s.l} {
			_, r := connectWith(s.t, m, ask)
			got = append(got, fmt.Sprint(r.TimeOut))
		}
		s.say("%sasked %d ms: negotiated on f1, f2, l: %s", when, ask, strings.Join(got, " "))
	}
}

// expiredElsewhere: x on f1, with negotiated timeouts, loses its connection and expires;
// its ephemeral goes and a watcher on f2 hears it; x comes back on f2.
func expiredElsewhere(s *sessionsOn) {
	t := s.t
	s.negotiated("", 1000, 30000, 60000)
	x, _ := connectWith(t, s.f1, 4000)
	h := x.call(jute.OpCreate, &jute.CreateRequest{Path: "/m/xe", Acl: openACL, Flags: jute.FlagEphemeral}, nil)
	c := dial(t, s.f2)
	c.connect(0, nil)
	c.call(jute.OpSync, &jute.SyncRequest{Path: "/"}, nil)
	c.call(jute.OpExists, &jute.ExistsRequest{Path: "/m/xe", Watch: true}, nil)
	quiet, _ := connectWith(t, s.f1, 4000)
	quiet.call(jute.OpCreate, &jute.CreateRequest{Path: "/m/qe", Acl: openACL, Flags: jute.FlagEphemeral}, nil)
	quiet.call(jute.OpExists, &jute.ExistsRequest{Path: "/m/qe", Watch: true}, nil)
	x.nc.Close()
	took := awaitGone(t, s.f2, "/m/xe", 20*time.Second)
	s.say("x's ephemeral gone within 3s..12s of its connection lost: %v", took > 3*time.Second && took < 12*time.Second)
	s.say("quiet's ephemeral gone: %v", awaitGone(t, s.f2, "/m/qe", 20*time.Second) >= 0)
	// Whether the NodeDeleted of its own ephemeral reaches it first is a race on ZooKeeper:
	// its member closes a connection silent for the session timeout on its own.
	quiet.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, _, err := eventsBeforeReply(quiet)
	s.say("quiet, silent with its connection open on f1, closed: %v", err != nil && !isTimeout(err))
	s.say("c on f2: %v", syncEvents(c))
	_, line := s.reattach(s.f2, x.sid, x.pw, h.Zxid, 4000)
	s.say("x's expired session on f2: %s", line)
}

// leaderChange: y, silent on f1, and a client of the killed leader expire a session
// timeout after a new leader serves (ZooKeeper's new leader gives every session a fresh
// timeout); z, which comes back after the election, keeps its session and ephemeral; a
// container emptied and a TTL node that expired after the election are cleaned up by
// the new leader.
func leaderChange(s *sessionsOn) {
	t := s.t
	y, _ := connectWith(t, s.f1, 6000)
	y.call(jute.OpCreate, &jute.CreateRequest{Path: "/m/ye", Acl: openACL, Flags: jute.FlagEphemeral}, nil)
	z, _ := connectWith(t, s.f1, 6000)
	zh := z.call(jute.OpCreate, &jute.CreateRequest{Path: "/m/ze", Acl: openACL, Flags: jute.FlagEphemeral}, nil)
	s.write(z, jute.OpCreateContainer, &jute.CreateRequest{Path: "/m/ct", Acl: openACL, Flags: jute.FlagContainer})
	s.create(z, "/m/ct/k", 0)
	s.write(z, jute.OpCreateTTL, &jute.CreateTTLRequest{Path: "/m/ttl", Acl: openACL, Flags: jute.FlagPersistentWithTTL, Ttl: 4000})
	onLeader, _ := connectWith(t, s.l, 6000)
	onLeader.call(jute.OpCreate, &jute.CreateRequest{Path: "/m/le", Acl: openACL, Flags: jute.FlagEphemeral}, nil)
	y.nc.Close()
	s.member(s.l).Kill()
	if err := s.c.AwaitServing(60 * time.Second); err != nil {
		t.Fatal(err)
	}
	elected := time.Now()
	// ZooKeeper's f1 dropped z when it lost its leader; zkraft's may keep it through a
	// short election (docs/architecture.md, "Quorum loss"): z moves on by itself.
	z.nc.Close()
	z2, line := s.reattach(s.f2, z.sid, z.pw, zh.Zxid, 6000)
	s.say("z back on f2 after the election: %s", line)
	c := dial(t, s.f2)
	c.connect(0, nil)
	var st jute.ExistsResponse
	c.call(jute.OpSync, &jute.SyncRequest{Path: "/"}, nil)
	h := c.call(jute.OpExists, &jute.ExistsRequest{Path: "/m/ze"}, &st)
	s.say("z's ephemeral: err=%d owned by z=%v", h.Err, st.Stat.EphemeralOwner == z.sid)
	s.write(z2, jute.OpDelete, &jute.DeleteRequest{Path: "/m/ct/k", Version: -1})
	awaitGone(t, s.f2, "/m/ye", 30*time.Second)
	took := time.Since(elected)
	t.Logf("%s: y's ephemeral gone %v after the election", s.c.Name, took)
	s.say("y's ephemeral gone 4s..14s after the election: %v", took > 4*time.Second && took < 14*time.Second)
	awaitGone(t, s.f2, "/m/le", 30*time.Second)
	took = time.Since(elected)
	s.say("the killed leader's client's ephemeral gone 4s..14s after the election: %v", took > 4*time.Second && took < 14*time.Second)
	s.say("emptied container gone: %v", awaitGone(t, s.f2, "/m/ct", 15*time.Second) >= 0)
	s.say("expired TTL node gone: %v", awaitGone(t, s.f2, "/m/ttl", 15*time.Second) >= 0)
}

// watchesAcrossMove: client a sets every kind of watch on f1, loses its connection, b
// changes the watched nodes on f2, and a comes back on f2 with setWatches2.
func watchesAcrossMove(s *sessionsOn) {
	t := s.t
	b := dial(t, s.f2)
	b.connect(0, nil)
	for _, p := range []string{"/m", "/m/d", "/m/same", "/m/d2", "/m/dd", "/m/c", "/m/c/k", "/m/gone", "/m/cs", "/m/p", "/m/r"} {
		s.create(b, p, 0)
	}
	b.call(jute.OpSync, &jute.SyncRequest{Path: "/"}, nil)

	a := dial(t, s.f1)
	a.connect(0, nil)
	a.call(jute.OpSync, &jute.SyncRequest{Path: "/"}, nil)
	s.create(a, "/m/eph", jute.FlagEphemeral)
	var last int64
	read := func(op int32, req jute.Record) {
		h := a.call(op, req, nil)
		last = h.Zxid
		s.say("a on f1: op %d %v: err=%d", op, req, h.Err)
	}
	read(jute.OpGetData, &jute.GetDataRequest{Path: "/m/d", Watch: true})
	read(jute.OpGetData, &jute.GetDataRequest{Path: "/m/same", Watch: true})
	read(jute.OpGetData, &jute.GetDataRequest{Path: "/m/dd", Watch: true})
	read(jute.OpExists, &jute.ExistsRequest{Path: "/m/d2", Watch: true})
	read(jute.OpExists, &jute.ExistsRequest{Path: "/m/e", Watch: true})
	read(jute.OpExists, &jute.ExistsRequest{Path: "/m/e2", Watch: true})
	read(jute.OpGetChildren, &jute.GetChildrenRequest{Path: "/m/c", Watch: true})
	read(jute.OpGetChildren, &jute.GetChildrenRequest{Path: "/m/gone", Watch: true})
	read(jute.OpGetChildren, &jute.GetChildrenRequest{Path: "/m/cs", Watch: true})
	read(jute.OpAddWatch, &jute.AddWatchRequest{Path: "/m/p", Mode: jute.AddWatchPersistent})
	read(jute.OpAddWatch, &jute.AddWatchRequest{Path: "/m/r", Mode: jute.AddWatchPersistentRecursive})
	// g re-sends its watches as go-zookeeper does: setWatches (101) with an ordinary xid.
	g := dial(t, s.f1)
	g.connect(0, nil)
	g.call(jute.OpGetData, &jute.GetDataRequest{Path: "/m/d", Watch: true}, nil)
	g.call(jute.OpGetData, &jute.GetDataRequest{Path: "/m/same", Watch: true}, nil)
	g.call(jute.OpExists, &jute.ExistsRequest{Path: "/m/e", Watch: true}, nil)
	gLast := g.call(jute.OpGetChildren, &jute.GetChildrenRequest{Path: "/m/cs", Watch: true}, nil).Zxid
	s.wchs("watches set on f1")
	g.nc.Close()
	a.nc.Close()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if totalWatches.FindString(askFourLetter(t, s.f1, "wchs")) == "Total watches:0" {
			break
		}
	}
	s.wchs("a's connection lost")

	s.write(b, jute.OpSetData, &jute.SetDataRequest{Path: "/m/d", Data: []byte("x"), Version: -1})
	s.create(b, "/m/e", 0)
	s.write(b, jute.OpDelete, &jute.DeleteRequest{Path: "/m/d2", Version: -1})
	s.create(b, "/m/c/k2", 0)
	s.write(b, jute.OpDelete, &jute.DeleteRequest{Path: "/m/gone", Version: -1})
	s.write(b, jute.OpSetData, &jute.SetDataRequest{Path: "/m/p", Data: []byte("x"), Version: -1})
	s.create(b, "/m/r/x", 0)
	s.create(b, "/m/e2", 0)
	s.write(b, jute.OpDelete, &jute.DeleteRequest{Path: "/m/e2", Version: -1})
	s.write(b, jute.OpDelete, &jute.DeleteRequest{Path: "/m/dd", Version: -1})
	s.create(b, "/m/dd", 0)

	a2, line := s.reattach(s.f2, a.sid, a.pw, last, 10000)
	s.say("a back on f2: %s", line)
	a2.nc.Write(jute.AppendFrame(nil, &jute.RequestHeader{Xid: jute.XidSetWatches, Type: jute.OpSetWatches2},
		&jute.SetWatches2{RelativeZxid: last,
			DataWatches:                []string{"/m/d", "/m/same", "/m/dd", "/m/d2"},
			ExistWatches:               []string{"/m/e", "/m/e2"},
			ChildWatches:               []string{"/m/c", "/m/gone", "/m/cs"},
			PersistentWatches:          []string{"/m/p"},
			PersistentRecursiveWatches: []string{"/m/r"}}))
	if evs, h, err := eventsBeforeReply(a2); err != nil {
		s.say("setWatches2: events %v, then %s", evs, closedOrErr(err))
	} else {
		s.say("setWatches2: events %v, then xid=%d err=%d", evs, h.Xid, h.Err)
	}
	s.wchs("watches set again on f2")
	for _, cmd := range []string{"wchc", "wchp"} {
		// The lines sorted: ZooKeeper lists paths in its hash sets' order.
		out := strings.ReplaceAll(askFourLetter(t, s.f2, cmd), fmt.Sprintf("0x%x", a.sid), "<a>")
		s.say("%s on f2: %q", cmd, sortedCopy(strings.Split(out, "\n")))
	}
	g2, _ := s.reattach(s.f2, g.sid, g.pw, gLast, 10000)
	s.say("g back on f2, setWatches: %s", describeReply(g2, jute.OpSetWatches, &jute.SetWatches{RelativeZxid: gLast,
		DataWatches: []string{"/m/d", "/m/same"}, ExistWatches: []string{"/m/e"}, ChildWatches: []string{"/m/cs"}}))
	s.wchs("g's watches set again on f2")

	s.write(b, jute.OpSetData, &jute.SetDataRequest{Path: "/m/same", Data: []byte("y"), Version: -1})
	s.create(b, "/m/e2", 0)
	s.create(b, "/m/cs/n", 0)
	s.write(b, jute.OpSetData, &jute.SetDataRequest{Path: "/m/p", Data: []byte("y"), Version: -1})
	s.create(b, "/m/r/x/y", 0)
	s.write(b, jute.OpSetData, &jute.SetDataRequest{Path: "/m/r", Data: []byte("y"), Version: -1})
	s.write(b, jute.OpDelete, &jute.DeleteRequest{Path: "/m/p", Version: -1})
	s.say("a on f2, changes after setWatches2: %v", syncEvents(a2))
	s.wchs("after the changes")
	movedSession(s, a2, last)
}

// movedSession: a (now on f2) keeps its ephemeral; another member refuses it a wrong
// password; its watches are checked and removed on f2 and are gone from f1; it closes on
// f2, a follower, and its ephemeral goes everywhere.
func movedSession(s *sessionsOn, a *rawClient, last int64) {
	t := s.t
	c := dial(t, s.f1)
	c.connect(0, nil)
	c.call(jute.OpSync, &jute.SyncRequest{Path: "/"}, nil)
	var st jute.ExistsResponse
	h := c.call(jute.OpExists, &jute.ExistsRequest{Path: "/m/eph", Watch: true}, &st)
	s.say("c on f1: a's ephemeral err=%d owned by a=%v", h.Err, st.Stat.EphemeralOwner == a.sid)

	wrong := append([]byte(nil), a.pw...)
	wrong[0] ^= 0xff
	_, line := s.reattach(s.f1, a.sid, wrong, last, 10000)
	s.say("a's session on f1 with a wrong password: %s", line)
	s.say("a on f2 after that: %v", syncEvents(a))

	a.call(jute.OpGetData, &jute.GetDataRequest{Path: "/m/d", Watch: true}, nil)
	check := func(who string, cl *rawClient, op int32, path string, typ int32) {
		h := cl.call(op, &jute.CheckWatchesRequest{Path: path, Type: typ}, nil)
		s.say("%s: op %d %s type %d: err=%d", who, op, path, typ, h.Err)
	}
	check("a on f2", a, jute.OpCheckWatches, "/m/d", jute.WatcherData)
	check("a on f2", a, jute.OpCheckWatches, "/m/d", jute.WatcherChildren)
	check("a on f2", a, jute.OpCheckWatches, "/m/same", jute.WatcherData)
	check("a on f2", a, jute.OpCheckWatches, "/m/r", jute.WatcherAny)
	check("a on f2", a, jute.OpRemoveWatches, "/m/d", jute.WatcherAny)
	check("a on f2", a, jute.OpRemoveWatches, "/m/d", jute.WatcherAny)
	check("a on f2", a, jute.OpRemoveWatches, "/m/r", jute.WatcherAny)
	check("a on f2", a, jute.OpRemoveWatches, "/m/cs", jute.WatcherChildren)
	check("c on f1", c, jute.OpRemoveWatches, "/m/r", jute.WatcherAny)
	check("c on f1", c, jute.OpCheckWatches, "/m/eph", jute.WatcherData)
	s.wchs("watches removed")

	a.call(jute.OpExists, &jute.ExistsRequest{Path: "/m/eph", Watch: true}, nil)
	a.call(jute.OpGetChildren, &jute.GetChildrenRequest{Path: "/m", Watch: true}, nil)
	s.say("a, watching its own ephemeral, closes on f2: %s, then %s", describeReply(a, jute.OpCloseSession, nil), afterReply(a))
	s.say("c on f1: %v", syncEvents(c))
	_, line = s.reattach(s.f1, a.sid, a.pw, last, 10000)
	s.say("a's closed session on f1: %s", line)
}

// TestSessionsAcrossMembersMatchZooKeeper runs the same scenarios on a 3-member ZooKeeper
// 3.8 ensemble and a 3-member zkraft cluster.
func TestSessionsAcrossMembersMatchZooKeeper(t *testing.T) {
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	run := func(start func(int, ztest.Options) (*ztest.Cluster, error)) []string {
		c, err := start(3, ztest.Options{Logf: t.Logf, JVMFlags: []string{"-Dznode.container.checkIntervalMs=1000"}})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Stop()
		return sessionsTranscript(t, c)
	}
	want := run(ztest.StartZooKeeperEnsemble)
	got := run(ztest.StartZkraftCluster)
	if len(want) != len(got) {
		t.Fatalf("transcripts of %d and %d lines:\nzookeeper:\n%s\nzkraft:\n%s", len(want), len(got),
			strings.Join(want, "\n"), strings.Join(got, "\n"))
	}
	for i := range want {
		_, isKept := strings.CutPrefix(want[i], kept)
		switch {
		case !isKept && want[i] != got[i]:
			t.Errorf("line %d differs\nzookeeper: %s\nzkraft:    %s", i, want[i], got[i])
		case isKept && want[i] == got[i]:
			t.Errorf("line %d: a kept difference is gone, both say %s", i, got[i])
		}
	}
	t.Logf("zookeeper:\n%s", strings.Join(want, "\n"))
}

// describeReply sends one request (a ping as clients send it) and describes the events
// before its reply and the reply, or the closed connection.
func describeReply(c *rawClient, op int32, req jute.Record) string {
	h := &jute.RequestHeader{Xid: jute.XidPing, Type: op}
	f := jute.AppendFrame(nil, h)
	if op != jute.OpPing {
		c.xid++
		h.Xid = c.xid
		f = jute.AppendFrame(nil, h, req)
	}
	if _, err := c.nc.Write(f); err != nil {
		return "closed"
	}
	evs, r, err := eventsBeforeReply(c)
	if err != nil {
		return fmt.Sprintf("events %v, then %s", evs, closedOrErr(err))
	}
	return fmt.Sprintf("events %v, then xid ok=%v err=%d", evs, r.Xid == h.Xid, r.Err)
}

// leftOpen: a client reattaches its session on f2 while its connection to f1 is still
// open; what the old connection then serves.
func leftOpen(s *sessionsOn) {
	t := s.t
	a := dial(t, s.f1)
	a.connect(0, nil)
	s.create(a, "/o", 0)
	h := a.call(jute.OpGetData, &jute.GetDataRequest{Path: "/o", Watch: true}, nil)
	a2, line := s.reattach(s.f2, a.sid, a.pw, h.Zxid, 10000)
	s.say("a reattached on f2, f1's connection open: %s", line)
	s.say("%sa's old connection: %s", kept, afterReply(a))
	s.say("a2 on f2 sets data: %s", describeReply(a2, jute.OpSetData, &jute.SetDataRequest{Path: "/o", Data: []byte("x"), Version: -1}))
	time.Sleep(500 * time.Millisecond)
	s.say("%sold: ping: %s", kept, describeReply(a, jute.OpPing, nil))
	s.say("%sold: getData: %s", kept, describeReply(a, jute.OpGetData, &jute.GetDataRequest{Path: "/o"}))
	s.say("%sold: setData: %s", kept, describeReply(a, jute.OpSetData, &jute.SetDataRequest{Path: "/o", Data: []byte("y"), Version: -1}))
	s.say("a2 on f2: ping: %s", describeReply(a2, jute.OpPing, nil))
	s.say("a2 on f2: getData: %s", describeReply(a2, jute.OpGetData, &jute.GetDataRequest{Path: "/o"}))
}

// timeoutsPerMember: f2 restarts with narrower session timeout bounds; a session made on
// f1 reattaches there and is held to the timeout f2 negotiates.
func timeoutsPerMember(s *sessionsOn) {
	t := s.t
	f2 := s.member(s.f2)
	f2.Kill()
	for k, v := range map[string]string{"minSessionTimeout": "6000", "maxSessionTimeout": "8000"} {
		if err := f2.SetConfig(k, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := f2.Restart(false); err != nil {
		t.Fatal(err)
	}
	if err := s.c.AwaitServing(60 * time.Second); err != nil {
		t.Fatal(err)
	}
	s.negotiated("f2 bounded to 6000..8000, ", 1000, 30000)
	v, r := connectWith(t, s.f1, 30000)
	h := v.call(jute.OpCreate, &jute.CreateRequest{Path: "/m/ve", Acl: openACL, Flags: jute.FlagEphemeral}, nil)
	v.nc.Close()
	// Past f1's next ping to the leader, which carries v's touch with f1's timeout: the
	// leader takes each touch's timeout as it comes, so that ping, if it came after the
	// reattach, would give v 30 s again.
	time.Sleep(2500 * time.Millisecond)
	v2, line := s.reattach(s.f2, v.sid, v.pw, h.Zxid, r.TimeOut)
	s.say("v (30000 ms on f1) reattached on f2: %s", line)
	v2.nc.Close()
	took := awaitGone(t, s.f1, "/m/ve", 45*time.Second)
	t.Logf("%s: v's ephemeral gone %v after it went silent on f2", s.c.Name, took)
	s.say("v's ephemeral gone 6s..20s after it went silent on f2: %v", took > 6*time.Second && took < 20*time.Second)
}
