package netsim

import (
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

func TestIsolateCutsAndHealRestores(t *testing.T) {
	n := New()
	a, b := n.Member("a"), n.Member("b")
	ln, err := b.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	// Listen recorded the requested address; record the real one too.
	n.mu.Lock()
	n.owner[ln.Addr().String()] = "b"
	n.mu.Unlock()
	accepted := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	c, err := a.Dial(ln.Addr().String(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	srv := <-accepted
	defer srv.Close()
	n.Isolate("b")
	srv.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := srv.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("open stream survived the cut: %v", err)
	}
	if _, err := c.Write([]byte("x")); err == nil {
		t.Fatal("write on a cut stream succeeded")
	}
	if _, err := a.Dial(ln.Addr().String(), time.Second); !errors.Is(err, ErrCut) {
		t.Fatalf("dial across the cut: %v", err)
	}
	n.Heal()
	c2, err := a.Dial(ln.Addr().String(), time.Second)
	if err != nil {
		t.Fatalf("dial after heal: %v", err)
	}
	c2.Close()
}
