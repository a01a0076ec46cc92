package server

import (
	"bytes"
	"crypto/tls"
	"crypto/x509/pkix"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/server/tlsconf/tlstest"
)

// tcpPair is a connected pair of loopback TCP sockets: the server's end and the client's.
func tcpPair(t *testing.T) (net.Conn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cli, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	srv, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close(); srv.Close() })
	return srv, cli
}

// eventually fails the test unless cond holds within 5 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal(what)
		}
	}
}

type readResult struct {
	frame []byte
	err   error
}

// readAsync reads r's next frame in a goroutine of its own.
func readAsync(r *connReader) chan readResult {
	out := make(chan readResult, 1)
	go func() {
		f, err := r.next(nil, 1<<20)
		out <- readResult{append([]byte(nil), f...), err}
	}()
	return out
}

// A reader waits without its buffer once the connection was idle (after the handshake,
// or after a wait longer than idleAfter), and keeps it while the connection is busy.
func TestAReaderLendsItsBufferOnlyWhileBusy(t *testing.T) {
	srv, cli := tcpPair(t)
	var lent atomic.Int64
	r := newConnReader(srv, &lent)
	if r.raw == nil {
		t.Fatal("a TCP socket gives no raw connection")
	}
	if lent.Load() != 1 {
		t.Fatalf("lent %d after the reader was made, want 1 (the handshake reads through it)", lent.Load())
	}
	if r.br.Size() != handshakeBufferSize {
		t.Fatalf("the handshake reads through %d bytes, want the small buffer's %d", r.br.Size(), handshakeBufferSize)
	}
	var step atomic.Int64 // how far the reader's clock moves per reading: the wait's length
	clock := time.Unix(0, 0)
	r.now = func() time.Time { clock = clock.Add(time.Duration(step.Load())); return clock }
	read := func() chan readResult { return readAsync(r) }
	send := func(frames ...string) {
		var b []byte
		for _, f := range frames {
			b = jute.AppendFrame(b, rawRecord(f))
		}
		if _, err := cli.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	expect := func(got chan readResult, want string) {
		t.Helper()
		res := <-got
		if res.err != nil || string(res.frame) != want {
			t.Fatalf("read %q, %v; want %q", res.frame, res.err, want)
		}
	}

	// After the handshake: the wait gives the buffer back.
	r.setIdle()
	step.Store(int64(time.Second))
	got := read()
	eventually(t, "an idle reader still holds its buffer while it waits", func() bool { return lent.Load() == 0 })
	send("one", "two", "three") // a burst: the first frame through the peek, the others buffered
	expect(got, "one")
	if lent.Load() != 1 {
		t.Fatalf("lent %d while frames are buffered, want 1", lent.Load())
	}
	if r.br.Size() != readBufferSize {
		t.Fatalf("after the handshake's buffer was given back the reader reads through %d bytes, want %d", r.br.Size(), readBufferSize)
	}
	expect(read(), "two")
	expect(read(), "three")

	// The wait before "one" was long: the next waits without the buffer again. This one
	// is short, so the one after it keeps the buffer.
	step.Store(0)
	got = read()
	eventually(t, "a reader idle before still holds its buffer while it waits", func() bool { return lent.Load() == 0 })
	send("four")
	expect(got, "four")
	got = read()
	for range 20 {
		if lent.Load() != 1 {
			t.Fatalf("a busy reader gave its buffer back (lent %d)", lent.Load())
		}
		time.Sleep(time.Millisecond)
	}
	send("five")
	expect(got, "five")

	// A long wait with the buffer makes the next one idle.
	step.Store(int64(time.Second))
	got = read()
	send("six")
	expect(got, "six")
	got = read()
	eventually(t, "a reader that waited long keeps its buffer", func() bool { return lent.Load() == 0 })

	// A deadline ends an idle wait as it ends a read (a read-only session's), and the
	// end of the stream reaches the reader.
	srv.SetReadDeadline(time.Now())
	if res := <-got; !errors.Is(res.err, os.ErrDeadlineExceeded) {
		t.Fatalf("idle wait past the deadline: %q, %v", res.frame, res.err)
	}
	srv.SetReadDeadline(time.Time{})
	got = read()
	eventually(t, "the reader holds its buffer while it waits", func() bool { return lent.Load() == 0 })
	cli.Close()
	if res := <-got; !errors.Is(res.err, io.EOF) {
		t.Fatalf("idle wait at the end of the stream: %q, %v", res.frame, res.err)
	}
	r.release()
	if lent.Load() != 0 {
		t.Fatalf("lent %d after release", lent.Load())
	}
}

// A frame larger than the buffer, arriving at an idle reader, is read whole.
func TestAnIdleReaderReadsALargeFrame(t *testing.T) {
	srv, cli := tcpPair(t)
	var lent atomic.Int64
	r := newConnReader(srv, &lent)
	r.setIdle()
	big := bytes.Repeat([]byte("z"), 3*readBufferSize+5)
	go cli.Write(jute.AppendFrame(nil, rawRecord(big)))
	f, err := r.next(nil, 1<<20)
	if err != nil || !bytes.Equal(f, big) {
		t.Fatalf("read %d bytes, %v; want %d", len(f), err, len(big))
	}
}

// Frames a client sends right behind its handshake (Java's client pipelines setWatches
// and its auth packets) are read whole through the handshake's small buffer, the large
// ones past it, before the reader trades that buffer for a busy one.
func TestFramesBehindTheHandshakeReadThroughTheSmallBuffer(t *testing.T) {
	srv, cli := tcpPair(t)
	var lent atomic.Int64
	r := newConnReader(srv, &lent)
	frames := []string{"connect", strings.Repeat("w", 3*handshakeBufferSize+7), "auth", strings.Repeat("x", handshakeBufferSize-10)}
	var b []byte
	for _, f := range frames {
		b = jute.AppendFrame(b, rawRecord(f))
	}
	if _, err := cli.Write(b); err != nil {
		t.Fatal(err)
	}
	for i, want := range frames {
		f, err := r.next(nil, 1<<20)
		if err != nil || string(f) != want {
			t.Fatalf("frame %d: %d bytes, %v; want %d bytes", i, len(f), err, len(want))
		}
		if i == 0 {
			r.setIdle()
		}
	}
	r.release()
	if lent.Load() != 0 {
		t.Fatalf("lent %d after release", lent.Load())
	}
}

// A TLS connection cannot wait without its buffer (the socket's bytes are records, not
// the frames the reader waits for): it reads through one buffer of readBufferSize from
// the start and keeps it through idle waits.
func TestATLSReaderKeepsItsBuffer(t *testing.T) {
	srv, cli := tcpPair(t)
	leaf := tlstest.NewCA(t, "reader CA").Issue(t, tlstest.Options{Subject: pkix.Name{CommonName: "server"}})
	ts := tls.Server(srv, &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{leaf.Cert.Raw}, PrivateKey: leaf.Key}}})
	tc := tls.Client(cli, &tls.Config{InsecureSkipVerify: true})
	var lent atomic.Int64
	r := newConnReader(ts, &lent)
	if r.raw != nil {
		t.Fatal("a TLS connection was given a raw socket to wait on")
	}
	if lent.Load() != 1 || r.br.Size() != readBufferSize {
		t.Fatalf("lent %d, buffer %d bytes; want one buffer of %d", lent.Load(), r.br.Size(), readBufferSize)
	}
	sent := make(chan error, 1)
	send := func(f string) {
		go func() {
			_, err := tc.Write(jute.AppendFrame(nil, rawRecord(f)))
			sent <- err
		}()
	}
	read := func() chan readResult { return readAsync(r) }
	for i, want := range []string{"connect", "ping", "getData"} {
		got := read()
		if i == 0 {
			send(want) // the TLS handshake runs as the reader reads
		} else {
			// An idle wait: the buffer stays lent while the reader waits.
			time.Sleep(20 * time.Millisecond)
			if lent.Load() != 1 {
				t.Fatalf("lent %d while the reader waits for frame %d, want 1", lent.Load(), i)
			}
			send(want)
		}
		res := <-got
		if res.err != nil || string(res.frame) != want {
			t.Fatalf("frame %d: %q, %v; want %q", i, res.frame, res.err, want)
		}
		if err := <-sent; err != nil {
			t.Fatal(err)
		}
		if lent.Load() != 1 || r.br.Size() != readBufferSize {
			t.Fatalf("after frame %d: lent %d, buffer %d bytes", i, lent.Load(), r.br.Size())
		}
		r.setIdle()
	}
	r.release()
	if lent.Load() != 0 {
		t.Fatalf("lent %d after release", lent.Load())
	}
}
