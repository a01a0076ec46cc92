package server

import (
	"net"
	"testing"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// A connection that sends no ConnectRequest, or only part of one, is closed after
// SessionlessTimeout (ZooKeeper's zookeeper.nio.sessionlessCnxnTimeout): it gives back its
// maxClientCnxns place, and a client from the same address is served.
func TestSessionlessConnectionIsClosed(t *testing.T) {
	s := startServer(t, func(c *Config) { c.MaxClientCnxns, c.SessionlessTimeout = 2, 300*time.Millisecond })
	addr := s.Addr().String()
	idle := make([]net.Conn, 2)
	for i := range idle {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		idle[i] = nc
	}
	idle[1].Write([]byte{0, 0, 0, 44, 0}) // part of a ConnectRequest, then nothing
	for i, nc := range idle {
		nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		var b [1]byte
		if _, err := nc.Read(b[:]); isTimeout(err) {
			t.Fatalf("connection %d without a session still open after 10 s", i)
		}
	}
	awaitClosed(t, s, closedIdle, 2)
	c := dial(t, addr)
	c.connect(0, nil)
	if h := c.call(jute.OpExists, &jute.ExistsRequest{Path: "/"}, &jute.ExistsResponse{}); h.Err != 0 {
		t.Fatalf("exists /: %d", h.Err)
	}
	// The deadline ends with the handshake: a session quiet for longer keeps its
	// connection.
	time.Sleep(600 * time.Millisecond) // twice SessionlessTimeout
	if h := c.call(jute.OpExists, &jute.ExistsRequest{Path: "/"}, &jute.ExistsResponse{}); h.Err != 0 {
		t.Fatalf("exists / after a quiet spell: %d", h.Err)
	}
}

// A standalone server has nothing to catch up with: a ConnectRequest whose lastZxidSeen
// is ahead of it is refused at once (closed without an answer), as ZooKeeper's
// CLIENT_ZXID_AHEAD, not after a quarter of the session timeout (10 s here).
func TestZxidAheadIsRefusedAtOnceStandalone(t *testing.T) {
	s := startServer(t, nil)
	last := s.node.FSM.LastZxid()
	b := dial(t, s.Addr().String())
	start := time.Now()
	req := jute.Connect{ConnectRequest: jute.ConnectRequest{TimeOut: 40000, LastZxidSeen: last + 100, Passwd: make([]byte, 16)}, HasReadOnly: true}
	if resp := b.tryConnect(req); resp != nil {
		t.Fatalf("answered: %+v", resp)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("refused after %v, want at once", d.Round(time.Millisecond))
	}
}

// A connection closed while its handshake waits (for the log, a sync, a catch-up) is not
// attached to its session afterwards: close had already removed it, so nothing would
// remove it again, and the session would keep a dead connection.
func TestAttachRefusesAClosedConnection(t *testing.T) {
	s := startServer(t, nil)
	a := dial(t, s.Addr().String())
	a.connect(0, nil)
	s.mu.Lock()
	c := s.sessions[a.sid]
	s.mu.Unlock()
	if c == nil {
		t.Fatal("no connection attached to the new session")
	}
	c.close(closedNoQuorum)
	if s.attach(a.sid, c) {
		t.Fatal("attach took a closed connection")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if got, ok := s.sessions[a.sid]; ok {
		t.Fatalf("session 0x%x still has a connection (closed: %v)", a.sid, got.isDone())
	}
}
