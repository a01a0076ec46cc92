package server

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/server/tlsconf"
)

// TLS on the client side, kept out of the request path: a listener's connections are
// wrapped in a secureConn, whose handshake runs first thing in the connection's own
// goroutine (serve) with a deadline, and a client certificate becomes the connection's
// initial x509 identity, as ZooKeeper's NettyServerCnxnFactory and
// X509AuthenticationProvider give it before the ConnectRequest is read.

// listenerKind says what a listener's connections speak.
type listenerKind uint8

const (
	plainListener   listenerKind = iota // clientPort
	secureListener                      // secureClientPort: TLS only
	unifiedListener                     // clientPort with client.portUnification: TLS or plaintext
)

// tlsHandshakeRecord is the first byte of a TLS ClientHello (a handshake record); a
// plaintext ZooKeeper client starts with a frame length or a four-letter word.
const tlsHandshakeRecord = 0x16

// defaultTLSHandshakeTimeout is Netty's SslHandler default, which ZooKeeper keeps.
const defaultTLSHandshakeTimeout = 10 * time.Second

// tlsSource builds the client port's TLS settings (ssl.*) when a listener needs them;
// reloadFailed hears of a changed store that did not load.
func (c *Config) tlsSource(reloadFailed func(error)) (*tlsconf.Source, error) {
	if c.SecureClientPort == 0 && !c.PortUnification {
		return nil, nil
	}
	settings, err := tlsconf.FromProperties(c.SSL, "ssl.")
	if err != nil {
		return nil, err
	}
	if settings.KeyStore.Location == "" {
		return nil, errors.New("ssl.keyStore.location is not set")
	}
	settings.Reload = c.CertReload
	return tlsconf.New(settings, reloadFailed)
}

// listen opens the client port (unless ClientPort is -1) and the secure client port (if
// SecureClientPort is set).
func (s *Server) listen() error {
	open := func(host string, port int) (net.Listener, error) {
		addr := net.JoinHostPort(host, strconv.Itoa(port))
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, fmt.Errorf("listen on %s: %w", addr, err)
		}
		return ln, nil
	}
	var err error
	if s.cfg.ClientPort >= 0 {
		if s.ln, err = open(s.cfg.ClientPortAddress, s.cfg.ClientPort); err != nil {
			return err
		}
	}
	if s.cfg.SecureClientPort != 0 {
		if s.sln, err = open(s.cfg.SecureClientPortAddress, s.cfg.SecureClientPort); err != nil {
			if s.ln != nil {
				s.ln.Close()
			}
			return err
		}
	}
	return nil
}

// secureConn is a connection of a TLS or unified listener. Close and the addresses act
// on the socket at all times; Read, Write and the deadlines act on what setUp chose
// (TLS, or plaintext on a unified port). setUp runs in serve before any other goroutine
// of the connection uses it.
type secureConn struct {
	net.Conn  // the socket
	cfg       *tls.Config
	unified   bool
	rw        net.Conn
	certified bool   // the client showed a certificate
	subject   string // its subject (RFC 2253); "" for an empty one, as Java prints it
}

func newSecureConn(nc net.Conn, cfg *tls.Config, unified bool) *secureConn {
	return &secureConn{Conn: nc, cfg: cfg, unified: unified, rw: nc}
}

func (sc *secureConn) Read(b []byte) (int, error)         { return sc.rw.Read(b) }
func (sc *secureConn) Write(b []byte) (int, error)        { return sc.rw.Write(b) }
func (sc *secureConn) SetDeadline(t time.Time) error      { return sc.rw.SetDeadline(t) }
func (sc *secureConn) SetReadDeadline(t time.Time) error  { return sc.rw.SetReadDeadline(t) }
func (sc *secureConn) SetWriteDeadline(t time.Time) error { return sc.rw.SetWriteDeadline(t) }

// tlsWriteMax is the most one WriteFrames writes. A TLS connection cannot write again
// once a write timed out (crypto/tls keeps the error), so a large batch is written in
// parts that each get the write deadline afresh (writeQueued sets it before each call),
// as each plaintext write that makes progress does: a client that reads slowly is
// served to the end, one that reads nothing for writeDeadline is closed.
const tlsWriteMax = 256 << 10

// WriteFrames writes a batch of frames, up to tlsWriteMax bytes of them, in one Write,
// so a TLS connection sends them in as few records as their size allows (net.Buffers'
// writev exists only for TCP sockets); it consumes what it wrote.
func (sc *secureConn) WriteFrames(bufs *net.Buffers) (int64, error) {
	var joined []byte
	for _, b := range *bufs {
		joined = append(joined, b[:min(len(b), tlsWriteMax-len(joined))]...)
		if len(joined) == tlsWriteMax {
			break
		}
	}
	n, err := sc.rw.Write(joined)
	for left := n; left > 0 && len(*bufs) > 0; {
		if first := (*bufs)[0]; len(first) <= left {
			left -= len(first)
			*bufs = (*bufs)[1:]
		} else {
			(*bufs)[0] = first[left:]
			left = 0
		}
	}
	return int64(n), err
}

// setUp sniffs a unified port's first byte and runs the TLS handshake, both within
// timeout. An error closes only this connection.
func (sc *secureConn) setUp(timeout time.Duration) error {
	sc.Conn.SetDeadline(time.Now().Add(timeout))
	defer sc.Conn.SetDeadline(time.Time{})
	raw := sc.Conn
	if sc.unified {
		first := make([]byte, 1)
		if _, err := io.ReadFull(sc.Conn, first); err != nil {
			return err
		}
		raw = &prefixedConn{Conn: sc.Conn, prefix: first}
		if first[0] != tlsHandshakeRecord {
			sc.rw = raw
			return nil
		}
	}
	tc := tls.Server(raw, sc.cfg)
	if err := tc.Handshake(); err != nil {
		return err
	}
	sc.rw = tc
	if peers := tc.ConnectionState().PeerCertificates; len(peers) > 0 {
		sc.certified, sc.subject = true, tlsconf.SubjectName(peers[0])
	}
	return nil
}

// prefixedConn gives back the bytes read to sniff before the rest of the stream.
type prefixedConn struct {
	net.Conn
	prefix []byte
}

func (p *prefixedConn) Read(b []byte) (int, error) {
	if len(p.prefix) > 0 {
		n := copy(b, p.prefix)
		p.prefix = p.prefix[n:]
		return n, nil
	}
	return p.Conn.Read(b)
}

// startTLS sets a secure connection up and gives it its x509 identity; false: the
// connection is to be closed, for why. Before the handshake it is dropped as ZooKeeper's
// Netty factory drops it (tls_guard.go): on the secure port while nothing serves, with
// earlyDropSecureConnectionHandshakes; on the unified port, over the limit of handshakes
// in progress.
func (c *conn) startTLS() (why closeReason, ok bool) {
	sc, ok := c.nc.(*secureConn)
	if !ok {
		return 0, true
	}
	switch {
	case sc.unified:
		if !c.srv.enterHandshake() {
			return closedTLSOverLimit, false
		}
		defer c.srv.leaveHandshake()
	case c.srv.cfg.EarlyDropSecureHandshakes && !c.srv.serving():
		c.srv.metrics.cnxnClosedNotRunning.Add(1)
		c.srv.log.Info("server is not running, closing the connection before its TLS handshake", "client", sc.RemoteAddr().String())
		return closedNotServing, false
	}
	timeout := c.srv.cfg.TLSHandshakeTimeout
	if timeout <= 0 {
		timeout = defaultTLSHandshakeTimeout
	}
	if err := sc.setUp(timeout); err != nil {
		// ZooKeeper counts a failed handshake as an authentication failure, and as an
		// unsuccessful handshake.
		c.srv.stats.authFailed.Add(1)
		c.srv.metrics.unsuccessfulHandshake.Add(1)
		c.srv.log.Warn("closing connection: unsuccessful TLS handshake", "client", sc.RemoteAddr().String(), "err", err)
		return closedTLSHandshake, false
	}
	if sc.certified && c.srv.tlsNoTrust {
		// The handshake trusted the system's roots, but ZooKeeper's
		// X509AuthenticationProvider checks the certificate again against the configured
		// trust store only, and without one fails every client that shows a certificate.
		c.srv.stats.authFailed.Add(1)
		c.srv.log.Warn("closing connection: no ssl.trustStore to authenticate its x509 certificate", "client", sc.RemoteAddr().String(), "id", sc.subject)
		return closedTLSHandshake, false
	}
	if sc.certified {
		// An empty subject is the id "" (SAN-only certificates have one), as in ZooKeeper.
		c.caller.Store(x509Caller(c.Caller(), sc.subject, c.srv.cfg.X509SuperUser))
		c.srv.log.Info("authenticated x509 id", "id", sc.subject, "client", sc.RemoteAddr().String())
	}
	return 0, true
}

// x509Caller adds the certificate's identity, as X509AuthenticationProvider does: the
// super user's subject first gets a "super" id, then everyone gets the x509 id.
func x509Caller(c datatree.Caller, subject, superUser string) *datatree.Caller {
	next := c
	next.Ids = append([]jute.Id(nil), c.Ids...)
	if superUser != "" && subject == superUser {
		next.Super = true
		next.Ids = appendID(next.Ids, jute.Id{Scheme: "super", Id: subject})
	}
	next.Ids = appendID(next.Ids, jute.Id{Scheme: "x509", Id: subject})
	return &next
}

// securePort is the secure client port as conf shows it: -1 without one.
func (s *Server) securePort() int {
	if a, ok := s.SecureAddr().(*net.TCPAddr); ok {
		return a.Port
	}
	return -1
}
