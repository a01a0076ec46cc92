package server

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// BenchmarkWrite and BenchmarkRead drive requests through an in-process standalone server
// from raw connections that allocate nothing per request, so allocs/op is the server's own
// cost of a request. A write's ns/op is mostly its fdatasync at one connection; at
// sixteen, writes share log entries and fdatasyncs as they do under load. A read's ns/op
// at one connection is the round trip through the server's goroutines. Run them with
// `go test ./server -run '^$' -bench . -benchmem` (make bench does); docs/benchmarks.md
// keeps figures.
func BenchmarkWrite(b *testing.B) {
	for _, conns := range []int{1, 16} {
		b.Run("setData/conns="+strconv.Itoa(conns), func(b *testing.B) {
			benchRequests(b, conns, jute.OpSetData, &jute.SetDataRequest{Path: "/bench", Data: make([]byte, 100), Version: -1})
		})
		b.Run("create/conns="+strconv.Itoa(conns), func(b *testing.B) {
			benchRequests(b, conns, jute.OpCreate, &jute.CreateRequest{Path: "/bench/n-", Data: make([]byte, 100), Acl: openACL, Flags: 2}) // sequential
		})
	}
}

func BenchmarkRead(b *testing.B) {
	for _, conns := range []int{1, 16} {
		b.Run("getData/conns="+strconv.Itoa(conns), func(b *testing.B) {
			benchRequests(b, conns, jute.OpGetData, &jute.GetDataRequest{Path: "/bench"})
		})
	}
}

// benchRequests spreads b.N requests of op over conns connections, one in flight on each,
// after creating /bench with 100 bytes; every request is encoded once, its xid rewritten
// in place.
func benchRequests(b *testing.B, conns int, op int32, req jute.Record) {
	s := startServerLogging(b, nil, slog.New(slog.DiscardHandler))
	setup := dialBench(b, s.Addr().String())
	setup.roundTrip(b, jute.AppendFrame(nil, &jute.RequestHeader{Xid: 1, Type: jute.OpCreate},
		&jute.CreateRequest{Path: "/bench", Data: make([]byte, 100), Acl: openACL}))
	clients := make([]*benchConn, conns)
	for i := range clients {
		clients[i] = dialBench(b, s.Addr().String())
	}
	frame := jute.AppendFrame(nil, &jute.RequestHeader{Xid: 1, Type: op}, req)
	b.ReportAllocs()
	b.ResetTimer()
	done := make(chan error, conns)
	for i, c := range clients {
		n := b.N / conns
		if i < b.N%conns {
			n++
		}
		go func() {
			f := append([]byte(nil), frame...)
			for range n {
				if err := c.roundTrip(nil, f); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for range clients {
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
}

// benchConn is a connected session that reuses one read buffer.
type benchConn struct {
	nc  net.Conn
	br  *bufio.Reader
	buf []byte
	xid int32
}

func dialBench(b *testing.B, addr string) *benchConn {
	b.Helper()
	rc := dial(b, addr)
	rc.connect(0, nil)
	rc.nc.SetDeadline(time.Time{}) // as long as the benchmark takes
	return &benchConn{nc: rc.nc, br: rc.br, buf: make([]byte, 0, 512), xid: rc.xid}
}

// roundTrip sends frame with the connection's next xid and reads the reply, which must
// be that xid's and succeed. With b set, a failure fails the benchmark at once.
func (c *benchConn) roundTrip(b *testing.B, frame []byte) error {
	c.xid++
	binary.BigEndian.PutUint32(frame[4:], uint32(c.xid))
	_, err := c.nc.Write(frame)
	if err == nil {
		c.buf, err = jute.ReadFrame(c.br, c.buf[:0], jute.DefaultMaxBuffer)
	}
	if err == nil && (len(c.buf) < 16 || int32(binary.BigEndian.Uint32(c.buf)) != c.xid || binary.BigEndian.Uint32(c.buf[12:]) != 0) {
		err = fmt.Errorf("xid %d: unexpected reply % x", c.xid, c.buf[:min(len(c.buf), 16)])
	}
	if err != nil && b != nil {
		b.Fatal(err)
	}
	return err
}
