package server

import (
	"net"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"time"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/quorum"
	"github.com/zkraft/zkraft/session"
)

// The gatherer: each group of facts about the server is collected here, once, into a
// plain value that three renderers print: the four-letter words as text
// (fourletter.go), the AdminServer as JSON (admin.go) and /metrics in Prometheus' format
// (metrics.go). A new fact is gathered here and shown by whichever of them has a place
// for it; none of them reads the server's state itself.

// statFacts are the server's figures: srvr and stat print them, the AdminServer's stats
// and server_stats show them, and mntr (so the AdminServer's monitor and /metrics) reports
// them among its values.
type statFacts struct {
	version        string
	readOnly       bool
	mode           string
	minLat, maxLat int64 // ms
	avgLat         float64
	received, sent int64
	connections    int // on every client port
	outstanding    int
	zxid           int64
	nodes          int
	leads          bool                 // a cluster's leader: it has proposal sizes and learners
	proposals      quorum.ProposalSizes // when it leads
	// responses are the last, smallest and largest reply to a client.
	lastResponse, minResponse, maxResponse int64
	uptime                                 int64 // ms
	authFailed                             int64
}

func (s *Server) statFacts() statFacts {
	f := statFacts{version: fullVersion(), readOnly: s.isReadOnly(), mode: s.mode(),
		received: s.stats.received.Load(), sent: s.stats.sent.Load(), zxid: s.node.FSM.LastZxid(),
		uptime: time.Since(s.start).Milliseconds(), authFailed: s.stats.authFailed.Load()}
	f.minLat, f.avgLat, f.maxLat = s.stats.latency()
	f.lastResponse, f.minResponse, f.maxResponse = s.stats.responses.sizes()
	conns := s.connList()
	f.connections = len(conns)
	for _, c := range conns {
		f.outstanding += int(c.outstanding())
	}
	s.node.FSM.Read(func(t *datatree.Tree, _ *session.Table) { f.nodes = t.NodeCount() })
	if f.leads = s.node.IsLeader() && s.node.IsClustered(); f.leads {
		f.proposals = s.node.ProposalSizes()
	}
	return f
}

// fullVersion is the version as ZooKeeper names its own: srvr, mntr and envi print it.
func fullVersion() string { return Version + ", built on " + buildDate }

// dirFacts are the data and transaction log directories (absolute) and the bytes their
// files hold: dirs, conf and the AdminServer's stats show them.
type dirFacts struct {
	dataDir, logDir   string
	dataSize, logSize int64
}

func (s *Server) dirFacts() dirFacts {
	var f dirFacts
	f.dataDir, _ = filepath.Abs(s.cfg.DataDir)
	f.logDir = f.dataDir
	if s.cfg.DataLogDir != "" {
		f.logDir, _ = filepath.Abs(s.cfg.DataLogDir)
	}
	f.dataSize, f.logSize = dirSize(f.dataDir), dirSize(f.logDir)
	return f
}

func dirSize(dir string) int64 {
	var n int64
	filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			n += fi.Size()
		}
		return nil
	})
	return n
}

// confFacts are the configuration conf prints and the AdminServer's configuration shows.
type confFacts struct {
	clientPort, securePort int // -1 without a secure port
	dirs                   dirFacts
	tickTime               int64 // ms
	maxClientCnxns         int
	minTimeout, maxTimeout int64 // ms
	serverID               int   // 0 for a standalone server (ZooKeeperServer.getServerId)
	quorum                 *quorumConf
}

// quorumConf is what a cluster member's conf adds (QuorumZooKeeperServer.dumpConf).
type quorumConf struct {
	initLimit, syncLimit     int
	electionPort, quorumPort string
	peerType                 int // 1 for an observer
	// showsMembership is false on a read-only member, whose ReadOnlyZooKeeperServer
	// shows no membership.
	showsMembership bool
	membership      string
}

func (s *Server) confFacts() confFacts {
	f := confFacts{clientPort: s.cfg.ClientPort, securePort: s.securePort(), dirs: s.dirFacts(),
		tickTime: s.cfg.TickTime.Milliseconds(), maxClientCnxns: s.cfg.MaxClientCnxns,
		minTimeout: s.cfg.MinTimeout().Milliseconds(), maxTimeout: s.cfg.MaxTimeout().Milliseconds()}
	if !s.node.IsClustered() {
		return f
	}
	f.serverID = s.cfg.ServerID
	// By the membership; a member a reconfig removed is not in it, and shows its
	// configured addresses, as a ZooKeeper server's conf does.
	self, _ := s.node.Peer(strconv.Itoa(s.cfg.ServerID))
	q := &quorumConf{initLimit: s.cfg.InitLimit, syncLimit: s.cfg.SyncLimit}
	_, q.electionPort, _ = net.SplitHostPort(self.RaftAddr)
	_, q.quorumPort, _ = net.SplitHostPort(self.PeerAddr)
	if self.Observer {
		q.peerType = 1
	}
	if q.showsMembership = !s.isReadOnly(); q.showsMembership {
		q.membership = s.membershipShown()
	}
	f.quorum = q
	return f
}

// membershipShown is the membership as a read of /zookeeper/config shows it
// (configShown), or the configured one before a leader has written it.
func (s *Server) membershipShown() string {
	var data []byte
	var st jute.Stat
	s.node.FSM.Read(func(t *datatree.Tree, _ *session.Table) { data, st, _ = t.Get(datatree.ConfigPath) })
	if len(data) == 0 {
		return quorum.Membership{Peers: s.members()}.String()
	}
	data, _ = configShown(s.cfg.ReconfigEnabled, data, st)
	return string(data)
}

// connFacts are one client connection's facts: cons and stat print them, dump its
// address and session, the AdminServer's connections and stats show them.
type connFacts struct {
	addr    string // as Java prints it (javaSocketAddress)
	secure  bool   // on the secure client port
	queued  int64
	recv    int64
	sent    int64
	sid     int64 // 0 before the handshake (a four-letter word's own connection, for one)
	started time.Time
	timeout int32 // ms
	figures connFigures
}

// connList is the client connections in session order.
func (s *Server) connList() []*conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].sessionID() < out[j].sessionID() })
	return out
}

// connFacts lists the connections in session order.
func (s *Server) connFacts() []connFacts {
	var out []connFacts
	for _, c := range s.connList() {
		out = append(out, connFacts{addr: javaSocketAddress(c.nc.RemoteAddr()), secure: c.secure, queued: c.outstanding(),
			recv: c.recv.Load(), sent: c.sent.Load(), sid: c.sessionID(), started: c.started,
			timeout: c.timeout, figures: c.stats.figures()})
	}
	return out
}

// sessionPaths are paths listed under one session: its watched paths (wchc, watches) or
// its ephemeral nodes (dump).
type sessionPaths struct {
	sid   int64
	paths []string
}

// pathSessions are the sessions, in order, that watch one path (wchp, watches_by_path).
type pathSessions struct {
	path string
	sids []int64
}

// watchSummary is wchs and the AdminServer's watch_summary.
type watchSummary struct{ connections, paths, watches int }

func (s *Server) watchSummary() watchSummary {
	var w watchSummary
	w.connections, w.paths, w.watches = s.node.FSM.Watches.Summary()
	return w
}

// watchesBySession lists, in session order, the connections that hold data watches and
// their paths.
func (s *Server) watchesBySession() []sessionPaths {
	var out []sessionPaths
	for _, c := range s.connList() {
		if paths := s.node.FSM.Watches.PathsOf(c); len(paths) > 0 {
			out = append(out, sessionPaths{c.sessionID(), paths})
		}
	}
	return out
}

// watchesByPath lists, in path order, the watched paths and the sessions watching each.
func (s *Server) watchesByPath() []pathSessions {
	reg := s.node.FSM.Watches
	var out []pathSessions
	for _, p := range reg.WatchedPaths() {
		ids := []int64{}
		for _, w := range reg.Watchers(p) {
			if c, ok := w.(*conn); ok {
				ids = append(ids, c.sessionID())
			}
		}
		sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
		out = append(out, pathSessions{p, ids})
	}
	return out
}

// dumpFacts are dump's and the AdminServer's dump: the sessions (zkraft keeps expiry
// deadlines on the leader's tracker, not per server, so they are one set with their
// timeouts), the ephemeral nodes of each session in session order, and the connections.
type dumpFacts struct {
	sessions   []session.Session
	buckets    []session.Bucket // the leader's (or a standalone server's) deadlines
	tracks     bool             // buckets are this server's: it leads
	ephemerals []sessionPaths
	conns      []connFacts
}

func (s *Server) dumpFacts() dumpFacts {
	var f dumpFacts
	var eph map[int64][]string
	s.node.FSM.Read(func(t *datatree.Tree, st *session.Table) {
		eph = t.EphemeralSessions()
		f.sessions = st.All()
	})
	for id, paths := range eph {
		f.ephemerals = append(f.ephemerals, sessionPaths{id, paths})
	}
	sort.Slice(f.ephemerals, func(i, j int) bool { return f.ephemerals[i].sid < f.ephemerals[j].sid })
	f.buckets, f.tracks = s.node.SessionBuckets()
	f.conns = s.connFacts()
	return f
}

// environment is envi's list, as ZooKeeper's Environment.list: envi prints it as
// key=value lines, the AdminServer's environment as JSON strings.
func environment() [][2]string {
	host, _ := os.Hostname()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	mb := func(n uint64) string { return strconv.FormatUint(n>>20, 10) + "MB" }
	env := [][2]string{{"zookeeper.version", fullVersion()}, {"host.name", host}, {"go.version", runtime.Version()}}
	env = append(env, processFacts()...)
	return append(env, [][2]string{
		{"os.memory.free", mb(ms.HeapIdle)},
		{"os.memory.max", mb(ms.Sys)},
		{"os.memory.total", mb(ms.HeapSys)},
	}...)
}

// metric is one of mntr's values, named as ZooKeeper names it (without zk_).
type metric struct {
	name  string
	value any
}

// monitor is what mntr reports, in its order; the AdminServer's monitor reports the same
// values, and /metrics serves them too (ZooKeeper's summaries and counters as such).
func (s *Server) monitor() []metric { return append(s.monitorGauges(), s.metrics.metrics()...) }

// monitorGauges are mntr's values but those of serverMetrics.
func (s *Server) monitorGauges() []metric {
	st := s.statFacts()
	watches := s.node.FSM.Watches.Count()
	var ephemerals, sessions int
	var dataSize int64
	s.node.FSM.Read(func(t *datatree.Tree, table *session.Table) {
		sessions = table.Len()
		for _, paths := range t.EphemeralSessions() {
			ephemerals += len(paths)
		}
		dataSize = t.ApproximateDataSize()
	})
	var out []metric
	kv := func(k string, v any) { out = append(out, metric{k, v}) }
	kv("version", st.version)
	kv("server_state", st.mode)
	if s.node.IsClustered() && !st.readOnly {
		// A read-only server is no quorum server: ZooKeeper's has neither peer_state nor
		// quorum_size (QuorumZooKeeperServer's gauge).
		kv("peer_state", peerState[st.mode])
		kv("quorum_size", s.quorumSize())
	}
	if st.leads {
		followers, nonVoting, observers := s.node.Learners()
		kv("learners", followers+observers)
		kv("synced_followers", followers)
		kv("synced_non_voting_followers", nonVoting)
		kv("synced_observers", observers)
		kv("pending_syncs", 0)
		kv("leader_uptime", s.node.LeaderUptime())
		kv("last_proposal_size", st.proposals.Last)
		kv("max_proposal_size", st.proposals.Max)
		kv("min_proposal_size", st.proposals.Min)
	}
	kv("ephemerals_count", ephemerals)
	kv("approximate_data_size", dataSize)
	kv("znode_count", st.nodes)
	kv("watch_count", watches)
	kv("outstanding_requests", st.outstanding)
	kv("num_alive_connections", st.connections)
	kv("packets_received", st.received)
	kv("packets_sent", st.sent)
	kv("avg_latency", st.avgLat)
	kv("max_latency", st.maxLat)
	kv("min_latency", st.minLat)
	kv("uptime", st.uptime)
	kv("global_sessions", sessions)
	kv("local_sessions", s.localCount())
	kv("auth_failed_count", st.authFailed)
	kv("non_mtls_remote_conn_count", s.guard.nonMTLSRemote.Load())
	kv("non_mtls_local_conn_count", s.guard.nonMTLSLocal.Load())
	kv("outstanding_tls_handshake", s.guard.handshakes.Load())
	kv("connection_rejected", s.stats.rejected.Load())
	requests, drop, deficit := s.connThrottle.figures()
	kv("connection_request_count", requests)
	kv("connection_drop_probability", drop)
	out = append(out, deficit.metrics("connection_token_deficit", false)...)
	kv("large_requests_rejected", s.large.rejected.Load())
	kv("ensemble_auth_success", s.ensemble.success.Load())
	kv("ensemble_auth_fail", s.ensemble.fail.Load())
	kv("ensemble_auth_skip", s.ensemble.skip.Load())
	kv("request_throttle_wait_count", s.throttle.waits.Load())
	kv("throttled_ops", s.throttle.throttled.Load())
	kv("stale_requests", s.throttle.stale.Load())
	kv("stale_requests_dropped", s.throttle.staleDropped.Load())
	kv("open_file_descriptor_count", openFDs())
	kv("max_file_descriptor_count", maxFDs())
	kv("last_client_response_size", st.lastResponse)
	kv("max_client_response_size", st.maxResponse)
	kv("min_client_response_size", st.minResponse)
	return out
}

// quorumSize is how many members vote.
func (s *Server) quorumSize() int {
	if m, ok := s.node.FSM.Members(); ok {
		return m.Voters()
	}
	n := 0
	for _, p := range s.cfg.Servers {
		if !p.Observer {
			n++
		}
	}
	return n
}

// peerState is ZooKeeper's zk_peer_state of a member that serves.
var peerState = map[string]string{"leader": "leading - broadcast", "follower": "following - broadcast", "observer": "observing - broadcast"}

func openFDs() int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(ents)
}
