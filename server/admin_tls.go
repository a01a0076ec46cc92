package server

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// AdminTLS is the AdminServer's HTTPS, as ZooKeeper's JettyAdminServer has it.
// ZooKeeper 3.8 takes the certificate and the trusted CAs from the ssl.quorum.* key and
// trust stores (QuorumX509Util), whether sslQuorum is on or not, and so does zkraft
// (Config.QuorumSSL's stores; their passwords inline or, zkraft's addition, by path).
type AdminTLS struct {
	// ForceHTTPS (admin.forceHttps) serves HTTPS only; it overrides PortUnification. A
	// connection that does not begin with a TLS handshake gets the alert Java's TLS
	// sends (a fatal internal_error) and is closed.
	ForceHTTPS bool
	// PortUnification (admin.portUnification) serves HTTPS and plain HTTP on the one
	// port, told apart by a connection's first byte.
	PortUnification bool
	// NeedClientAuth (admin.needClientAuth, ZooKeeper 3.9) refuses a TLS client that
	// shows no certificate the trust store trusts. ZooKeeper 3.8 has no such key and
	// asks for no certificate; 3.9 reads it only with HTTPS on, as zkraft does.
	NeedClientAuth bool
}

// On reports whether the AdminServer speaks TLS.
func (a AdminTLS) On() bool { return a.ForceHTTPS || a.PortUnification }

// scheme names what the AdminServer speaks, by the key that asks for it.
func (a AdminTLS) scheme() string {
	switch {
	case a.ForceHTTPS:
		return "HTTPS (admin.forceHttps)"
	case a.PortUnification:
		return "HTTP and HTTPS (admin.portUnification)"
	}
	return "HTTP"
}

// adminSTS is the Strict-Transport-Security header of every HTTPS answer: Jetty's
// SecureRequestCustomizer as ZooKeeper sets it up (a day, subdomains included).
const adminSTS = "max-age=86400; includeSubDomains"

// javaTLSInternalError is the record Java's TLS answers a stream that is not TLS with,
// before it closes the connection: an alert, TLS 1.2, two bytes, fatal, internal_error.
var javaTLSInternalError = []byte{0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x50}

// adminTLSConfig is the AdminServer's TLS from the ssl.quorum.* stores; an error names
// the key at fault.
func (c *Config) adminTLSConfig() (*tls.Config, error) {
	q := &c.QuorumSSL
	switch {
	case q.KeyStoreLocation == "":
		return nil, errors.New("ssl.quorum.keyStore.location is not set")
	case q.TrustStoreLocation == "":
		return nil, errors.New("ssl.quorum.trustStore.location is not set")
	}
	cert, pool, err := q.stores()
	if err != nil {
		return nil, err
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if c.AdminTLS.NeedClientAuth {
		cfg.ClientAuth, cfg.ClientCAs = tls.RequireAndVerifyClientCert, pool
	}
	return cfg, nil
}

// withSTS adds the Strict-Transport-Security header to every answer over TLS.
func withSTS(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS != nil {
			w.Header().Set("Strict-Transport-Security", adminSTS)
		}
		h.ServeHTTP(w, r)
	})
}

// sniffListener hands http.Server the connections of an HTTPS port: a *tls.Conn (its
// handshake left to http.Server, which then sets Request.TLS) for one that begins with a
// TLS handshake record, the plain connection for any other when plain is set. Each
// connection's first byte is read in a goroutine of its own, within its timeout, so a
// silent client holds up nobody.
type sniffListener struct {
	net.Listener
	cfg   *tls.Config
	plain bool
	// onPlain, if set, is told of each plain connection taken where plain is set, one
	// closed before its first byte among them (insecure_admin_count).
	onPlain func()
	// timeout bounds the wait for a connection's first byte, as ReadHeaderTimeout
	// bounds the rest of its request.
	timeout time.Duration
	ready   chan net.Conn
	done    chan struct{}
	once    sync.Once
	err     error // why Accept stopped; set before done is closed
}

func newSniffListener(ln net.Listener, cfg *tls.Config, plain bool, timeout time.Duration, onPlain func()) *sniffListener {
	l := &sniffListener{Listener: ln, cfg: cfg, plain: plain, onPlain: onPlain, timeout: timeout, ready: make(chan net.Conn), done: make(chan struct{})}
	go l.acceptLoop()
	return l
}

func (l *sniffListener) acceptLoop() {
	pause := 5 * time.Millisecond
	for {
		nc, err := l.Listener.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				l.stop(err)
				return
			}
			// Out of descriptors, say: try again, as http.Server does.
			select {
			case <-time.After(pause):
			case <-l.done:
				return
			}
			pause = min(2*pause, time.Second)
			continue
		}
		pause = 5 * time.Millisecond
		go l.sniff(nc)
	}
}

func (l *sniffListener) sniff(nc net.Conn) {
	nc.SetReadDeadline(time.Now().Add(l.timeout))
	first := make([]byte, 1)
	if _, err := io.ReadFull(nc, first); err != nil {
		if errors.Is(err, io.EOF) && l.plain && l.onPlain != nil {
			// Closed before its first byte: Jetty's unified port takes that as plain
			// HTTP too, and ZooKeeper counts it.
			l.onPlain()
		}
		nc.Close()
		return
	}
	nc.SetReadDeadline(time.Time{})
	var c net.Conn = &prefixedConn{Conn: nc, prefix: first}
	switch {
	case first[0] == tlsHandshakeRecord:
		c = tls.Server(c, l.cfg)
	case !l.plain:
		refuseNonTLS(nc)
		return
	case l.onPlain != nil:
		l.onPlain()
	}
	select {
	case l.ready <- c:
	case <-l.done:
		nc.Close()
	}
}

// refuseNonTLS answers a connection to an HTTPS-only port that did not begin with a
// TLS handshake as Java's TLS does, with javaTLSInternalError, and closes it. The close
// lingers (the write side first, then what the client still sends is read and dropped,
// for at most refuseLinger) so the client reads the alert rather than a reset.
func refuseNonTLS(nc net.Conn) {
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(refuseLinger))
	if _, err := nc.Write(javaTLSInternalError); err != nil {
		return
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.CloseWrite()
	}
	io.Copy(io.Discard, io.LimitReader(nc, 64<<10))
}

// refuseLinger bounds refuseNonTLS.
const refuseLinger = time.Second

func (l *sniffListener) stop(err error) {
	l.once.Do(func() {
		l.err = err
		close(l.done)
	})
}

func (l *sniffListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ready:
		return c, nil
	case <-l.done:
		return nil, l.err
	}
}

func (l *sniffListener) Close() error {
	err := l.Listener.Close()
	l.stop(net.ErrClosed)
	return err
}

// adminListener wraps the AdminServer's socket for admin.forceHttps or
// admin.portUnification; without either it is the socket itself. On error it closes
// the socket: the AdminServer is not started, never served over plain HTTP instead.
func (s *Server) adminListener(ln net.Listener) (net.Listener, error) {
	if !s.cfg.AdminTLS.On() {
		return ln, nil
	}
	cfg, err := s.cfg.adminTLSConfig()
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("%s: %w", s.cfg.AdminTLS.scheme(), err)
	}
	_, header := s.cfg.adminTimeouts()
	return newSniffListener(ln, cfg, !s.cfg.AdminTLS.ForceHTTPS, header, func() { s.metrics.insecureAdmin.Add(1) }), nil
}
