package server

import (
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// watchLongPaths sets n exists watches on long missing paths, so wchp answers about
// n KB.
func watchLongPaths(t *testing.T, addr string, n int) {
	c := dial(t, addr)
	c.connect(0, nil)
	t.Cleanup(func() { c.nc.Close() })
	for i := 0; i < n; i += 500 {
		for j := i; j < min(n, i+500); j++ {
			c.send(jute.OpExists, &jute.ExistsRequest{Path: fmt.Sprintf("/%05d%s", j, strings.Repeat("x", 1000)), Watch: true})
		}
		for j := i; j < min(n, i+500); j++ {
			c.readFrame()
		}
	}
}

// askWithSmallBuffer sends a four-letter word from a client with a small receive
// buffer, so the answer soon fills the sockets' buffers, and reads nothing yet.
func askWithSmallBuffer(t *testing.T, addr, word string) net.Conn {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.(*net.TCPConn).SetReadBuffer(16 << 10)
	nc.Write([]byte(word))
	return nc
}

// A four-letter word's answer larger than the sockets' buffers reaches a client that
// reads it slowly whole: it is written in parts, each with the write deadline afresh,
// as ZooKeeper's NIOServerCnxn.sendBufferSync means to with blocking writes. zkraft gave
// the whole answer one 5 s deadline and cut off what it had not written by then.
// (ZooKeeper 3.8.0 itself is no oracle here: once its socket buffer is full, with a
// client that reads slowly or has a small receive buffer, its answer stops after 2 to 4
// MB and the connection stays open, as docs/compatibility.md says.)
func TestLargeFourLetterAnswerReachesASlowReader(t *testing.T) {
	s := startServer(t, nil)
	const watches = 6000 // a wchp of about 6 MB, more than the sockets' buffers hold
	watchLongPaths(t, s.Addr().String(), watches)
	nc := askWithSmallBuffer(t, s.Addr().String(), "wchp")
	time.Sleep(6 * time.Second)
	nc.SetReadDeadline(time.Now().Add(30 * time.Second))
	b, _ := io.ReadAll(nc)
	answer := string(b)
	if got := strings.Count(answer, "\n/") + 1; got != watches || !strings.HasSuffix(answer, "\n\n") {
		t.Fatalf("wchp read after 6 s: %d bytes, %d of %d paths, ends %q", len(answer), got, watches, answer[max(0, len(answer)-20):])
	}
}

// A client that reads nothing of a large answer is closed after writeDeadline, as a
// client that reads no replies is.
func TestFourLetterAnswerToAClientThatReadsNothing(t *testing.T) {
	setWriteDeadline(t, 300*time.Millisecond)
	s := startServer(t, nil)
	watchLongPaths(t, s.Addr().String(), 6000)
	askWithSmallBuffer(t, s.Addr().String(), "wchp")
	for deadline := time.Now().Add(5 * time.Second); s.stats.closed[closedFourLetter].Load() == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the connection of a client that reads nothing is still open after 5 s")
		}
	}
}
