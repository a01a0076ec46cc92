package server

import (
	"runtime"
	"testing"

	"github.com/zkraft/zkraft/jute"
)

// A connection that once sent a large request (here an exists padded to nearly
// jute.maxbuffer) does not keep a frame buffer of that size for the rest of its life:
// ZooKeeper allocates each request's buffer and drops it, and a server of many clients
// that each sent one large write must not hold a jute.maxbuffer apiece.
func TestALargeFrameIsNotKeptByItsConnection(t *testing.T) {
	s := startServer(t, nil)
	const conns, size = 32, 1000000
	heap := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	var clients []*rawClient
	for i := 0; i < conns; i++ {
		c := dial(t, s.Addr().String())
		c.connect(0, nil)
		clients = append(clients, c)
	}
	before := heap()
	padded := jute.AppendFrame(nil, &jute.RequestHeader{Xid: 1, Type: jute.OpExists}, &jute.ExistsRequest{Path: "/"}, rawRecord(make([]byte, size)))
	for _, c := range clients {
		if _, err := c.nc.Write(padded); err != nil {
			t.Fatal(err)
		}
		var h jute.ReplyHeader
		c.readFrame(&h)
		if h.Err != 0 {
			t.Fatalf("exists: %d", h.Err)
		}
		c.ping() // the connection is still there, and has read past the large frame
	}
	after := heap()
	if grown := int64(after) - int64(before); grown > conns*size/4 {
		t.Fatalf("the heap grew by %d bytes after %d connections each sent one frame of %d bytes: they keep their frames", grown, conns, size)
	}
	t.Logf("the heap grew by %d bytes", int64(after)-int64(before))
	for _, c := range clients {
		c.ping()
	}
}
