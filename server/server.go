package server

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/persistence"
	"github.com/zkraft/zkraft/quorum"
	"github.com/zkraft/zkraft/server/sasl"
	"github.com/zkraft/zkraft/session"
)

// Server is one zkraft server: the client listener in front of a quorum node.
// Lifecycle: New, Start, (Addr), Close.
type Server struct {
	cfg  Config
	log  *slog.Logger
	node *quorum.Node
	ln   net.Listener
	sln  net.Listener // secureClientPort's, if any
	tls  *tls.Config  // the client ports' TLS, if any (tls.go)
	// tlsNoTrust: no ssl.trustStore.location, so a client certificate cannot be
	// authenticated as x509 (tls.go, startTLS).
	tlsNoTrust bool
	https      []*http.Server // the admin and metrics listeners (admin.go)

	traceMask atomic.Int64 // gtmk/stmk's mask (reported only)
	slow      slowLog
	start     time.Time
	idMu      sync.Mutex
	ids       *session.IDGenerator

	mu       sync.Mutex
	conns    map[*conn]struct{}
	perIP    map[string]int
	sessions map[int64]*conn // the connection each session is attached to here
	closed   bool
	stopping chan struct{} // closed by Close, for loops that otherwise sleep on news
	// local holds the sessions of read-only clients while this member serves them
	// (readonly.go); nil otherwise.
	local map[int64]*localSession
	wg    sync.WaitGroup

	stats    stats
	metrics  serverMetrics // ZooKeeper's ServerMetrics that zkraft fills (server_metrics.go)
	throttle *throttle
	// connThrottle takes tokens for ConnectRequests (conn_throttle.go); large bounds
	// the bytes of large requests in process (large_requests.go).
	connThrottle *connThrottle
	large        largeRequests
	ensemble     ensembleAuth
	guard        tlsGuard // TLS handshakes in progress, plain connections counted (tls_guard.go)
	// readBuffersLent counts the read buffers connections hold (connreader.go): busy
	// connections and handshakes hold one, idle ones none.
	readBuffersLent atomic.Int64
	memCap          memCap

	adminSnap    adminLimiter // the snapshot admin command's rate limit
	adminRestore adminLimiter // the restore admin command's
	// digest makes digest ids with DigestAuthenticationProvider.digestAlg's algorithm.
	digest datatree.Digester
	// saslUsers are the DIGEST-MD5 users of the JAAS file; nil: SASL is off.
	saslUsers sasl.Users
	quota     quotaErrors
}

// New checks cfg; nothing is opened until Start.
func New(cfg Config, log *slog.Logger) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.Default()
	}
	s := &Server{cfg: cfg, log: log, conns: map[*conn]struct{}{}, perIP: map[string]int{}, stopping: make(chan struct{}),
		sessions: map[int64]*conn{}, throttle: newThrottle(cfg.Throttle), connThrottle: newConnThrottle(cfg.ConnThrottle, log),
		large: largeRequests{cfg: cfg.LargeRequests}}
	s.traceMask.Store(defaultTraceMask)
	s.memCap.limit = cfg.TreeMemoryLimit
	var err error
	if s.digest, err = datatree.NewDigester(cfg.DigestAlgorithm); err != nil {
		return nil, err
	}
	if s.saslUsers, err = loadSASLUsers(&cfg.SASL); err != nil {
		return nil, err
	}
	if cfg.SkipACL {
		log.Warn(`zookeeper.skipACL=="yes", ACL checks will be skipped`)
	}
	if cfg.NoForceSync {
		log.Warn("forceSync=no: the transaction log is not synced to disk; a crash of the machine can lose acknowledged writes")
	}
	return s, nil
}

// Start opens the store, waits until the node serves, and starts listening.
func (s *Server) Start() error {
	if err := s.cfg.missingDataDir(); err != nil {
		return err
	}
	qc := quorum.DefaultConfig(persistence.StoreDir(s.cfg.DataDir))
	qc.Tree = datatree.Options{ExtendedTypes: s.cfg.ExtendedTypes, Emulate353TTL: s.cfg.Emulate353TTLNodes, X509: s.cfg.x509Registered(), NoDigest: s.cfg.DigestDisabled,
		SASL: s.cfg.SASL.AuthProvider, SASLAnyUser: s.cfg.SASL.AnyUser, OnQuota: s.quotaExceeded}
	qc.EnforceQuota = s.cfg.EnforceQuota
	qc.DistrustEmptyStore = s.cfg.distrustEmptyStore(s.log)
	if src, err := s.cfg.tlsSource(func(err error) {
		s.log.Error("ssl: a changed store did not load; the previous one stays in use", "err", err)
	}); err != nil {
		return fmt.Errorf("ssl: %w", err)
	} else if src != nil {
		if s.tls, err = src.ServerConfig(); err != nil {
			return fmt.Errorf("ssl: %w", err)
		}
		s.tlsNoTrust = src.Settings().TrustStore.Location == ""
	}
	qc.TickTime = s.cfg.TickTime
	qc.ContainerCheckInterval = s.cfg.ContainerCheckInterval
	qc.ContainerMaxPerMinute = s.cfg.ContainerMaxPerMinute
	qc.Tree.ContainerMaxNeverUsed = s.cfg.ContainerMaxNeverUsed.Milliseconds()
	qc.SnapshotThreshold = s.cfg.SnapCount
	qc.SnapshotBytes = max(s.cfg.SnapSizeLimit, 0)
	qc.SnapshotRetain = s.cfg.SnapRetainCount
	qc.FsyncWarning = s.cfg.FsyncWarning
	qc.NoLogSync = s.cfg.NoForceSync
	qc.Logger = s.log
	qc.OnSessionClosed = s.sessionClosed
	qc.OnSessionMoved = s.sessionMoved
	qc.OnRestored = s.stateRestored
	qc.LongWork = s.cfg.LongWork
	qc.Figures = s.metrics.figures()
	// ZooKeeper's fsync_threshold_exceed_count, a ServerStats count (srst keeps it).
	qc.Figures.LogSyncSlow = func() { s.stats.fsyncExceeded.Add(1) }
	if len(s.cfg.Servers) > 0 {
		qc.ID, qc.Peers = strconv.Itoa(s.cfg.ServerID), s.cfg.Servers
		// Raft's follower timeout: half a tick (1 s at ZooKeeper's default). A follower
		// whose leader went silent (paused, cut off) stands for election after one to
		// two timeouts, sooner than a ZooKeeper follower gives up on its leader (syncLimit
		// ticks); one whose leader's process is gone (its ports refuse connections)
		// stands at once (quorum's prompt election), as a ZooKeeper follower does when
		// its connection closes. Raft's leader heartbeats every tenth to fifth of the
		// timeout (slower since, quorum/heartbeat_pace.go), most of an idle cluster's
		// CPU: a quarter of a tick made it twice ZooKeeper's;
		// a whole tick made it ZooKeeper's, but a paused leader was then replaced too late
		// for sessions of two ticks that moved to another member (the fault tests). A
		// tenth of a tick made a leader starved of CPU for 100 ms on a loaded 2-core
		// machine step down mid-load.
		qc.HeartbeatTimeout = max(100*time.Millisecond, s.cfg.TickTime/2)
		// An idle leader's empty AppendEntries to each follower (members learn of
		// commits from commit notices): every one to two ticks, not 0.5-1 s. Its other
		// use, the retry to a member that could not be reached, is nudged when the
		// member answers again (quorum's peerBack).
		qc.CommitTimeout = max(qc.CommitTimeout, s.cfg.TickTime)
		qc.Network = s.cfg.Network
		// A reconfig and mntr's synced followers count a member synced as ZooKeeper's
		// leader does: heard from in the last syncLimit ticks (at most a day, so the
		// product cannot overflow; 0 or less leaves quorum's two ticks).
		if s.cfg.SyncLimit > 0 && s.cfg.TickTime > 0 {
			qc.SyncWindow = min(time.Duration(s.cfg.SyncLimit), 24*time.Hour/s.cfg.TickTime+1) * s.cfg.TickTime
		}
		var err error
		if qc.TLS, err = s.cfg.QuorumSSL.quorumTLS(); err != nil {
			return err
		}
	}
	if s.cfg.Tune != nil {
		s.cfg.Tune(&qc)
	}
	node, err := quorum.Open(qc)
	if err != nil {
		return err
	}
	member := len(s.cfg.Servers) > 0
	if !member {
		if err := node.WaitLeader(firstLeaderWait); err != nil {
			node.Close()
			return err
		}
	}
	node.FSM.Watches.ObserveFired(s.metrics.fired)
	s.mu.Lock()
	s.node = node
	s.mu.Unlock()
	s.quota.leader.Store(node)
	idPrefix := int64(s.cfg.ServerID)
	if !member {
		idPrefix = 1 // a standalone ZooKeeper's session tracker has id 1, whatever myid says
	}
	if s.ids, err = session.NewIDGenerator(idPrefix, time.Now()); err != nil {
		node.Close()
		return err
	}
	if err := s.listen(); err != nil {
		node.Close()
		s.mu.Lock()
		s.node = nil
		s.mu.Unlock()
		return err
	}
	s.start = time.Now()
	s.startPauseMonitor()
	if err := s.startAdmin(); err != nil {
		// As ZooKeeper: the AdminServer failing to start does not stop the server.
		s.log.Error("admin or metrics listener not started", "err", err)
	}
	// A member listens from its start, as a ZooKeeper member does: until the members
	// elect a leader it refuses clients (handshake.go) and its four-letter words say it
	// is not serving.
	if s.ln != nil {
		kind := plainListener
		if s.cfg.PortUnification {
			kind = unifiedListener
		}
		s.wg.Add(1)
		go s.acceptLoop(s.ln, kind)
		s.log.Info("listening", "addr", s.ln.Addr().String(), "tls", kind == unifiedListener)
	}
	if s.sln != nil {
		s.wg.Add(1)
		go s.acceptLoop(s.sln, secureListener)
		s.log.Info("listening TLS only", "addr", s.sln.Addr().String())
	}
	if member {
		s.awaitFirstLeader(node)
		s.wg.Add(1)
		go s.watchQuorum()
	}
	s.log.Info("serving", "dataDir", s.cfg.DataDir, "zxid", fmt.Sprintf("0x%x", node.FSM.LastZxid()), "mode", s.mode())
	s.auditServer("serverStart", auditSuccess)
	return nil
}

// firstLeaderWait is how long Start waits for the first leader: a standalone server
// fails after it, a cluster member (listening meanwhile) goes on without one.
var firstLeaderWait = 60 * time.Second

// awaitFirstLeader is a member's wait for the cluster's first leader. Without one in
// firstLeaderWait, the member stays up refusing clients, as a ZooKeeper member keeps
// looking for its leader; with read-only mode on it serves read-only sessions after
// ZooKeeper's delay instead.
func (s *Server) awaitFirstLeader(node *quorum.Node) {
	limit := firstLeaderWait
	if s.cfg.ReadOnlyMode {
		// As ZooKeeper's peer, which starts its read-only server when it has looked
		// for a leader that long.
		limit = readOnlyDelay(s.cfg.TickTime)
	}
	switch err := node.WaitForLeader(limit); {
	case err == nil:
	case s.cfg.ReadOnlyMode:
		s.enterReadOnly()
	default:
		s.log.Warn("no leader yet: clients are refused until the members elect one", "waited", limit)
	}
}

// Shutdown stops the server the way SIGTERM should: a leader first hands leadership to
// another member (so the cluster does not wait out an election), then the clients are
// disconnected (they move to other members, as from a ZooKeeper that stops) and the
// store is closed.
func (s *Server) Shutdown() error {
	if s.node != nil && s.node.IsClustered() && s.node.IsLeader() {
		if err := s.node.HandOver(5 * time.Second); err != nil {
			s.log.Warn("stopping without handing leadership over", "err", err)
		} else {
			s.log.Info("handed leadership over before stopping")
		}
	}
	return s.Close()
}

// LogFailed delivers the error of a failed write or fdatasync of the transaction log
// (a full disk, an I/O error), after which the server takes no more writes. The server
// must then stop, as ZooKeeper's does ("Severe unrecoverable error"), so that whatever
// supervises it restarts it and the restart replays the log from disk. Call it after
// Start.
func (s *Server) LogFailed() <-chan error { return s.node.LogFailed() }

// Snapshot writes a snapshot of the state now (and compacts the log behind it).
func (s *Server) Snapshot() error { return s.node.TakeSnapshot() }

// Addr is the address the client port listens on; nil without one (TLS only).
func (s *Server) Addr() net.Addr {
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// SecureAddr is the address the secure client port listens on; nil without one.
func (s *Server) SecureAddr() net.Addr {
	if s.sln == nil {
		return nil
	}
	return s.sln.Addr()
}

func (s *Server) acceptLoop(ln net.Listener, kind listenerKind) {
	defer s.wg.Done()
	for {
		nc, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			s.log.Warn("accept", "err", err)
			time.Sleep(10 * time.Millisecond)
			continue
		}
		ip := remoteIP(nc)
		s.mu.Lock()
		if why := s.refusal(ip); why != nil {
			s.mu.Unlock()
			s.stats.rejected.Add(1)
			s.log.Log(context.Background(), why.level, why.msg, why.args...)
			// A hard close, as ZooKeeper's fastCloseSock: the client reads a reset, and
			// the refused socket lingers in no TIME_WAIT here.
			if tc, ok := nc.(*net.TCPConn); ok {
				tc.SetLinger(0)
			}
			nc.Close()
			continue
		}
		if kind != plainListener {
			nc = newSecureConn(nc, s.tls, kind == unifiedListener)
		}
		c := newConn(s, nc)
		c.secure = kind == secureListener
		s.conns[c] = struct{}{}
		s.perIP[ip]++
		s.mu.Unlock()
		s.countPlain(nc, kind) // not under s.mu: it asks whether this member serves
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			c.serve()
		}()
	}
}

// connRefusal says why a new connection is refused, and at what level it is logged.
type connRefusal struct {
	level slog.Level
	msg   string
	args  []any
}

// refusal says why a new connection from ip is closed at once, as ZooKeeper's accept
// closes it: the server is stopping, all its connections (maxCnxns; an ERROR, as
// ZooKeeper logs it) or those of the address (maxClientCnxns) are at their limit. nil
// lets it in. Under s.mu.
func (s *Server) refusal(ip string) *connRefusal {
	switch {
	case s.closed:
		return &connRefusal{slog.LevelDebug, "connection refused: stopping", nil}
	case s.cfg.MaxCnxns > 0 && len(s.conns) >= s.cfg.MaxCnxns:
		return &connRefusal{slog.LevelError, "too many connections", []any{"connections", len(s.conns), "max", s.cfg.MaxCnxns}}
	case s.cfg.MaxClientCnxns > 0 && s.perIP[ip] >= s.cfg.MaxClientCnxns:
		return &connRefusal{slog.LevelWarn, "too many connections", []any{"ip", ip, "max", s.cfg.MaxClientCnxns}}
	}
	return nil
}

// watchQuorum drops every client connection when this member has had no leader for
// leaderlessGrace (it is cut off from the majority), as ZooKeeper drops them when it stops
// serving: the clients move to members that can serve them. Handshakes are refused until a
// leader is known again. The grace spans an ordinary election, so a failover does not send
// every client of every member reconnecting at once (ZooKeeper drops them at once).
// With ReadOnlyMode, a member that stays without a leader for readOnlyDelay serves
// read-only clients until a leader is known again (readonly.go).
//
// It looks when the node has news of the leader (raft names another or none, the stream
// to it changed), when the next of those delays is due, and every half heartbeat timeout
// while the leader is not steady (quorum.Node.LeaderSteady: a stream to the leader lost
// counts against it only after a grace, read-only sessions expire here). An idle member
// with a steady leader does not wake here at all: the half-heartbeat tick on every
// member was about a fifth of an idle three-member cluster's CPU.
func (s *Server) watchQuorum() {
	defer s.wg.Done()
	period := s.node.HeartbeatTimeout() / 2
	tick := time.NewTicker(period)
	ticking := true
	defer tick.Stop()
	// tickWhile runs the tick only while on holds.
	tickWhile := func(on bool) {
		switch {
		case on && !ticking:
			tick.Reset(period)
		case !on && ticking:
			tick.Stop()
		}
		ticking = on
	}
	due := time.NewTimer(time.Hour)
	due.Stop()
	defer due.Stop()
	var lost time.Time
	for {
		select {
		case <-tick.C:
		case <-due.C:
		case <-s.node.LeaderNews():
		case <-s.stopping:
			return
		}
		hasLeader := s.node.HasLeader()
		tickWhile(!hasLeader || !s.node.LeaderSteady())
		if hasLeader {
			lost = time.Time{}
			due.Stop()
			if s.isReadOnly() {
				s.leaveReadOnly()
			}
			s.dropClientsOfLeader()
			continue
		}
		if lost.IsZero() {
			lost = time.Now()
		}
		// A member a reconfig removed follows as a non-voter while it has a leader, as
		// ZooKeeper's does; without one it serves no read-only sessions (it cannot vote
		// its way back) and drops its clients after the grace below.
		member := s.node.InMembership()
		roAt, dropAt := lost.Add(readOnlyDelay(s.cfg.TickTime)), lost.Add(leaderlessGrace(s.node.HeartbeatTimeout()))
		now := time.Now()
		switch {
		case s.isReadOnly() && !member:
			s.leaveReadOnly()
		case s.isReadOnly():
			s.expireLocal(now)
		case s.cfg.ReadOnlyMode && member && !now.Before(roAt):
			s.enterReadOnly()
		case now.After(dropAt):
			if n := s.dropClients(closedNoQuorum); n > 0 {
				s.log.Warn("no leader: dropped client connections", "count", n)
			}
		default:
			next := dropAt
			if s.cfg.ReadOnlyMode && member && roAt.Before(next) {
				next = roAt
			}
			due.Reset(time.Until(next) + time.Millisecond)
		}
	}
}

// leaderlessGrace is how long a member keeps its clients without a leader: two and a
// half Raft heartbeat timeouts (2.5 s at the default tick; a candidate waits one to two
// timeouts before it stands again), at least a second.
func leaderlessGrace(heartbeat time.Duration) time.Duration {
	return max(time.Second, heartbeat*5/2)
}

func remoteIP(nc net.Conn) string {
	if a, ok := nc.RemoteAddr().(*net.TCPAddr); ok {
		return javaHostAddress(a.IP, a.Zone)
	}
	host, _, _ := net.SplitHostPort(nc.RemoteAddr().String())
	return host
}

// javaHostAddress prints ip as Java's InetAddress.getHostAddress does, which is how
// ZooKeeper names a client in its ip identity: IPv4 (an IPv4-mapped IPv6 address too)
// dotted; IPv6 as eight hex groups with none left out, and a zone as its numeric
// scope id ("fe80:0:0:0:fc:ff:fe00:1%4").
func javaHostAddress(ip net.IP, zone string) string {
	if v4 := ip.To4(); v4 != nil || len(ip) != net.IPv6len {
		return ip.String()
	}
	groups := make([]string, 8)
	for i := range groups {
		groups[i] = strconv.FormatUint(uint64(ip[2*i])<<8|uint64(ip[2*i+1]), 16)
	}
	s := strings.Join(groups, ":")
	if zone != "" {
		if ifc, err := net.InterfaceByName(zone); err == nil {
			zone = strconv.Itoa(ifc.Index)
		}
		s += "%" + zone
	}
	return s
}

// javaSocketAddress prints a client's address as ZooKeeper shows it in cons, stat and
// dump (after a "/", InetSocketAddress.toString) and in the AdminServer (Jackson's
// InetSocketAddressSerializer): its host address as Java prints it, bracketed when it is
// IPv6 ("[0:0:0:0:0:0:0:1]:port"), then the port.
func javaSocketAddress(a net.Addr) string {
	ta, ok := a.(*net.TCPAddr)
	if !ok {
		return a.String()
	}
	host := javaHostAddress(ta.IP, ta.Zone)
	if ta.IP.To4() == nil {
		host = "[" + host + "]"
	}
	return host + ":" + strconv.Itoa(ta.Port)
}

// removeConn forgets a closed connection.
func (s *Server) removeConn(c *conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.conns[c]; !ok {
		return
	}
	delete(s.conns, c)
	if s.perIP[c.ip]--; s.perIP[c.ip] <= 0 {
		delete(s.perIP, c.ip)
	}
	if id := c.sessionID(); id != 0 && s.sessions[id] == c {
		delete(s.sessions, id)
		if c.readOnly {
			s.detachLocal(id)
		}
	}
}

// attach makes c the connection of session id here, closing an older one (the client
// moved to a new connection). It refuses (false) a connection that was closed meanwhile:
// removeConn, which close calls, has then already run and would not find it again.
func (s *Server) attach(id int64, c *conn) bool {
	s.mu.Lock()
	if _, open := s.conns[c]; !open {
		s.mu.Unlock()
		return false
	}
	old := s.swap(id, c)
	s.mu.Unlock()
	closeReplaced(old)
	return true
}

// swap makes c the connection of session id and returns the one it replaces, if any
// (s.mu held).
func (s *Server) swap(id int64, c *conn) *conn {
	old := s.sessions[id]
	s.sessions[id] = c
	if old == c {
		return nil
	}
	return old
}

func closeReplaced(old *conn) {
	if old != nil {
		old.close(closedSessionMoved)
	}
}

// dropClients closes every client connection and says how many there were. A
// connection that sent no ConnectRequest is no client yet: a member without a leader
// drops its clients on every tick, and an isro or srvr asked meanwhile is answered.
func (s *Server) dropClients(why closeReason) int {
	n := 0
	for _, c := range s.connList() {
		if c.client.Load() {
			c.close(why)
			n++
		}
	}
	return n
}

// sessionClosed runs after a closeSession entry is applied: the session's connection,
// if it is here and still open, is closed (its client learns of expiry on reconnect).
func (s *Server) sessionClosed(id int64, ephemerals []string) {
	s.mu.Lock()
	node, c := s.node, s.sessions[id]
	s.mu.Unlock()
	if node != nil { // nil while the node replays its log during Start
		node.Forget(id)
		s.auditEphemerals(id, ephemerals)
	}
	if c != nil && !c.closing.Load() {
		c.closeAfterFlush(closedSessionExpired)
	}
}

// newSessionID returns an id no session has used on this server.
// sessionMoved drops this server's connection of a session that a client reattached
// through another member. ZooKeeper closes it at its next request (SESSIONMOVED); the
// client has left it anyway.
func (s *Server) sessionMoved(id int64, owner string) {
	s.mu.Lock()
	node, c := s.node, s.sessions[id]
	s.mu.Unlock()
	if node == nil || c == nil || owner == node.ID() {
		return
	}
	s.log.Info("session moved to another server", "session", fmt.Sprintf("0x%x", id), "server", owner)
	c.close(closedSessionMoved)
}

// stateRestored runs after a snapshot from the leader replaced this member's state while
// it serves: the changes between the old state and the new fired no watch, so every
// client is dropped; each comes back with its last zxid and its watches (setWatches),
// and gets the events it missed, as from a ZooKeeper that synced by snapshot.
func (s *Server) stateRestored() {
	s.mu.Lock()
	node := s.node
	s.mu.Unlock()
	if node == nil { // still starting: no clients yet
		return
	}
	conns := s.connList()
	s.log.Info("state replaced by the leader's snapshot: dropping client connections", "count", len(conns),
		"zxid", fmt.Sprintf("0x%x", node.FSM.LastZxid()))
	for _, c := range conns {
		c.close(closedStateReplaced)
	}
}

func (s *Server) newSessionID() int64 {
	s.idMu.Lock()
	defer s.idMu.Unlock()
	return s.ids.Next()
}

func newPassword() []byte {
	p := make([]byte, 16)
	if _, err := rand.Read(p); err != nil {
		panic(err)
	}
	return p
}

// Close stops listening, closes every connection and the node. Sessions stay in the
// store and expire after their timeout once a server runs again.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.stopping)
	s.auditServer("serverStop", auditInvoked)
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	if s.ln != nil {
		s.ln.Close()
	}
	if s.sln != nil {
		s.sln.Close()
	}
	for _, hs := range s.https {
		hs.Close()
	}
	for _, c := range conns {
		c.close(closedShutdown)
	}
	if s.node != nil {
		// A handshake or a write waiting for a leader ends now: when every member stops
		// at once, the election it would wait out never ends.
		s.node.StopWaiting()
	}
	s.wg.Wait()
	if s.node != nil {
		return s.node.Close()
	}
	return nil
}
