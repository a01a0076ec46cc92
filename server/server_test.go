package server

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// startServer runs an in-process server on a free loopback port with its data in a
// temp dir, and stops it when the test ends.
func startServer(t testing.TB, mod func(*Config)) *Server {
	t.Helper()
	return startServerLogging(t, mod, nil)
}

// startServerLogging is startServer with the server's logger (nil: slog's default).
func startServerLogging(t testing.TB, mod func(*Config), log *slog.Logger) *Server {
	t.Helper()
	cfg := DefaultConfig()
	cfg.ClientPort = 0
	cfg.ClientPortAddress = "127.0.0.1"
	cfg.DataDir = t.TempDir()
	cfg.FourLetterWhitelist = []string{"*"}
	if mod != nil {
		mod(&cfg)
	}
	s, err := New(cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// rawClient speaks the protocol byte by byte, as the tests of a server should.
type rawClient struct {
	t   testing.TB
	nc  net.Conn
	br  *bufio.Reader
	xid int32
	sid int64
	pw  []byte
}

func dial(t testing.TB, addr string) *rawClient {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(30 * time.Second))
	return &rawClient{t: t, nc: nc, br: bufio.NewReader(nc)}
}

// tryConnect sends req and returns the server's answer, or nil if it closed the
// connection without one.
func (c *rawClient) tryConnect(req jute.Connect) *jute.Connected {
	c.t.Helper()
	if _, err := c.nc.Write(jute.AppendFrame(nil, &req)); err != nil {
		return nil
	}
	b, err := jute.ReadFrame(c.br, nil, jute.DefaultMaxBuffer)
	if err != nil {
		if isTimeout(err) {
			c.t.Fatal("no answer to a ConnectRequest, and the connection is still open")
		}
		return nil
	}
	var resp jute.Connected
	d := jute.NewDecoder(b)
	resp.Decode(d)
	if d.Err != nil {
		c.t.Fatal(d.Err)
	}
	c.sid, c.pw = resp.SessionId, resp.Passwd
	return &resp
}

func (c *rawClient) connect(sid int64, pw []byte) *jute.Connected {
	c.t.Helper()
	if pw == nil {
		pw = make([]byte, 16)
	}
	req := &jute.Connect{ConnectRequest: jute.ConnectRequest{TimeOut: 10000, SessionId: sid, Passwd: pw}, HasReadOnly: true}
	if _, err := c.nc.Write(jute.AppendFrame(nil, req)); err != nil {
		c.t.Fatal(err)
	}
	var resp jute.Connected
	c.readFrame(&resp)
	c.sid, c.pw = resp.SessionId, resp.Passwd
	return &resp
}

func (c *rawClient) readFrame(rs ...jute.Record) {
	c.t.Helper()
	b, err := jute.ReadFrame(c.br, nil, jute.DefaultMaxBuffer)
	if err != nil {
		c.t.Fatal(err)
	}
	d := jute.NewDecoder(b)
	for _, r := range rs {
		r.Decode(d)
	}
	if d.Err != nil {
		c.t.Fatal(d.Err)
	}
}

func (c *rawClient) send(op int32, req jute.Record) int32 {
	c.t.Helper()
	c.xid++
	if _, err := c.nc.Write(jute.AppendFrame(nil, &jute.RequestHeader{Xid: c.xid, Type: op}, req)); err != nil {
		c.t.Fatal(err)
	}
	return c.xid
}

// ping sends a ping as clients do (xid -2) and reads its answer, which carries -2 too.
func (c *rawClient) ping() jute.ReplyHeader {
	c.t.Helper()
	if _, err := c.nc.Write(jute.AppendFrame(nil, &jute.RequestHeader{Xid: jute.XidPing, Type: jute.OpPing})); err != nil {
		c.t.Fatal(err)
	}
	var h jute.ReplyHeader
	c.readFrame(&h)
	if h.Xid != jute.XidPing {
		c.t.Fatalf("ping answered with xid %d", h.Xid)
	}
	return h
}

// call sends one request and reads its reply, skipping no notifications.
func (c *rawClient) call(op int32, req, resp jute.Record) jute.ReplyHeader {
	c.t.Helper()
	h, err := c.exchange(op, req, resp)
	if err != nil {
		c.t.Fatal(err)
	}
	return h
}

// exchange sends one request and reads its reply, which must answer it, or returns what
// ended the connection.
func (c *rawClient) exchange(op int32, req, resp jute.Record) (jute.ReplyHeader, error) {
	c.xid++
	if _, err := c.nc.Write(jute.AppendFrame(nil, &jute.RequestHeader{Xid: c.xid, Type: op}, req)); err != nil {
		return jute.ReplyHeader{}, err
	}
	b, err := jute.ReadFrame(c.br, nil, jute.DefaultMaxBuffer)
	if err != nil {
		return jute.ReplyHeader{}, err
	}
	d := jute.NewDecoder(b)
	var h jute.ReplyHeader
	if h.Decode(d); d.Err == nil && h.Xid != c.xid {
		return h, fmt.Errorf("reply xid %d, want %d", h.Xid, c.xid)
	}
	if h.Err == 0 && resp != nil {
		resp.Decode(d)
	}
	return h, d.Err
}

// reply reads the next reply, which must answer xid, and returns its header and body.
func (c *rawClient) reply(xid int32) (jute.ReplyHeader, []byte) {
	c.t.Helper()
	b, err := jute.ReadFrame(c.br, nil, jute.DefaultMaxBuffer)
	if err != nil {
		c.t.Fatal(err)
	}
	d := jute.NewDecoder(b)
	var h jute.ReplyHeader
	h.Decode(d)
	if d.Err != nil {
		c.t.Fatal(d.Err)
	}
	if h.Xid != xid {
		c.t.Fatalf("reply xid %d, want %d", h.Xid, xid)
	}
	return h, b[len(b)-d.Remaining():]
}

var openACL = []jute.ACL{{Perms: jute.PermAll, Id: jute.Id{Scheme: "world", Id: "anyone"}}}

func TestCreateGetThroughTheLog(t *testing.T) {
	s := startServer(t, nil)
	c := dial(t, s.Addr().String())
	if r := c.connect(0, nil); r.SessionId == 0 || r.TimeOut != 10000 || len(r.Passwd) != 16 {
		t.Fatalf("connect: %+v", r)
	}
	var cr jute.Create2Response
	h := c.call(jute.OpCreate2, &jute.CreateRequest{Path: "/a", Data: []byte("x"), Acl: openACL}, &cr)
	if h.Err != 0 || cr.Path != "/a" || cr.Stat.Czxid != h.Zxid || cr.Stat.DataLength != 1 {
		t.Fatalf("create2: %+v %+v", h, cr)
	}
	var gd jute.GetDataResponse
	if h := c.call(jute.OpGetData, &jute.GetDataRequest{Path: "/a"}, &gd); h.Err != 0 || string(gd.Data) != "x" {
		t.Fatalf("getData: %+v %+v", h, gd)
	}
	if h := c.call(jute.OpCreate, &jute.CreateRequest{Path: "/a", Acl: openACL}, nil); jute.Code(h.Err) != jute.ErrNodeExists {
		t.Fatalf("second create: err %d, want NodeExists", h.Err)
	}
}

// Pipelined requests are answered in order, and a read after a write sees the write:
// reads behind a write and behind each other, each reply with the version its place in
// the order gives.
func TestPipelinedOrder(t *testing.T) {
	s := startServer(t, nil)
	c := dial(t, s.Addr().String())
	c.connect(0, nil)
	const n = 100
	var frames []byte
	ops := []int32{jute.OpSetData, jute.OpGetData, jute.OpGetData, jute.OpExists}
	for i := 0; i < n; i++ {
		for _, op := range ops {
			c.xid++
			var req jute.Record = &jute.GetDataRequest{Path: "/"}
			switch op {
			case jute.OpSetData:
				req = &jute.SetDataRequest{Path: "/", Data: []byte{byte(i)}, Version: -1}
			case jute.OpExists:
				req = &jute.ExistsRequest{Path: "/"}
			}
			frames = jute.AppendFrame(frames, &jute.RequestHeader{Xid: c.xid, Type: op}, req)
		}
	}
	if _, err := c.nc.Write(frames); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n*len(ops); i++ {
		var h jute.ReplyHeader
		var version int32
		switch ops[i%len(ops)] {
		case jute.OpSetData:
			var r jute.SetDataResponse
			c.readFrame(&h, &r)
			version = r.Stat.Version
		case jute.OpGetData:
			var r jute.GetDataResponse
			c.readFrame(&h, &r)
			if len(r.Data) != 1 || r.Data[0] != byte(i/len(ops)) {
				t.Fatalf("round %d: getData saw %v, not the write before it", i/len(ops), r.Data)
			}
			version = r.Stat.Version
		case jute.OpExists:
			var r jute.ExistsResponse
			c.readFrame(&h, &r)
			version = r.Stat.Version
		}
		if h.Xid != int32(i+1) || h.Err != 0 {
			t.Fatalf("reply %d: %+v", i, h)
		}
		if want := int32(i/len(ops) + 1); version != want {
			t.Fatalf("reply %d: version %d, want %d", i, version, want)
		}
	}
}

// Pipelined frames of sizes around the connection's read buffer's (values of about its
// size, a byte over it, several times it), written at once, are read whole and in order
// however the buffer's refills cut them.
func TestFramesAcrossTheReadBuffer(t *testing.T) {
	s := startServer(t, nil)
	c := dial(t, s.Addr().String())
	c.connect(0, nil)
	sizes := []int{1, readBufferSize - 40, readBufferSize, readBufferSize + 1, 3*readBufferSize + 17, 100, 0, 2 * readBufferSize}
	var frames []byte
	values := make([][]byte, 0, len(sizes))
	for i, n := range sizes {
		v := bytes.Repeat([]byte{byte('a' + i)}, n)
		values = append(values, v)
		c.xid++
		frames = jute.AppendFrame(frames, &jute.RequestHeader{Xid: c.xid, Type: jute.OpSetData}, &jute.SetDataRequest{Path: "/", Data: v, Version: -1})
		c.xid++
		frames = jute.AppendFrame(frames, &jute.RequestHeader{Xid: c.xid, Type: jute.OpGetData}, &jute.GetDataRequest{Path: "/"})
	}
	written := make(chan error, 1)
	go func() { _, err := c.nc.Write(frames); written <- err }()
	for i := range sizes {
		var h jute.ReplyHeader
		c.readFrame(&h, &jute.SetDataResponse{})
		if h.Xid != int32(2*i+1) || h.Err != 0 {
			t.Fatalf("setData %d: %+v", i, h)
		}
		var gd jute.GetDataResponse
		c.readFrame(&h, &gd)
		if h.Xid != int32(2*i+2) || h.Err != 0 || !bytes.Equal(gd.Data, values[i]) {
			t.Fatalf("getData %d (%d bytes set): %+v, %d bytes read", i, sizes[i], h, len(gd.Data))
		}
	}
	if err := <-written; err != nil {
		t.Fatal(err)
	}
}

// A frame over jute.maxbuffer closes that connection only.
func TestOversizedFrameClosesOnlyThatConnection(t *testing.T) {
	s := startServer(t, func(c *Config) { c.MaxBuffer = 4096 })
	good := dial(t, s.Addr().String())
	good.connect(0, nil)
	bad := dial(t, s.Addr().String())
	bad.connect(0, nil)
	bad.nc.Write([]byte{0x00, 0x10, 0x00, 0x00})
	if _, err := bad.br.ReadByte(); err != io.EOF && !isClosed(err) {
		t.Fatalf("oversized frame: read gave %v, want the connection closed", err)
	}
	if h := good.call(jute.OpExists, &jute.ExistsRequest{Path: "/"}, &jute.ExistsResponse{}); h.Err != 0 {
		t.Fatalf("other client: %+v", h)
	}
}

// stopReading connects a client that creates /big (1 MB), asks for it n times at once
// and reads none of the replies.
func stopReading(t *testing.T, s *Server, n int) *rawClient {
	c := dial(t, s.Addr().String())
	c.connect(0, nil)
	big := make([]byte, 1000000)
	if h := c.call(jute.OpCreate, &jute.CreateRequest{Path: "/big", Data: big, Acl: openACL}, nil); h.Err != 0 {
		t.Fatalf("create: %d", h.Err)
	}
	var frames []byte
	for i := 0; i < n; i++ {
		c.xid++
		frames = jute.AppendFrame(frames, &jute.RequestHeader{Xid: c.xid, Type: jute.OpGetData}, &jute.GetDataRequest{Path: "/big"})
	}
	c.nc.Write(frames)
	return c
}

func isClosed(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "reset") || strings.Contains(err.Error(), "closed"))
}

func TestWatchEventComesBeforeTheReplyThatFollowsIt(t *testing.T) {
	s := startServer(t, nil)
	c := dial(t, s.Addr().String())
	c.connect(0, nil)
	if h := c.call(jute.OpExists, &jute.ExistsRequest{Path: "/w", Watch: true}, nil); jute.Code(h.Err) != jute.ErrNoNode {
		t.Fatalf("exists: %+v", h)
	}
	xid := c.send(jute.OpCreate, &jute.CreateRequest{Path: "/w", Acl: openACL})
	var h jute.ReplyHeader
	var ev jute.WatcherEvent
	c.readFrame(&h, &ev)
	if h.Xid != jute.XidNotification || ev.Type != jute.EventNodeCreated || ev.Path != "/w" || h.Zxid <= 0 {
		t.Fatalf("first frame: %+v %+v, want NodeCreated /w", h, ev)
	}
	var cr jute.CreateResponse
	var rh jute.ReplyHeader
	c.readFrame(&rh, &cr)
	if rh.Xid != xid || rh.Zxid != h.Zxid {
		t.Fatalf("reply %+v after event zxid %d", rh, h.Zxid)
	}
}

func TestReconnectKeepsSessionAndWrongPasswordIsRefused(t *testing.T) {
	s := startServer(t, nil)
	a := dial(t, s.Addr().String())
	a.connect(0, nil)
	a.call(jute.OpCreate, &jute.CreateRequest{Path: "/e", Acl: openACL, Flags: jute.FlagEphemeral}, nil)
	b := dial(t, s.Addr().String())
	if r := b.connect(a.sid, a.pw); r.SessionId != a.sid || r.TimeOut == 0 {
		t.Fatalf("reconnect: %+v", r)
	}
	var st jute.ExistsResponse
	if h := b.call(jute.OpExists, &jute.ExistsRequest{Path: "/e"}, &st); h.Err != 0 || st.Stat.EphemeralOwner != a.sid {
		t.Fatalf("ephemeral after reconnect: %+v %+v", h, st)
	}
	wrong := append([]byte(nil), a.pw...)
	wrong[0] ^= 1
	c := dial(t, s.Addr().String())
	if r := c.connect(a.sid, wrong); r.SessionId != 0 || r.TimeOut != 0 {
		t.Fatalf("wrong password accepted: %+v", r)
	}
}

// The whitelist lets through what it lists, and srvr whatever it lists (zkServer.sh
// status needs it; ZooKeeper's FourLetterCommands adds it, and isro with read-only mode).
func TestFourLetterWords(t *testing.T) {
	s := startServer(t, func(c *Config) { c.FourLetterWhitelist = []string{"ruok"} })
	ask := func(cmd string) string {
		nc, err := net.Dial("tcp", s.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		nc.Write([]byte(cmd))
		b, _ := io.ReadAll(nc)
		return string(b)
	}
	if got := ask("ruok"); got != "imok" {
		t.Fatalf("ruok: %q", got)
	}
	if got := ask("srvr"); !strings.Contains(got, "Mode: standalone\n") || !strings.HasPrefix(got, "Zookeeper version: ") {
		t.Fatalf("srvr: %q", got)
	}
	if got := ask("dump"); got != "dump is not executed because it is not in the whitelist.\n" {
		t.Fatalf("dump: %q", got)
	}
	if got := ask("isro"); got != "isro is not executed because it is not in the whitelist.\n" {
		t.Fatalf("isro without read-only mode: %q", got)
	}
	ro := &Config{FourLetterWhitelist: []string{"ruok"}, ReadOnlyMode: true}
	if !ro.fourLetterAllowed("isro") || ro.fourLetterAllowed("dump") {
		t.Fatal("with read-only mode on, isro must be whitelisted, and nothing else added")
	}
}

// Everything written is there after a restart on the same data dir.
func TestRestartKeepsData(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, func(c *Config) { c.DataDir = dir })
	c := dial(t, s.Addr().String())
	c.connect(0, nil)
	for _, p := range []string{"/p", "/p/q"} {
		if h := c.call(jute.OpCreate, &jute.CreateRequest{Path: p, Data: []byte(p), Acl: openACL}, nil); h.Err != 0 {
			t.Fatalf("create %s: %d", p, h.Err)
		}
	}
	s.Close()
	s2 := startServer(t, func(c *Config) { c.DataDir = dir })
	c2 := dial(t, s2.Addr().String())
	if r := c2.connect(c.sid, c.pw); r.SessionId != c.sid {
		t.Fatalf("session lost over restart: %+v", r)
	}
	var gd jute.GetDataResponse
	if h := c2.call(jute.OpGetData, &jute.GetDataRequest{Path: "/p/q"}, &gd); h.Err != 0 || string(gd.Data) != "/p/q" {
		t.Fatalf("after restart: %+v %q", h, gd.Data)
	}
}

// A session that stops pinging expires through the log: its ephemerals go, another
// session's watch on them fires, and the old id cannot be reattached.
func TestSessionExpiryDeletesEphemeralsAndFiresWatches(t *testing.T) {
	s := startServer(t, func(c *Config) { c.TickTime = 50 * time.Millisecond })
	a := dial(t, s.Addr().String())
	req := &jute.Connect{ConnectRequest: jute.ConnectRequest{TimeOut: 200, Passwd: make([]byte, 16)}}
	a.nc.Write(jute.AppendFrame(nil, req))
	var ca jute.Connected
	a.readFrame(&ca)
	if ca.TimeOut != 200 {
		t.Fatalf("negotiated %d, want 200", ca.TimeOut)
	}
	a.sid, a.pw = ca.SessionId, ca.Passwd
	if h := a.call(jute.OpCreate, &jute.CreateRequest{Path: "/eph", Acl: openACL, Flags: jute.FlagEphemeral}, nil); h.Err != 0 {
		t.Fatalf("create: %d", h.Err)
	}
	w := dial(t, s.Addr().String())
	w.connect(0, nil)
	if h := w.call(jute.OpExists, &jute.ExistsRequest{Path: "/eph", Watch: true}, &jute.ExistsResponse{}); h.Err != 0 {
		t.Fatalf("exists: %d", h.Err)
	}
	a.nc.Close() // silent from now on
	var h jute.ReplyHeader
	var ev jute.WatcherEvent
	w.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	w.readFrame(&h, &ev)
	if h.Xid != jute.XidNotification || ev.Type != jute.EventNodeDeleted || ev.Path != "/eph" {
		t.Fatalf("got %+v %+v, want NodeDeleted /eph", h, ev)
	}
	b := dial(t, s.Addr().String())
	if r := b.connect(a.sid, a.pw); r.SessionId != 0 || r.TimeOut != 0 {
		t.Fatalf("expired session reattached: %+v", r)
	}
}

// A reconnecting client re-sends its watches with the last zxid it saw; a change it
// missed fires at once, one it did not miss stays watched (ZooKeeper's setWatches).
func TestSetWatchesAfterReconnect(t *testing.T) {
	s := startServer(t, nil)
	a := dial(t, s.Addr().String())
	a.connect(0, nil)
	a.call(jute.OpCreate, &jute.CreateRequest{Path: "/changed", Acl: openACL}, nil)
	h := a.call(jute.OpCreate, &jute.CreateRequest{Path: "/same", Acl: openACL}, nil)
	seen := h.Zxid
	a.nc.Close()

	b := dial(t, s.Addr().String())
	b.connect(0, nil)
	b.call(jute.OpSetData, &jute.SetDataRequest{Path: "/changed", Data: []byte("x"), Version: -1}, &jute.SetDataResponse{})

	a2 := dial(t, s.Addr().String())
	a2.connect(a.sid, a.pw)
	a2.nc.Write(jute.AppendFrame(nil, &jute.RequestHeader{Xid: jute.XidSetWatches, Type: jute.OpSetWatches},
		&jute.SetWatches{RelativeZxid: seen, DataWatches: []string{"/changed", "/same"}, ExistWatches: []string{"/gone"}}))
	var eh jute.ReplyHeader
	var ev jute.WatcherEvent
	a2.readFrame(&eh, &ev)
	if eh.Xid != jute.XidNotification || ev.Type != jute.EventNodeDataChanged || ev.Path != "/changed" {
		t.Fatalf("missed change: got %+v %+v", eh, ev)
	}
	var rh jute.ReplyHeader
	a2.readFrame(&rh)
	if rh.Xid != jute.XidSetWatches || rh.Err != 0 {
		t.Fatalf("setWatches reply %+v", rh)
	}
	b.call(jute.OpSetData, &jute.SetDataRequest{Path: "/same", Data: []byte("y"), Version: -1}, &jute.SetDataResponse{})
	a2.readFrame(&eh, &ev)
	if ev.Type != jute.EventNodeDataChanged || ev.Path != "/same" {
		t.Fatalf("restored watch: got %+v", ev)
	}
}

// A client that stops reading is disconnected once too much is queued for it; nobody
// else waits for it.
func TestSlowConsumerIsDisconnected(t *testing.T) {
	s := startServer(t, nil)
	c := stopReading(t, s, 80) // 80 MB of replies, never read
	other := dial(t, s.Addr().String())
	other.connect(0, nil)
	deadline := time.Now().Add(20 * time.Second)
	for {
		n := 0
		s.mu.Lock()
		for conn := range s.conns {
			if conn.sessionID() == c.sid {
				n++
			}
		}
		s.mu.Unlock()
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("slow consumer still connected")
		}
		if h := other.call(jute.OpExists, &jute.ExistsRequest{Path: "/big"}, &jute.ExistsResponse{}); h.Err != 0 {
			t.Fatalf("other client: %d", h.Err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := s.stats.closed[closedSlowClient].Load(); n != 1 {
		t.Errorf("%d closes counted as slow_client, want 1", n)
	}
}

// multiRead looks its paths up as they are, as ZooKeeper's does: no path check, so "/a/"
// and "/a/." are NoNode (BadArguments for a plain getData of them is the client's own
// check) and "" is the root.
func TestMultiReadLooksPathsUpAsTheyAre(t *testing.T) {
	s := startServer(t, nil)
	c := dial(t, s.Addr().String())
	c.connect(0, nil)
	if h := c.call(jute.OpCreate, &jute.CreateRequest{Path: "/a", Data: []byte("A"), Acl: openACL}, nil); h.Err != 0 {
		t.Fatalf("create /a: %d", h.Err)
	}
	var resp jute.MultiResponse
	if h := c.call(jute.OpMultiRead, &jute.MultiRequest{Ops: []jute.MultiOp{
		{Type: jute.OpGetData, Req: &jute.GetDataRequest{Path: "/a/"}},
		{Type: jute.OpGetChildren, Req: &jute.GetChildrenRequest{Path: "/a/."}},
		{Type: jute.OpGetData, Req: &jute.GetDataRequest{Path: ""}},
		{Type: jute.OpGetData, Req: &jute.GetDataRequest{Path: "/a"}},
	}}, &resp); h.Err != 0 {
		t.Fatalf("multiRead: %d", h.Err)
	}
	var got []jute.Code
	for _, r := range resp.Results {
		got = append(got, r.Err)
	}
	want := []jute.Code{jute.ErrNoNode, jute.ErrNoNode, jute.OK, jute.OK}
	if len(got) != len(want) {
		t.Fatalf("results %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("results %v, want %v", got, want)
		}
	}
}
