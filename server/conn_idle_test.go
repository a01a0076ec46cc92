package server

import (
	"runtime"
	"testing"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// An idle connection holds one goroutine, its reader: the processor, the responder and
// the writer run only while they have work (stage.go, outbox.go). Every connection here
// used all four (a write and pipelined requests queued behind it) before going idle.
func TestAnIdleConnectionHoldsOneGoroutine(t *testing.T) {
	s := startServer(t, nil)
	time.Sleep(100 * time.Millisecond) // the server's own goroutines settle
	base := runtime.NumGoroutine()
	const n = 40
	clients := connectedClients(t, s.Addr().String(), n)
	for _, c := range clients {
		// A write, then reads pipelined behind it: the reader proposes the write, the
		// reads queue for the processor, which waits for the responder's answer; the
		// replies go out through the writer.
		var frames []byte
		for k := range 4 {
			c.xid++
			var req jute.Record = &jute.GetDataRequest{Path: "/"}
			op := jute.OpGetData
			if k == 0 {
				op, req = jute.OpSetData, &jute.SetDataRequest{Path: "/", Data: []byte("x"), Version: -1}
			}
			frames = jute.AppendFrame(frames, &jute.RequestHeader{Xid: c.xid, Type: op}, req)
		}
		if _, err := c.nc.Write(frames); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range clients {
		for k := range int32(4) {
			if h, _ := c.reply(c.xid - 3 + k); h.Err != 0 {
				t.Fatalf("reply %+v", h)
			}
		}
	}
	// Each connection's stages end once they run dry: a reader per connection is left
	// (and a few goroutines more, not one per connection).
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > base+n+n/4 {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines with %d idle connections, %d without them: more than one each", runtime.NumGoroutine(), n, base)
		}
		time.Sleep(5 * time.Millisecond)
	}
	// And the connections serve on: the stages start again.
	for _, c := range clients {
		if h := c.call(jute.OpSetData, &jute.SetDataRequest{Path: "/", Data: []byte("y"), Version: -1}, &jute.SetDataResponse{}); h.Err != 0 {
			t.Fatalf("setData after idling: %+v", h)
		}
	}
	t.Logf("%d goroutines with %d idle connections, %d without them", runtime.NumGoroutine(), n, base)
}

// An idle connection holds no read buffer (connreader.go): not after its handshake, and
// not once it pings after a pause, however busy it was before.
func TestAnIdleConnectionHoldsNoReadBuffer(t *testing.T) {
	s := startServer(t, nil)
	const n = 40
	clients := connectedClients(t, s.Addr().String(), n)
	lentAtMost := func(max int64, when string) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for s.readBuffersLent.Load() > max {
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d connections hold %d read buffers, want at most %d", when, n, s.readBuffersLent.Load(), max)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	lentAtMost(0, "after their handshakes")
	for round := range 3 {
		for _, c := range clients {
			if h := c.call(jute.OpSetData, &jute.SetDataRequest{Path: "/", Data: []byte{byte(round)}, Version: -1}, &jute.SetDataResponse{}); h.Err != 0 {
				t.Fatalf("setData: %+v", h)
			}
		}
	}
	time.Sleep(2 * idleAfter)
	for _, c := range clients {
		if h := c.ping(); h.Err != 0 {
			t.Fatalf("ping: %+v", h)
		}
	}
	lentAtMost(0, "after a pause and a ping")
}

// connectedClients opens n raw connections to addr, each with a new session.
func connectedClients(t *testing.T, addr string, n int) []*rawClient {
	clients := make([]*rawClient, n)
	for i := range clients {
		clients[i] = dial(t, addr)
		clients[i].connect(0, nil)
	}
	return clients
}
