package server

import (
	"bytes"
	"strings"
	"testing"

	"github.com/zkraft/zkraft/jute"
)

func setDataFrame(xid int32, path string, n int) []byte {
	return jute.AppendFrame(nil, &jute.RequestHeader{Xid: xid, Type: jute.OpSetData},
		&jute.SetDataRequest{Path: path, Data: bytes.Repeat([]byte("x"), n), Version: -1})
}

// A large request holds its bytes while it is in flight: a second one sent with it,
// which would take the bytes held past largeRequestMaxBytes, closes the connection.
// Every byte held is given back, whether its request was answered, or queued behind a
// close, or its connection went away before the answer.
func TestLargeRequestBytesAreHeldInFlightAndGivenBack(t *testing.T) {
	s := startServer(t, func(c *Config) {
		c.LargeRequests = LargeRequestConfig{Threshold: 1000, MaxBytes: 3000}
	})
	addr := s.Addr().String()
	held := func() bool { return s.large.held.Load() == 0 }
	a := dial(t, addr)
	a.connect(0, nil)
	if h := a.call(jute.OpCreate, &jute.CreateRequest{Path: "/big", Acl: openACL}, nil); h.Err != 0 {
		t.Fatalf("create: %d", h.Err)
	}
	// One at a time, each answered before the next: nothing is refused (the bytes are
	// given back before the reply goes).
	for i := 0; i < 5; i++ {
		if h := a.call(jute.OpSetData, &jute.SetDataRequest{Path: "/big", Data: bytes.Repeat([]byte("x"), 2000), Version: -1}, nil); h.Err != 0 {
			t.Fatalf("setData %d: %d", i, h.Err)
		}
	}
	// A large read runs on the reader (runsItself) and gives its bytes back too.
	if h, err := a.exchange(jute.OpExists, &jute.ExistsRequest{Path: "/" + strings.Repeat("n", 1500)}, nil); err != nil || jute.Code(h.Err) != jute.ErrNoNode {
		t.Fatalf("exists of a long path: %d %v", h.Err, err)
	}
	eventually(t, "bytes held after every large request was answered", held)
	if n := s.large.rejected.Load(); n != 0 {
		t.Fatalf("%d rejected", n)
	}

	// Two sent together: the second arrives while the first waits for its fsync. A
	// reader descheduled for that long could see the first answered, so a few tries.
	rejected := false
	for try := 0; try < 5 && !rejected; try++ {
		b := dial(t, addr)
		b.connect(0, nil)
		b.nc.Write(append(setDataFrame(1, "/big", 2000), setDataFrame(2, "/big", 2001)...))
		answered := 0
		for ; answered < 2; answered++ {
			if _, err := jute.ReadFrame(b.br, nil, jute.DefaultMaxBuffer); err != nil {
				break
			}
		}
		rejected = answered < 2
		b.nc.Close()
		eventually(t, "bytes held after the pair", held)
	}
	if !rejected || s.large.rejected.Load() == 0 {
		t.Fatal("a large request sent while another was in flight, past largeRequestMaxBytes, was taken")
	}

	// Sent and left: the connection closes with its requests queued or in flight.
	for i := 0; i < 10; i++ {
		c := dial(t, addr)
		c.connect(0, nil)
		var burst []byte
		for x := int32(1); x <= 3; x++ {
			burst = append(burst, setDataFrame(x, "/big", 1200)...)
		}
		c.nc.Write(burst)
		c.nc.Close()
	}
	// Once the server has closed them (only a's is left), nothing they read is held.
	eventually(t, "the closed connections still listed", func() bool { return len(s.connList()) == 1 })
	eventually(t, "bytes held after connections closed with large requests in flight", held)
	if h := a.call(jute.OpSetData, &jute.SetDataRequest{Path: "/big", Data: bytes.Repeat([]byte("y"), 2900), Version: -1}, nil); h.Err != 0 {
		t.Fatalf("setData after the closes: %d", h.Err)
	}
}

// With the bound off (the default) nothing is counted, whatever the size.
func TestLargeRequestsUncountedByDefault(t *testing.T) {
	s := startServer(t, nil)
	a := dial(t, s.Addr().String())
	a.connect(0, nil)
	if h := a.call(jute.OpCreate, &jute.CreateRequest{Path: "/big", Data: bytes.Repeat([]byte("x"), 500<<10), Acl: openACL}, nil); h.Err != 0 {
		t.Fatalf("create: %d", h.Err)
	}
	if n := s.large.held.Load() + s.large.rejected.Load(); n != 0 {
		t.Fatalf("counted %d", n)
	}
}
