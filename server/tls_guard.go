package server

import (
	"net"
	"sync/atomic"
)

// ZooKeeper's guards and counts of TLS client connections. A ZooKeeper that serves TLS
// clients runs its Netty connection factory, which can bound the TLS handshakes in
// progress (zookeeper.netty.server.outstandingHandshake.limit), drop a TLS connection
// before its costly handshake while no server runs behind the port
// (zookeeper.netty.server.earlyDropSecureConnectionHandshakes), and counts the plain
// connections it takes beside the TLS ones (non_mtls_*_conn_count). zkraft does the
// same on its secure and unified client ports, and counts plain connections when TLS or
// zookeeper.serverCnxnFactory says ZooKeeper would run Netty; otherwise it is
// ZooKeeper's default NIO factory, which counts none.

// ZooKeeper 3.8 (and 3.9) applies the handshake limit on a port-unification client port
// only: its Netty factory decides whether to throttle when it is built, before it is told
// it is the secure port's, so a secure client port is never limited. zkraft follows it,
// so a configuration behaves as it did on ZooKeeper.

// tlsGuard holds the counts; its methods are the Server's.
type tlsGuard struct {
	// handshakes are the TLS handshakes in progress that the limit counts: from the
	// accept of a unified-port connection until its handshake ends, or until its first
	// byte shows a plain connection.
	handshakes atomic.Int64
	// nonMTLSLocal and nonMTLSRemote count the connections accepted without TLS by a
	// server that runs ZooKeeper's Netty factory, from a loopback address and from any
	// other.
	nonMTLSLocal, nonMTLSRemote atomic.Int64
}

// nettyFactory reports whether a ZooKeeper with this configuration runs its Netty
// connection factory: zookeeper.serverCnxnFactory names it, or clients reach the server
// over TLS (which ZooKeeper serves with Netty only).
func (s *Server) nettyFactory() bool {
	return s.cfg.NettyFactory || s.tls != nil && (s.cfg.SecureClientPort != 0 || s.cfg.PortUnification)
}

// enterHandshake takes a place for a TLS handshake; false when the limit is reached
// (counted in tls_handshake_exceeded: the connection is to be closed at once).
// leaveHandshake gives it back.
func (s *Server) enterHandshake() bool {
	limit := int64(s.cfg.TLSHandshakeLimit)
	if limit <= 0 {
		return true
	}
	if s.guard.handshakes.Add(1) > limit {
		s.guard.handshakes.Add(-1)
		s.metrics.tlsHandshakeExceeded.Add(1)
		return false
	}
	return true
}

func (s *Server) leaveHandshake() {
	if s.cfg.TLSHandshakeLimit > 0 {
		s.guard.handshakes.Add(-1)
	}
}

// countPlain counts a connection accepted without TLS on the plain or the unified
// client port of a server that runs ZooKeeper's Netty factory, while it serves (Netty's
// factory counts one only while a server runs behind it). On a unified port ZooKeeper
// counts every connection, TLS or not: it counts before the first byte says which.
func (s *Server) countPlain(nc net.Conn, kind listenerKind) {
	if kind == secureListener || !s.nettyFactory() || !s.serving() {
		return
	}
	if a, ok := nc.RemoteAddr().(*net.TCPAddr); ok && !a.IP.IsLoopback() {
		s.guard.nonMTLSRemote.Add(1)
	} else {
		s.guard.nonMTLSLocal.Add(1)
	}
}
