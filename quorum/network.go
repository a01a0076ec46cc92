package quorum

import (
	"errors"
	"log/slog"
	"net"
	"time"

	"github.com/hashicorp/raft"
)

// Network is how cluster members reach each other: Raft's streams and the forwarding
// streams both go through it. Production uses TCP; tests pass a network that can cut a
// member off to make partitions. Config.TLS wraps either in mutual TLS (tls_network.go).
type Network interface {
	Listen(addr string) (net.Listener, error)
	Dial(addr string, timeout time.Duration) (net.Conn, error)
}

// TCP is the real network.
type TCP struct{}

// Listen listens on a TCP address.
func (TCP) Listen(addr string) (net.Listener, error) { return net.Listen("tcp", addr) }

// Dial connects to a TCP address.
func (TCP) Dial(addr string, timeout time.Duration) (net.Conn, error) {
	return net.DialTimeout("tcp", addr, timeout)
}

// streamLayer adapts a Network listener to Raft's transport.
type streamLayer struct {
	net.Listener
	network   Network
	advertise net.Addr
}

func (s *streamLayer) Dial(addr raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	return s.network.Dial(string(addr), timeout)
}

func (s *streamLayer) Addr() net.Addr { return s.advertise }

// acceptStreams hands each stream l accepts to serve until l is closed, done is closed
// or serve returns false. A failed Accept that is not the close (out of descriptors,
// say) is logged and tried again after a pause that doubles up to a second, as Raft's
// own loop does: a member that stopped accepting would never again hear the streams of
// the members that lost theirs.
func acceptStreams(l net.Listener, done <-chan struct{}, log *slog.Logger, serve func(net.Conn) bool) {
	backoff := 5 * time.Millisecond
	for {
		c, err := l.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			log.Warn("quorum: accepting a member stream", "addr", l.Addr().String(), "err", err)
			select {
			case <-done:
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, time.Second)
			continue
		}
		backoff = 5 * time.Millisecond
		if !serve(c) {
			return
		}
	}
}
