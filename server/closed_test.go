package server

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zkraft/zkraft/jute"
)

func TestReadReasons(t *testing.T) {
	for _, c := range []struct {
		err  error
		want closeReason
	}{
		{io.EOF, closedByClient},
		{fmt.Errorf("read: %w", io.ErrUnexpectedEOF), closedByClient},
		{&jute.ErrFrameTooLarge{Len: 1 << 30, Max: 1 << 20}, closedBadFrame},
		{fmt.Errorf("read tcp: %w", os.ErrDeadlineExceeded), closedIdle},
		{&os.SyscallError{Syscall: "read", Err: syscall.ECONNRESET}, closedByClient},
		{fmt.Errorf("something else"), closedReadError},
	} {
		if got := readReason(c.err); got != c.want {
			t.Errorf("readReason(%v) = %s, want %s", c.err, got, c.want)
		}
	}
	if writeReason(fmt.Errorf("write: %w", os.ErrDeadlineExceeded)) != closedWriteTimeout || writeReason(io.ErrClosedPipe) != closedWriteFailed {
		t.Error("writeReason does not tell a timeout from a failure")
	}
	for r := closeReason(0); r < numCloseReasons; r++ {
		if r.String() == "" {
			t.Errorf("close reason %d has no name", r)
		}
	}
}

// awaitClosed waits until n connections were closed for reason r.
func awaitClosed(t *testing.T, s *Server, r closeReason, n int64) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); s.stats.closed[r].Load() < n; {
		if time.Now().After(deadline) {
			t.Fatalf("%d connections closed as %s, want %d", s.stats.closed[r].Load(), r, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A client that stops reading while less than the queue limit waits for it is closed
// once one write to it has been blocked for writeDeadline; the close is counted as a
// write timeout and shows in /metrics, and other clients are served meanwhile.
func TestWriteDeadlineClosesAStuckClient(t *testing.T) {
	setWriteDeadline(t, 300*time.Millisecond) // after the server's own cleanup stops it
	s := startServer(t, nil)
	stopReading(t, s, 24) // 24 MB of replies, under maxQueuedBytes
	other := dial(t, s.Addr().String())
	other.connect(0, nil)
	if h := other.call(jute.OpExists, &jute.ExistsRequest{Path: "/big"}, &jute.ExistsResponse{}); h.Err != 0 {
		t.Fatalf("other client: %d", h.Err)
	}
	awaitClosed(t, s, closedWriteTimeout, 1)
	if n := s.stats.closed[closedSlowClient].Load(); n != 0 {
		t.Errorf("%d slow-client closes: the queue limit was not reached", n)
	}
	rec := httptest.NewRecorder()
	s.writeMetrics(rec, nil)
	if body := rec.Body.String(); !strings.Contains(body, `connections_closed_total{reason="write_timeout"} 1`+"\n") {
		t.Errorf("/metrics has no write_timeout close:\n%s", body)
	}
}

// A client that pipelines small reads and reads none of the replies is closed by the
// write deadline as well: the connection's reader, which runs such reads and writes
// their replies itself, blocks in that write, not forever.
func TestWriteDeadlineClosesAStuckPipeliningReader(t *testing.T) {
	setWriteDeadline(t, 300*time.Millisecond)
	s := startServer(t, nil)
	c := dial(t, s.Addr().String())
	c.connect(0, nil)
	if h := c.call(jute.OpCreate, &jute.CreateRequest{Path: "/kb", Data: make([]byte, 100), Acl: openACL}, nil); h.Err != 0 {
		t.Fatalf("create: %d", h.Err)
	}
	var frames []byte
	// About 20 MB of replies, under maxQueuedBytes, in runs of a few dozen KB (a read
	// buffer's worth of requests), which the reader writes itself.
	for i := 0; i < 120000; i++ {
		frames = jute.AppendFrame(frames, &jute.RequestHeader{Xid: int32(i + 2), Type: jute.OpGetData}, &jute.GetDataRequest{Path: "/kb"})
	}
	go c.nc.Write(frames) // blocks once the server stops reading; ends with the close
	awaitClosed(t, s, closedWriteTimeout, 1)
	other := dial(t, s.Addr().String())
	other.connect(0, nil)
	if h := other.call(jute.OpExists, &jute.ExistsRequest{Path: "/kb"}, &jute.ExistsResponse{}); h.Err != 0 {
		t.Fatalf("other client: %d", h.Err)
	}
}

// A request that ends its connection after its reply (addauth of an unknown scheme, an
// op no client may send) ends the processor, and nothing read after it runs: not a
// write the reader would propose itself were the processor idle. The client here is slow
// to read (its socket is full of earlier replies), which keeps the writer from closing
// before the next request is read; before the processor left its request counted, the
// create below was applied, and answered after the closing reply or not at all.
func TestNothingRunsAfterAClosingRequest(t *testing.T) {
	for _, tc := range []struct {
		name    string
		hdr     jute.RequestHeader
		req     jute.Record
		lastXid int32 // the closing reply's
	}{
		{"addauth of an unknown scheme", jute.RequestHeader{Xid: jute.XidAuth, Type: jute.OpAuth}, &jute.AuthPacket{Scheme: "nope", Auth: []byte("x")}, jute.XidAuth},
		{"an unknown op", jute.RequestHeader{Xid: 100, Type: 999}, nil, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startServerLogging(t, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
			c := dial(t, s.Addr().String())
			c.connect(0, nil)
			if h := c.call(jute.OpCreate, &jute.CreateRequest{Path: "/big", Data: make([]byte, 512<<10), Acl: openACL}, nil); h.Err != 0 {
				t.Fatalf("create /big: %d", h.Err)
			}
			var frames []byte
			for i := 0; i < 16; i++ { // 8 MiB of replies the client does not read yet
				frames = jute.AppendFrame(frames, &jute.RequestHeader{Xid: int32(10 + i), Type: jute.OpGetData}, &jute.GetDataRequest{Path: "/big"})
			}
			frames = jute.AppendFrame(frames, &tc.hdr, tc.req)
			if _, err := c.nc.Write(frames); err != nil {
				t.Fatal(err)
			}
			time.Sleep(200 * time.Millisecond)
			c.nc.Write(jute.AppendFrame(nil, &jute.RequestHeader{Xid: 200, Type: jute.OpCreate}, &jute.CreateRequest{Path: "/after", Acl: openACL}))
			time.Sleep(200 * time.Millisecond)
			var xids []int32
			for {
				b, err := jute.ReadFrame(c.br, nil, 4<<20)
				if err != nil {
					break
				}
				var h jute.ReplyHeader
				h.Decode(jute.NewDecoder(b))
				xids = append(xids, h.Xid)
			}
			if n := len(xids); n != 17 || xids[n-1] != tc.lastXid {
				t.Errorf("replies %v, want the 16 getData replies and then the closing reply (xid %d) only", xids, tc.lastXid)
			}
			o := dial(t, s.Addr().String())
			o.connect(0, nil)
			if h := o.call(jute.OpExists, &jute.ExistsRequest{Path: "/after"}, &jute.ExistsResponse{}); jute.Code(h.Err) != jute.ErrNoNode {
				t.Errorf("exists /after: %d, want NoNode: a create sent after the closing request ran", h.Err)
			}
		})
	}
}

// A client that pipelines watching reads behind a write and then goes away leaves no
// watch behind: the processor may still run some of the queued reads after the close
// removed the connection's watches, and those set none (ZooKeeper's WatchManager skips
// a dead watcher), so the watch count goes back to 0.
func TestClosedConnectionLeavesNoWatch(t *testing.T) {
	s := startServer(t, nil)
	for round := 0; round < 20; round++ {
		c := dial(t, s.Addr().String())
		c.connect(0, nil)
		var frames []byte
		c.xid++
		frames = jute.AppendFrame(frames, &jute.RequestHeader{Xid: c.xid, Type: jute.OpCreate},
			&jute.CreateRequest{Path: fmt.Sprintf("/r%d", round), Acl: openACL})
		for i := 0; i < 2000; i++ {
			c.xid++
			frames = jute.AppendFrame(frames, &jute.RequestHeader{Xid: c.xid, Type: jute.OpExists},
				&jute.ExistsRequest{Path: fmt.Sprintf("/missing/%d/%d", round, i), Watch: true})
		}
		c.nc.Write(frames)
		c.nc.Close()
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		n := s.node.FSM.Watches.Count()
		s.mu.Lock()
		conns := len(s.conns)
		s.mu.Unlock()
		if n == 0 && conns == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d watches still registered, %d connections, after every client closed", n, conns)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Each way a connection ends is counted under its own reason.
func TestCloseReasonsCounted(t *testing.T) {
	s := startServer(t, func(c *Config) { c.MaxBuffer = 4096 })
	bad := dial(t, s.Addr().String())
	bad.connect(0, nil)
	bad.nc.Write([]byte{0x00, 0x10, 0x00, 0x00})
	awaitClosed(t, s, closedBadFrame, 1)

	left := dial(t, s.Addr().String())
	left.connect(0, nil)
	left.nc.Close()
	awaitClosed(t, s, closedByClient, 1)

	bye := dial(t, s.Addr().String())
	bye.connect(0, nil)
	bye.call(jute.OpCloseSession, nil, nil)
	awaitClosed(t, s, closedAfterReply, 1)

	ruok := dial(t, s.Addr().String())
	ruok.nc.Write([]byte("ruok"))
	awaitClosed(t, s, closedFourLetter, 1)

	probe := dial(t, s.Addr().String()) // connects and leaves without a word
	probe.nc.Close()
	awaitClosed(t, s, closedByClient, 2)

	for r := closeReason(0); r < numCloseReasons; r++ {
		want := int64(0)
		switch r {
		case closedBadFrame, closedAfterReply, closedFourLetter:
			want = 1
		case closedByClient:
			want = 2
		}
		if got := s.stats.closed[r].Load(); got != want {
			t.Errorf("%s: %d closes, want %d", r, got, want)
		}
	}
}

// A connection whose session expires while it is open (its client stopped pinging but
// kept the socket) is counted as session_expired, not as closed after a reply of its
// own.
func TestExpiredSessionCloseCounted(t *testing.T) {
	s := startServer(t, func(c *Config) { c.TickTime = 50 * time.Millisecond })
	a := dial(t, s.Addr().String())
	if _, err := a.nc.Write(jute.AppendFrame(nil, &jute.Connect{ConnectRequest: jute.ConnectRequest{TimeOut: 200, Passwd: make([]byte, 16)}})); err != nil {
		t.Fatal(err)
	}
	var ca jute.Connected
	a.readFrame(&ca)
	// Silent from now on, the socket left open: the session expires and the server
	// closes the connection.
	a.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := a.br.ReadByte(); err == nil || isTimeout(err) {
		t.Fatalf("connection of an expired session not closed: %v", err)
	}
	awaitClosed(t, s, closedSessionExpired, 1)
	if n := s.stats.closed[closedAfterReply].Load(); n != 0 {
		t.Errorf("%d closes counted as closed_after_reply", n)
	}
	rec := httptest.NewRecorder()
	s.writeMetrics(rec, nil)
	if body := rec.Body.String(); !strings.Contains(body, `connections_closed_total{reason="session_expired"} 1`+"\n") {
		t.Errorf("/metrics has no session_expired close:\n%s", body)
	}
}

// A client that reads its replies slowly, but without ever stopping for writeDeadline,
// is served to the end over TLS as over plaintext: each part of a write that makes
// progress gets a fresh deadline. A TLS connection cannot take another write once one
// has timed out (crypto/tls makes the error permanent), so its writes are cut into
// parts that each get the deadline, not one write that must finish within it.
func TestWriteDeadlineServesASlowReaderOverTLS(t *testing.T) {
	setWriteDeadline(t, 2*time.Second)
	p := newPEMTLS(t)
	s := startTLSServer(t, p, false, nil)
	for _, kind := range []string{"plaintext", "tls"} {
		t.Run(kind, func(t *testing.T) {
			var c *rawClient
			if kind == "tls" {
				c = dial(t, s.SecureAddr().String())
				tc := tls.Client(c.nc, p.client(t, "slow"))
				c.nc, c.br = tc, bufio.NewReader(tc)
			} else {
				c = dial(t, s.Addr().String())
			}
			c.connect(0, nil)
			path := "/slow-" + kind
			if h := c.call(jute.OpCreate, &jute.CreateRequest{Path: path, Data: make([]byte, 1000000), Acl: openACL}, nil); h.Err != 0 {
				t.Fatalf("create: %d", h.Err)
			}
			// 24 MB of replies asked for at once, read 128 KB every 20 ms (about 6 MB/s,
			// so nearly 4 s in all, twice writeDeadline): the server's writes wait for
			// the reader, never for writeDeadline.
			const n = 24
			var frames []byte
			for i := 0; i < n; i++ {
				c.xid++
				frames = jute.AppendFrame(frames, &jute.RequestHeader{Xid: c.xid, Type: jute.OpGetData}, &jute.GetDataRequest{Path: path})
			}
			if _, err := c.nc.Write(frames); err != nil {
				t.Fatal(err)
			}
			c.nc.SetReadDeadline(time.Now().Add(30 * time.Second))
			chunk := make([]byte, 128<<10)
			want := n * (4 + 16 + 4 + 1000000 + 68)
			for got := 0; got < want; {
				m, err := io.ReadFull(c.br, chunk[:min(len(chunk), want-got)])
				got += m
				if err != nil {
					t.Fatalf("after %d of %d bytes: %v (closed as %v)", got, want, err, s.stats.closed[closedWriteTimeout].Load())
				}
				time.Sleep(20 * time.Millisecond)
			}
			if h := c.ping(); h.Err != 0 {
				t.Fatalf("ping: %d", h.Err)
			}
		})
	}
	if n := s.stats.closed[closedWriteTimeout].Load(); n != 0 {
		t.Errorf("%d connections closed as write_timeout", n)
	}
}

// setWriteDeadline sets writeDeadline for the test, and back after its servers stopped.
func setWriteDeadline(t *testing.T, d time.Duration) {
	old := writeDeadline.Swap(int64(d))
	t.Cleanup(func() { writeDeadline.Store(old) })
}
