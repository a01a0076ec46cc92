package quorum

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"syscall"
	"time"
)

// TLS makes the streams between members mutual TLS (ZooKeeper's sslQuorum): Raft's
// streams on the election port, the peer streams and the cluster query on the peer port.
// The caller builds both configurations (keystores are not quorum's business).
type TLS struct {
	// Server is what this member's listeners present. It must require and verify the
	// dialer's certificate (ClientAuth tls.RequireAndVerifyClientCert), so that a
	// member whose certificate is not trusted never gets a stream accepted.
	Server *tls.Config
	// Client is what this member dials with: it presents this member's certificate and
	// verifies the listener's. An empty ServerName is set to the dialed host. Nil: dial
	// in plaintext (only with AcceptPlaintext, the first step of a switch to TLS).
	Client *tls.Config
	// HandshakeTimeout bounds a handshake, and the wait for a plaintext stream's first
	// byte; 0 is ZooKeeper's 5 s (ssl.quorum.handshakeDetectionTimeoutMillis).
	HandshakeTimeout time.Duration
	// AcceptPlaintext lets the listeners take plaintext streams as well as TLS ones
	// (ZooKeeper's portUnification), told apart by the first byte, so that a running
	// cluster can move to TLS one member at a time.
	AcceptPlaintext bool
}

// defaultHandshakeTimeout is ZooKeeper's handshake detection timeout.
const defaultHandshakeTimeout = 5 * time.Second

// validate names the first bad field.
func (t *TLS) validate() error {
	switch {
	case t.Server == nil:
		return errors.New("quorum: TLS.Server is nil")
	case t.Server.ClientAuth != tls.RequireAndVerifyClientCert:
		return errors.New("quorum: TLS.Server must require and verify the dialer's certificate")
	case t.Client == nil && !t.AcceptPlaintext:
		return errors.New("quorum: TLS.Client is nil: members could not reach each other")
	case t.HandshakeTimeout < 0:
		return errors.New("quorum: TLS.HandshakeTimeout is negative")
	}
	return nil
}

// tlsNetwork wraps a Network so that every stream on it is TLS.
type tlsNetwork struct {
	inner   Network
	t       TLS
	timeout time.Duration
	log     *slog.Logger
}

func newTLSNetwork(inner Network, t TLS, log *slog.Logger) *tlsNetwork {
	timeout := t.HandshakeTimeout
	if timeout == 0 {
		timeout = defaultHandshakeTimeout
	}
	if log == nil {
		log = slog.Default()
	}
	return &tlsNetwork{inner: inner, t: t, timeout: timeout, log: log}
}

// Dial connects and, unless dialing in plaintext, completes the handshake within the
// handshake timeout (and the dial's own).
func (n *tlsNetwork) Dial(addr string, timeout time.Duration) (net.Conn, error) {
	c, err := n.inner.Dial(addr, timeout)
	if err != nil || n.t.Client == nil {
		return c, err
	}
	cfg := n.t.Client
	if cfg.ServerName == "" {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			c.Close()
			return nil, err
		}
		cfg = cfg.Clone()
		cfg.ServerName = host
	}
	ctx, cancel := context.WithTimeout(context.Background(), min(n.timeout, timeout))
	defer cancel()
	tc := tls.Client(c, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return tc, nil
}

// Listen listens on addr; its Accept returns only streams whose handshake completed.
func (n *tlsNetwork) Listen(addr string) (net.Listener, error) {
	ln, err := n.inner.Listen(addr)
	if err != nil {
		return nil, err
	}
	l := &tlsListener{Listener: ln, n: n, ready: make(chan net.Conn), done: make(chan struct{}),
		pending: map[net.Conn]struct{}{}, warned: map[string]time.Time{}}
	go l.acceptLoop()
	return l, nil
}

// tlsListener hands out streams once their handshakes are done. Each handshake runs in
// a goroutine of its own under the handshake timeout, so a dialer that stalls (or
// speaks something else) delays nobody and is cut off; Accept fails only when the
// listener is closed, as the peer port's and Raft's accept loops expect.
type tlsListener struct {
	net.Listener
	n         *tlsNetwork
	ready     chan net.Conn
	done      chan struct{}
	closeOnce sync.Once
	mu        sync.Mutex
	pending   map[net.Conn]struct{} // streams in their handshake, closed with the listener
	warned    map[string]time.Time  // host -> when a refusal from it was last logged as a warning
}

func (l *tlsListener) acceptLoop() {
	acceptStreams(l.Listener, l.done, l.n.log, func(c net.Conn) bool {
		if !l.track(c) {
			c.Close()
			return false
		}
		go l.handshake(c)
		return true
	})
	l.Close()
}

// track records a stream in its handshake; false once the listener is closed.
func (l *tlsListener) track(c net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	select {
	case <-l.done:
		return false
	default:
	}
	l.pending[c] = struct{}{}
	return true
}

func (l *tlsListener) untrack(c net.Conn) {
	l.mu.Lock()
	delete(l.pending, c)
	l.mu.Unlock()
}

func (l *tlsListener) handshake(c net.Conn) {
	defer l.untrack(c)
	sc, err := l.n.serve(c)
	if err != nil {
		c.Close()
		select {
		case <-l.done: // cut by Close
		default:
			l.refused(c.RemoteAddr(), err)
		}
		return
	}
	select {
	case l.ready <- sc:
	case <-l.done:
		sc.Close()
	}
}

// refusalLogEvery is how often a refused stream from one host is logged as a warning:
// a member that is not trusted redials all the time.
const refusalLogEvery = time.Minute

func (l *tlsListener) refused(from net.Addr, err error) {
	if hungUp(err) {
		// A dialer that gave up or died mid-handshake (its dial timed out under load,
		// the member was killed) was not refused: logging it as a warning would use up
		// the host's warning, and every member of a one-host cluster shares that host.
		l.n.log.Debug("quorum: a member stream closed during its handshake", "from", from.String(), "err", err)
		return
	}
	host, _, _ := net.SplitHostPort(from.String())
	now := time.Now()
	l.mu.Lock()
	last, seen := l.warned[host]
	warn := !seen || now.Sub(last) >= refusalLogEvery
	if warn {
		if len(l.warned) >= 1024 { // many hosts: forget them rather than grow
			clear(l.warned)
		}
		l.warned[host] = now
	}
	l.mu.Unlock()
	level := slog.LevelDebug
	if warn {
		level = slog.LevelWarn
	}
	l.n.log.Log(context.Background(), level, "quorum: refused a member stream", "from", from.String(), "err", err)
}

// serve completes the server side of a stream: a TLS handshake, or, with
// AcceptPlaintext, a plaintext stream when its first byte is not a TLS record's.
func (n *tlsNetwork) serve(c net.Conn) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), n.timeout)
	defer cancel()
	if n.t.AcceptPlaintext {
		c.SetReadDeadline(time.Now().Add(n.timeout))
		br := bufio.NewReaderSize(c, 16)
		first, err := br.Peek(1)
		if err != nil {
			return nil, err
		}
		c.SetReadDeadline(time.Time{})
		c = &peekedConn{Conn: c, r: br}
		if first[0] != tlsHandshakeRecord {
			return c, nil
		}
	}
	sc := tls.Server(c, n.t.Server)
	if err := sc.HandshakeContext(ctx); err != nil {
		return nil, err
	}
	return sc, nil
}

// tlsHandshakeRecord is the content type of the record every TLS stream starts with.
const tlsHandshakeRecord = 0x16

// peekedConn is a stream whose first bytes were read ahead into r.
type peekedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *peekedConn) Read(b []byte) (int, error) { return c.r.Read(b) }

// Accept returns the next stream whose handshake completed.
func (l *tlsListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ready:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close stops accepting and ends the handshakes under way.
func (l *tlsListener) Close() error {
	var err error
	l.closeOnce.Do(func() {
		l.mu.Lock()
		close(l.done)
		for c := range l.pending {
			c.Close()
		}
		l.mu.Unlock()
		err = l.Listener.Close()
	})
	return err
}

// hungUp reports whether a handshake failed because the dialer closed or reset the
// stream, rather than because this member refused what it was sent.
func hungUp(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}
