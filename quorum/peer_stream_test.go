package quorum

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// slowConn is one end of a pipe whose writes take a while and are counted, so that
// concurrent frames pile up behind a flush.
type slowConn struct {
	net.Conn
	writes atomic.Int64
}

func (c *slowConn) Write(b []byte) (int, error) {
	c.writes.Add(1)
	time.Sleep(time.Millisecond)
	return c.Conn.Write(b)
}

// Frames written at once from many goroutines arrive whole and each goroutine's in its
// order, in fewer socket writes than frames.
func TestPeerStreamGroupsFrames(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	conn := &slowConn{Conn: a}
	st := newPeerStream(conn, "leader")
	const writers, each = 16, 50
	got := make(chan map[int][]int, 1)
	go func() {
		seen := map[int][]int{}
		br := bufio.NewReader(b)
		for i := 0; i < writers*each; i++ {
			f, err := readFrame(br)
			if err != nil {
				got <- nil
				return
			}
			var w, k int
			fmt.Sscanf(string(f[1:]), "w%d-k%d", &w, &k)
			seen[w] = append(seen[w], k)
		}
		got <- seen
	}()
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < each; k++ {
				if err := st.write(frameEntry, []byte(fmt.Sprintf("w%d-k%d", w, k))); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	seen := <-got
	if seen == nil {
		t.Fatal("a frame did not arrive whole")
	}
	for w := 0; w < writers; w++ {
		if len(seen[w]) != each {
			t.Fatalf("writer %d: %d frames arrived, want %d", w, len(seen[w]), each)
		}
		for k, v := range seen[w] {
			if v != k {
				t.Fatalf("writer %d: frame %d arrived as %d: out of order", w, k, v)
			}
		}
	}
	if n := conn.writes.Load(); n >= writers*each/2 {
		t.Errorf("%d socket writes for %d frames: not grouped", n, writers*each)
	}
}

// cutConn accepts limit bytes, then fails.
type cutConn struct {
	net.Conn
	limit int
	out   bytes.Buffer
}

var errCut = errors.New("cut")

func (c *cutConn) Write(b []byte) (int, error) {
	n := min(len(b), c.limit-c.out.Len())
	c.out.Write(b[:n])
	if n < len(b) {
		return n, errCut
	}
	return n, nil
}

func (c *cutConn) SetWriteDeadline(time.Time) error { return nil }

// When a group's write fails part way, a frame that reached the socket whole is
// reported sent and one that did not is reported failed; nothing is written after.
func TestPeerStreamFailedGroup(t *testing.T) {
	// Three frames of 9 bytes gather in one group while a flush is held; 9 bytes are
	// already on the wire, so of the group only the first frame fits the limit.
	conn := &cutConn{limit: 9 + 9}
	st := newPeerStream(conn, "leader")
	st.wmu.Lock()
	st.flushing = true // hold flushes while the group gathers
	st.wmu.Unlock()
	errs := make([]error, 3)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = st.write(frameEntry, []byte{'a' + byte(i), 0, 0, 0})
		}()
		for deadline := time.Now().Add(5 * time.Second); ; { // queued in order
			st.wmu.Lock()
			n := len(st.pending)
			st.wmu.Unlock()
			if n == 9*(i+1) || time.Now().After(deadline) {
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
	// Write a first group of 9 bytes ourselves, so 9 of the limit remain.
	conn.out.Write(make([]byte, 9))
	st.wmu.Lock()
	st.flushing = false
	st.flushed.Broadcast()
	st.wmu.Unlock()
	wg.Wait()
	if errs[0] != nil || !errors.Is(errs[1], errCut) || !errors.Is(errs[2], errCut) {
		t.Fatalf("outcomes %v: want the first frame sent, the others failed", errs)
	}
	if err := st.write(frameEntry, []byte("late")); !errors.Is(err, errCut) {
		t.Fatalf("a write after the failure: %v", err)
	}
	if got := conn.out.Len(); got != 18 {
		t.Fatalf("%d bytes reached the socket, want 18", got)
	}
	if f := conn.out.Bytes()[9:]; binary.BigEndian.Uint32(f) != 5 || f[5] != 'a' {
		t.Fatalf("first frame on the wire: %x", f)
	}
}

// gateConn holds its first write until released, then accepts 3 bytes of it and fails;
// every later write would be recorded.
type gateConn struct {
	net.Conn
	gate  chan struct{}
	calls atomic.Int64
	mu    sync.Mutex
	out   bytes.Buffer
}

func (c *gateConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.calls.Add(1) == 1 {
		<-c.gate
		c.out.Write(b[:3])
		return 3, errCut
	}
	c.out.Write(b)
	return len(b), nil
}

func (c *gateConn) SetWriteDeadline(time.Time) error { return nil }

// A frame queued while a write breaks off part way is not written after the partial
// frame (the leader would read its bytes as the broken frame's end): it fails unsent.
func TestPeerStreamNothingAfterAPartialFrame(t *testing.T) {
	conn := &gateConn{gate: make(chan struct{})}
	st := newPeerStream(conn, "leader")
	errA := make(chan error, 1)
	go func() { errA <- st.write(frameEntry, []byte("AAAA")) }()
	for deadline := time.Now().Add(5 * time.Second); conn.calls.Load() == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the first write never started")
		}
		time.Sleep(time.Millisecond)
	}
	errB := make(chan error, 1)
	go func() { errB <- st.write(frameEntry, []byte("BBBB")) }()
	for deadline := time.Now().Add(5 * time.Second); ; { // B queued behind the flush
		st.wmu.Lock()
		n := len(st.pending)
		st.wmu.Unlock()
		if n == 9 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the second frame was never queued")
		}
		time.Sleep(time.Millisecond)
	}
	close(conn.gate)
	if err := <-errA; !errors.Is(err, errCut) {
		t.Fatalf("the cut frame: %v", err)
	}
	if err := <-errB; !errors.Is(err, errCut) {
		t.Fatalf("the frame queued behind it: %v, want it failed unsent", err)
	}
	conn.mu.Lock()
	defer conn.mu.Unlock()
	if conn.calls.Load() != 1 || conn.out.Len() != 3 {
		t.Fatalf("%d writes, %d bytes on the wire: something followed the partial frame", conn.calls.Load(), conn.out.Len())
	}
}

// stallConn accepts a few bytes per write and times out, as a slow but reading peer
// does; after stalls writes of no progress it only times out.
type stallConn struct {
	net.Conn
	per, stalls int
	out         bytes.Buffer
}

func (c *stallConn) Write(b []byte) (int, error) {
	if c.stalls == 0 {
		return 0, os.ErrDeadlineExceeded
	}
	c.stalls--
	n := min(len(b), c.per)
	c.out.Write(b[:n])
	if n < len(b) {
		return n, os.ErrDeadlineExceeded
	}
	return n, nil
}

func (c *stallConn) SetWriteDeadline(time.Time) error { return nil }

// A peer that keeps reading gets a whole group however long it takes; one that stops
// reading for a deadline does not.
func TestWriteAllRearmsTheDeadlineOnProgress(t *testing.T) {
	c := &stallConn{per: 4, stalls: 100}
	if n, err := writeAll(c, []byte("0123456789abcdef"), time.Second); err != nil || n != 16 || c.out.String() != "0123456789abcdef" {
		t.Fatalf("a slow reader: %d bytes, %v", n, err)
	}
	c = &stallConn{per: 4, stalls: 2}
	if n, err := writeAll(c, []byte("0123456789abcdef"), time.Second); !errors.Is(err, os.ErrDeadlineExceeded) || n != 8 {
		t.Fatalf("a reader that stopped: %d bytes, %v", n, err)
	}
}
