package quorum

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// testCA is a certificate authority made for one test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func newTestCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &testCA{cert: cert, key: key, pool: pool}
}

// member issues a member certificate for 127.0.0.1, good for both ends of a stream.
func (ca *testCA) member(t *testing.T, name string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// memberTLS is the TLS of a member holding cert and trusting the CAs of trusted.
func memberTLS(cert tls.Certificate, trusted ...*testCA) *TLS {
	pool := x509.NewCertPool()
	for _, ca := range trusted {
		pool.AddCert(ca.cert)
	}
	return &TLS{
		Server: &tls.Config{Certificates: []tls.Certificate{cert}, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert},
		Client: &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool},
	}
}

func openTLSMember(t *testing.T, id, dir string, peers []Peer, tc *TLS, log *slog.Logger) *Node {
	t.Helper()
	cfg := DefaultConfig(dir)
	cfg.ID, cfg.Peers, cfg.TLS, cfg.Logger = id, peers, tc, log
	cfg.HeartbeatTimeout = 100 * time.Millisecond
	n, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// proposeRetry creates path through n until it succeeds (a failover may make the first
// tries fail). NodeExists is an earlier try's outcome: Propose itself proposes again
// after a lost leader, so even its first answer may be one.
func proposeRetry(t *testing.T, n *Node, path string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		f := n.Propose(&Entry{Session: 7, Op: jute.OpCreate, Req: &jute.CreateRequest{Path: path, Acl: open}})
		if err := f.Error(); err == nil {
			r := f.Response().(*Result)
			if r.Err == jute.ErrSessionMoved && time.Now().Before(deadline) {
				// n led when the session was created through it (no owner); having lost
				// the leadership on a loaded machine, it forwards with its id, so the
				// session is moved to it first, as a client reattaching would.
				n.Propose(&Entry{Session: 7, Op: OpMoveSession}).Error()
				continue
			}
			if r.Err != jute.OK && r.Err != jute.ErrNodeExists {
				t.Fatalf("create %s: %v", path, r.Err)
			}
			return
		} else if time.Now().After(deadline) {
			t.Fatalf("create %s: %v", path, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Three members whose streams are all mutual TLS form a cluster, replicate (a follower
// forwards over its TLS peer stream), fail over when the leader stops, and answer
// nothing in plaintext.
func TestTLSClusterFormsReplicatesAndFailsOver(t *testing.T) {
	ca := newTestCA(t, "cluster CA")
	peers := threePeers(t)
	nodes := map[string]*Node{}
	for _, p := range peers {
		nodes[p.ID] = openTLSMember(t, p.ID, t.TempDir(), peers, memberTLS(ca.member(t, "member "+p.ID), ca), testLogger(t))
	}
	defer func() {
		for _, n := range nodes {
			n.Close()
		}
	}()
	leader := leaderOf(t, nodes)
	propose(t, leader, &Entry{Session: 7, Op: jute.OpCreateSession, Req: &SessionRequest{Timeout: 30000, Password: make([]byte, 16)}})
	var follower *Node
	for _, n := range nodes {
		if n != leader {
			follower = n
		}
	}
	if r := propose(t, follower, &Entry{Session: 7, Op: OpMoveSession}); r.Err != jute.OK {
		t.Fatalf("move session: %v", r.Err)
	}
	for i := range 10 {
		proposeRetry(t, follower, fmt.Sprintf("/n%d", i))
	}
	waitSame(t, nodes)

	// The peer port answers the cluster query over TLS only.
	self := follower.cfg.self()
	if !askFormed(follower.cfg.Network, leader.cfg.self().PeerAddr) {
		t.Fatal("the cluster query over TLS got no answer")
	}
	if askFormed(TCP{}, leader.cfg.self().PeerAddr) {
		t.Fatal("the peer port answered the cluster query in plaintext")
	}
	expectNoPlaintext(t, self.RaftAddr)

	closeLeader(nodes, leader)
	leader, follower = leaderAndFollowerOf(t, nodes)
	if r := propose(t, follower, &Entry{Session: 7, Op: OpMoveSession}); r.Err != jute.OK {
		t.Fatalf("move session after failover: %v", r.Err)
	}
	proposeRetry(t, follower, "/after")
	waitSame(t, nodes)
}

// expectNoPlaintext dials addr in plaintext, sends bytes that are no TLS record, and
// expects the stream closed without a byte in answer.
func expectNoPlaintext(t *testing.T, addr string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	c.Write([]byte("\x00\x00\x00\x01Q plaintext"))
	b := make([]byte, 64)
	n, err := c.Read(b)
	if err == nil {
		var n2 int
		n2, err = c.Read(b[n:])
		n += n2
	}
	// A TLS alert is the most a plaintext dialer may get.
	if n > 0 && b[0] != 0x15 {
		t.Fatalf("%s answered plaintext with %q", addr, b[:n])
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("%s kept a plaintext stream open", addr)
	}
}

// A member whose certificate comes from a CA the others do not trust gets none of its
// streams accepted (the others log the refusals): it never hears of the leader, never
// receives an entry, cannot propose, and the two trusted members keep serving.
func TestTLSUntrustedMemberCannotJoin(t *testing.T) {
	good, rogue := newTestCA(t, "cluster CA"), newTestCA(t, "rogue CA")
	peers := threePeers(t)
	nodes := map[string]*Node{}
	var logs [2]lockedBuffer
	for i, p := range peers[:2] {
		log := slog.New(slog.NewTextHandler(&logs[i], &slog.HandlerOptions{Level: slog.LevelDebug}))
		nodes[p.ID] = openTLSMember(t, p.ID, t.TempDir(), peers, memberTLS(good.member(t, "member "+p.ID), good), log)
	}
	// The rogue trusts both CAs: only the others' refusal keeps it out.
	outsider := openTLSMember(t, peers[2].ID, t.TempDir(), peers, memberTLS(rogue.member(t, "rogue"), good, rogue), testLogger(t))
	defer func() {
		outsider.Close()
		for _, n := range nodes {
			n.Close()
		}
	}()
	leader := leaderOf(t, nodes)
	propose(t, leader, &Entry{Session: 7, Op: jute.OpCreateSession, Req: &SessionRequest{Timeout: 30000, Password: make([]byte, 16)}})
	for i := range 5 {
		proposeRetry(t, leader, fmt.Sprintf("/n%d", i))
	}
	waitSame(t, nodes)
	// Long enough for the outsider to time out many elections of its own.
	time.Sleep(2 * time.Second)
	if outsider.HasLeader() {
		t.Fatal("the untrusted member knows a leader")
	}
	if z := outsider.FSM.LastZxid(); z != 0 {
		t.Fatalf("the untrusted member applied entries up to %d", z)
	}
	if f := outsider.Propose(&Entry{Session: 7, Op: jute.OpCreate, Req: &jute.CreateRequest{Path: "/rogue", Acl: open}}); f.Error() == nil {
		t.Fatal("the untrusted member's proposal succeeded")
	}
	for i := range logs {
		if !strings.Contains(logs[i].String(), "refused a member stream") {
			t.Errorf("member %s logged no refused stream", peers[i].ID)
		}
	}
	proposeRetry(t, leader, "/still-serving")
	waitSame(t, nodes)
	// (Under TLS 1.3 the dialer's handshake ends before the listener checks its
	// certificate, so the dial itself may succeed; nothing comes back on it.)
	if askFormed(outsider.cfg.Network, leader.cfg.self().PeerAddr) {
		t.Fatal("the untrusted member's cluster query was answered")
	}
}

// A dialer that connects and says nothing is cut off at the handshake timeout, and a
// good dialer is accepted meanwhile; a listener that never answers a handshake makes
// the dial fail at the timeout.
func TestTLSHandshakeStallIsCut(t *testing.T) {
	ca := newTestCA(t, "cluster CA")
	tc := memberTLS(ca.member(t, "member"), ca)
	tc.HandshakeTimeout = 300 * time.Millisecond
	nw := newTLSNetwork(TCP{}, *tc, testLogger(t))
	ln := echoListener(t, nw)
	stalled, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.Close()
	good, err := nw.Dial(ln.Addr().String(), 5*time.Second)
	if err != nil {
		t.Fatalf("a good dial behind a stalled one: %v", err)
	}
	good.Close()
	start := time.Now()
	stalled.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := stalled.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("stalled stream: %v, want it closed", err)
	}
	if waited := time.Since(start); waited > 2*time.Second {
		t.Fatalf("stalled stream cut after %v", waited)
	}

	// A listener that accepts and never answers.
	mute, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer mute.Close()
	go func() {
		for {
			c, err := mute.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	start = time.Now()
	if _, err := nw.Dial(mute.Addr().String(), 5*time.Second); err == nil {
		t.Fatal("a dial to a mute listener succeeded")
	}
	if waited := time.Since(start); waited > 2*time.Second {
		t.Fatalf("the dial to a mute listener took %v", waited)
	}
}

// With AcceptPlaintext (portUnification) a listener takes TLS and plaintext streams
// alike, the plaintext stream's first byte intact.
func TestTLSAcceptPlaintextTakesBoth(t *testing.T) {
	ca := newTestCA(t, "cluster CA")
	tc := memberTLS(ca.member(t, "member"), ca)
	tc.AcceptPlaintext = true
	nw := newTLSNetwork(TCP{}, *tc, testLogger(t))
	ln := echoListener(t, nw)
	plainTLS := *tc
	plainTLS.Client = nil
	for name, dial := range map[string]Network{"tls": nw, "plaintext": TCP{}, "plaintext dialer": newTLSNetwork(TCP{}, plainTLS, testLogger(t))} {
		c, err := dial.Dial(ln.Addr().String(), 2*time.Second)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Write([]byte("hello")); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		b := make([]byte, 5)
		if _, err := io.ReadFull(c, b); err != nil || string(b) != "hello" {
			t.Fatalf("%s: echo %q, %v", name, b, err)
		}
		_, isTLS := c.(*tls.Conn)
		if isTLS != (name == "tls") {
			t.Fatalf("%s: TLS %v", name, isTLS)
		}
		c.Close()
	}
}

func TestTLSValidate(t *testing.T) {
	ca := newTestCA(t, "cluster CA")
	good := memberTLS(ca.member(t, "member"), ca)
	want := *good
	want.Server = want.Server.Clone()
	want.Server.ClientAuth = tls.VerifyClientCertIfGiven
	noClient := *good
	noClient.Client = nil
	for name, tc := range map[string]*TLS{"client auth not required": &want, "no dial config": &noClient, "no server config": {Client: good.Client}} {
		cfg := DefaultConfig(t.TempDir())
		cfg.TLS = tc
		if err := cfg.Validate(); err == nil {
			t.Errorf("%s: Validate passed", name)
		}
	}
	cfg := DefaultConfig(t.TempDir())
	cfg.TLS = good
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
}

func testLogger(t *testing.T) *slog.Logger { return slog.New(slog.NewTextHandler(t.Output(), nil)) }

// lockedBuffer is a log destination the test reads while members write to it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// echoListener listens on nw and echoes every accepted stream back until it closes; the
// listener is closed when the test ends.
func echoListener(t *testing.T, nw Network) net.Listener {
	t.Helper()
	ln, err := nw.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	return ln
}

// A dialer that hangs up during its handshake (its dial timed out, it was killed) is
// not a refusal: it is logged at debug and leaves the host's warning, at most one a
// minute, for an untrusted member dialing from the same host next.
func TestTLSHangUpLeavesTheWarningForARefusal(t *testing.T) {
	good, rogue := newTestCA(t, "cluster CA"), newTestCA(t, "rogue CA")
	var logs lockedBuffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ln := echoListener(t, newTLSNetwork(TCP{}, *memberTLS(good.member(t, "member"), good), log))
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	waitLog := func(what string) string {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			for _, line := range strings.Split(logs.String(), "\n") {
				if strings.Contains(line, what) {
					return line
				}
			}
		}
		t.Fatalf("no %q in the log:\n%s", what, logs.String())
		return ""
	}
	if line := waitLog("closed during its handshake"); !strings.Contains(line, "level=DEBUG") {
		t.Fatalf("a hang-up logged as %s", line)
	}
	outsider := newTLSNetwork(TCP{}, *memberTLS(rogue.member(t, "rogue"), good, rogue), testLogger(t))
	if c, err := outsider.Dial(ln.Addr().String(), 5*time.Second); err == nil {
		c.Read(make([]byte, 1)) // under TLS 1.3 the refusal comes after the dial
		c.Close()
	}
	if line := waitLog("refused a member stream"); !strings.Contains(line, "level=WARN") {
		t.Fatalf("the untrusted member's refusal after a hang-up from its host logged as %s", line)
	}
}
