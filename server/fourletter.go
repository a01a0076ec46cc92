package server

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/quorum"
	"github.com/zkraft/zkraft/session"
)

// fourLetter maps ZooKeeper's four-letter words to their handlers.
var fourLetter = map[string]func(s *Server, b *strings.Builder){
	"ruok": func(s *Server, b *strings.Builder) { b.WriteString("imok") },
	"srvr": func(s *Server, b *strings.Builder) { s.writeStat(b, false, false) },
	// stat and cons list the connections of the port they arrived on, as each of
	// ZooKeeper's connection factories lists its own: maybeFourLetter answers them.
	"stat": nil,
	"cons": nil,
	"conf": (*Server).writeConf,
	"envi": (*Server).writeEnvi,
	"mntr": (*Server).writeMntr,
	"wchs": (*Server).writeWchs,
	"wchc": (*Server).writeWchc,
	"wchp": (*Server).writeWchp,
	"dump": (*Server).writeDump,
	"isro": (*Server).writeIsro,
	"dirs": (*Server).writeDirs,
	"crst": func(s *Server, b *strings.Builder) {
		s.resetConnStats()
		b.WriteString("Connection stats reset.\n")
	},
	"srst": func(s *Server, b *strings.Builder) {
		s.resetStats()
		b.WriteString("Server stats reset.\n")
	},
	"gtmk": func(s *Server, b *strings.Builder) { b.WriteString(strconv.FormatInt(s.traceMask.Load(), 10)) },
	// stmk's new mask follows the word as 8 bytes; maybeFourLetter stores it first. zkraft
	// has no request tracing, so the mask is kept only to be reported, as ZooKeeper does.
	"stmk": func(s *Server, b *strings.Builder) { b.WriteString(strconv.FormatInt(s.traceMask.Load(), 10)) },
	// ZooKeeper 3.8 answers hash with nothing unless digest logging has recorded entries.
	"hash": func(s *Server, b *strings.Builder) {},
}

// defaultTraceMask is ZooKeeper's ZooTrace default (gtmk answers 306).
const defaultTraceMask = 306

// needsServing are the words ZooKeeper answers only while its server runs (each
// command's isZKServerRunning check): all but ruok, envi, gtmk, stmk and isro.
var needsServing = map[string]bool{"stat": true, "srvr": true, "cons": true, "dump": true, "wchs": true,
	"wchc": true, "wchp": true, "mntr": true, "conf": true, "dirs": true, "crst": true, "srst": true, "hash": true}

// notServing is the answer of a server that does not serve to a word in needsServing.
const notServing = "This ZooKeeper instance is not currently serving requests"

// maybeFourLetter answers a four-letter word if the connection starts with one; ZooKeeper
// recognizes them in place of the first frame's length.
func (c *conn) maybeFourLetter(br *bufio.Reader) bool {
	head, err := br.Peek(4)
	if err != nil {
		return false
	}
	cmd := string(head)
	h, ok := fourLetter[cmd]
	if !ok {
		return false
	}
	c.recv.Add(1)
	c.srv.stats.received.Add(1)
	allowed := c.srv.cfg.fourLetterAllowed(cmd)
	if cmd == "stmk" && allowed {
		// The whitelist comes first: an stmk it refuses reads no mask and sets none.
		var mask [12]byte
		c.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.ReadFull(br, mask[:]); err != nil {
			return true // no mask: ZooKeeper closes too
		}
		c.srv.traceMask.Store(int64(binary.BigEndian.Uint64(mask[4:])))
	}
	var b strings.Builder
	switch {
	case !allowed:
		fmt.Fprintf(&b, "%s is not executed because it is not in the whitelist.\n", cmd)
	case needsServing[cmd] && !c.srv.serving():
		// A member with no leader (partitioned, removed, still joining) serves nobody,
		// unless it is read-only. ZooKeeper's hash prints it without the newline.
		b.WriteString(notServing)
		if cmd != "hash" {
			b.WriteString("\n")
		}
	case cmd == "stat":
		c.srv.writeStat(&b, true, c.secure)
	case cmd == "cons":
		c.srv.writeCons(&b, c.secure)
	default:
		h(c.srv, &b)
	}
	c.nc.SetWriteDeadline(time.Now().Add(5 * time.Second))
	c.nc.Write([]byte(b.String()))
	packets := fourLetterPackets(b.Len())
	c.sent.Add(packets)
	c.srv.stats.sent.Add(packets)
	return true
}

// fourLetterPackets is how many packets ZooKeeper counts as sent for a four-letter
// word's answer of n bytes: it writes the answer through an 8 KiB buffer
// (NIOServerCnxn's PrintWriter over a BufferedWriter over SendBufferWriter) and counts
// one for every chunk it flushes to the socket, none for an empty answer (hash). mntr's
// zk_packets_sent and srvr's Sent include them; collectd graphs the rate.
func fourLetterPackets(n int) int64 {
	const chunk = 8192
	return int64((n + chunk - 1) / chunk)
}

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

func (s *Server) nodeCount() int {
	n := 0
	s.node.FSM.Read(func(t *datatree.Tree, _ *session.Table) { n = t.NodeCount() })
	return n
}

func (s *Server) outstanding() int {
	n := 0
	for _, c := range s.connList() {
		n += int(c.outstanding())
	}
	return n
}

// writeStat is srvr, or stat with the clients of the client port (secure false) or of
// the secure client port.
func (s *Server) writeStat(b *strings.Builder, clients, secure bool) {
	fmt.Fprintf(b, "Zookeeper version: %s, built on %s\n", Version, buildDate)
	if s.isReadOnly() {
		b.WriteString("READ-ONLY mode; serving only read-only clients\n")
	}
	if clients {
		b.WriteString("Clients:\n")
		for _, c := range s.connList() {
			if c.secure == secure {
				c.describe(b, false)
			}
		}
		b.WriteString("\n")
	}
	min, avg, max := s.stats.latency()
	fmt.Fprintf(b, "Latency min/avg/max: %d/%s/%d\n", min, javaDouble(avg), max)
	fmt.Fprintf(b, "Received: %d\n", s.stats.received.Load())
	fmt.Fprintf(b, "Sent: %d\n", s.stats.sent.Load())
	fmt.Fprintf(b, "Connections: %d\n", len(s.connList()))
	fmt.Fprintf(b, "Outstanding: %d\n", s.outstanding())
	fmt.Fprintf(b, "Zxid: 0x%x\n", s.node.FSM.LastZxid())
	fmt.Fprintf(b, "Mode: %s\n", s.mode())
	fmt.Fprintf(b, "Node count: %d\n", s.nodeCount())
	if s.node.IsLeader() && s.node.IsClustered() {
		sizes := s.node.ProposalSizes()
		fmt.Fprintf(b, "Proposal sizes last/min/max: %d/%d/%d\n", sizes.Last, sizes.Min, sizes.Max)
	}
}

// describe writes one connection as cons (full) or stat (brief) lists it.
func (c *conn) describe(b *strings.Builder, full bool) {
	interest := 1
	if c.sessionID() == 0 {
		interest = 0 // not past the handshake (a four-letter word, for one)
	}
	fmt.Fprintf(b, " /%s[%d](queued=%d,recved=%d,sent=%d", c.nc.RemoteAddr().String(), interest, c.outstanding(), c.recv.Load(), c.sent.Load())
	if sid := c.sessionID(); full && sid != 0 {
		c.stats.describeSession(b, sid, c.started, c.timeout)
	}
	b.WriteString(")\n")
}

// writeIsro answers isro as ZooKeeper does: "ro" from a read-only server, "rw" from one
// that serves, "null" from one that serves nobody (read-only clients look for "rw").
func (s *Server) writeIsro(b *strings.Builder) {
	switch {
	case s.isReadOnly():
		b.WriteString("ro")
	case s.serving():
		b.WriteString("rw")
	default:
		b.WriteString("null")
	}
}

func (s *Server) writeCons(b *strings.Builder, secure bool) {
	for _, c := range s.connList() {
		if c.secure == secure {
			c.describe(b, true)
		}
	}
	b.WriteString("\n")
}

func (s *Server) writeConf(b *strings.Builder) {
	fmt.Fprintf(b, "clientPort=%d\n", s.cfg.ClientPort)
	fmt.Fprintf(b, "secureClientPort=%d\n", s.securePort())
	dir, _ := filepath.Abs(s.cfg.DataDir)
	fmt.Fprintf(b, "dataDir=%s\n", dir)
	fmt.Fprintf(b, "dataDirSize=%d\n", dirSize(s.cfg.DataDir))
	logDir := dir
	if s.cfg.DataLogDir != "" {
		logDir, _ = filepath.Abs(s.cfg.DataLogDir)
	}
	fmt.Fprintf(b, "dataLogDir=%s\n", logDir)
	fmt.Fprintf(b, "dataLogSize=%d\n", dirSize(logDir))
	fmt.Fprintf(b, "tickTime=%d\n", s.cfg.TickTime.Milliseconds())
	fmt.Fprintf(b, "maxClientCnxns=%d\n", s.cfg.MaxClientCnxns)
	fmt.Fprintf(b, "minSessionTimeout=%d\n", s.cfg.MinTimeout().Milliseconds())
	fmt.Fprintf(b, "maxSessionTimeout=%d\n", s.cfg.MaxTimeout().Milliseconds())
	b.WriteString("clientPortListenBacklog=-1\n")
	fmt.Fprintf(b, "serverId=%d\n", s.serverID())
	if !s.node.IsClustered() {
		return
	}
	// A quorum member's (QuorumZooKeeperServer.dumpConf; a read-only one's,
	// ReadOnlyZooKeeperServer's, without the membership).
	fmt.Fprintf(b, "initLimit=%d\nsyncLimit=%d\nelectionAlg=3\n", s.cfg.InitLimit, s.cfg.SyncLimit)
	var self quorum.Peer
	for _, p := range s.members() {
		if p.ID == strconv.Itoa(s.cfg.ServerID) {
			self = p
		}
	}
	_, election, _ := net.SplitHostPort(self.RaftAddr)
	_, peer, _ := net.SplitHostPort(self.PeerAddr)
	peerType := 0
	if self.Observer {
		peerType = 1
	}
	fmt.Fprintf(b, "electionPort=%s\nquorumPort=%s\npeerType=%d\n", election, peer, peerType)
	if !s.isReadOnly() {
		b.WriteString("membership: \n")
		b.WriteString(s.membershipShown())
	}
}

// serverID is the id conf and the AdminServer's configuration show: the myid of a
// cluster member, 0 for a standalone server (ZooKeeperServer.getServerId).
func (s *Server) serverID() int {
	if !s.node.IsClustered() {
		return 0
	}
	return s.cfg.ServerID
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

func (s *Server) writeEnvi(b *strings.Builder) {
	b.WriteString("Environment:\n")
	for _, e := range environment() {
		fmt.Fprintf(b, "%s=%s\n", e[0], e[1])
	}
}

// environment is envi's list, as ZooKeeper's Environment.list: envi prints it as
// key=value lines, the AdminServer's environment as JSON strings.
func environment() [][2]string {
	host, _ := os.Hostname()
	wd, _ := os.Getwd()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	mb := func(n uint64) string { return strconv.FormatUint(n>>20, 10) + "MB" }
	return [][2]string{
		{"zookeeper.version", Version + ", built on " + buildDate},
		{"host.name", host},
		{"go.version", runtime.Version()},
		{"os.name", runtime.GOOS},
		{"os.arch", runtime.GOARCH},
		{"user.dir", wd},
		{"os.memory.free", mb(ms.HeapIdle)},
		{"os.memory.max", mb(ms.Sys)},
		{"os.memory.total", mb(ms.HeapSys)},
	}
}

func (s *Server) writeMntr(b *strings.Builder) {
	for _, m := range s.monitor() {
		v := m.value
		if f, ok := v.(float64); ok {
			v = javaDouble(f)
		}
		fmt.Fprintf(b, "zk_%s\t%v\n", m.name, v)
	}
	// ZooKeeper's metrics provider names a set's values key_name.
	for _, m := range s.quotaMetrics() {
		fmt.Fprintf(b, "zk_%s_%s\t%d\n", m.namespace, m.name, m.value)
	}
}

// metric is one of mntr's values, named as ZooKeeper names it (without zk_).
type metric struct {
	name  string
	value any
}

// monitor is what mntr reports, in its order; the admin server's monitor and the
// Prometheus metrics report the same values.
func (s *Server) monitor() []metric {
	min, avg, max := s.stats.latency()
	watches := s.node.FSM.Watches.Count()
	var nodes, ephemerals, sessions int
	var dataSize int64
	s.node.FSM.Read(func(t *datatree.Tree, st *session.Table) {
		nodes = t.NodeCount()
		sessions = st.Len()
		for _, paths := range t.EphemeralSessions() {
			ephemerals += len(paths)
		}
		dataSize = t.ApproximateDataSize()
	})
	var out []metric
	kv := func(k string, v any) { out = append(out, metric{k, v}) }
	kv("version", Version+", built on "+buildDate)
	mode := s.mode()
	kv("server_state", mode)
	if s.node.IsClustered() && mode != "read-only" {
		// A read-only server is no quorum server: ZooKeeper's has neither peer_state nor
		// quorum_size (QuorumZooKeeperServer's gauge).
		kv("peer_state", peerState[mode])
		kv("quorum_size", s.quorumSize())
	}
	if s.node.IsLeader() && s.node.IsClustered() {
		followers, observers := s.node.Learners()
		kv("learners", followers+observers)
		kv("synced_followers", followers)
		kv("synced_non_voting_followers", 0)
		kv("synced_observers", observers)
		kv("pending_syncs", 0)
		sizes := s.node.ProposalSizes()
		kv("last_proposal_size", sizes.Last)
		kv("max_proposal_size", sizes.Max)
		kv("min_proposal_size", sizes.Min)
	}
	kv("ephemerals_count", ephemerals)
	kv("approximate_data_size", dataSize)
	kv("znode_count", nodes)
	kv("watch_count", watches)
	kv("outstanding_requests", s.outstanding())
	kv("num_alive_connections", len(s.connList()))
	kv("packets_received", s.stats.received.Load())
	kv("packets_sent", s.stats.sent.Load())
	kv("avg_latency", avg)
	kv("max_latency", max)
	kv("min_latency", min)
	kv("uptime", time.Since(s.start).Milliseconds())
	kv("global_sessions", sessions)
	kv("local_sessions", s.localCount())
	kv("auth_failed_count", s.stats.authFailed.Load())
	kv("connection_rejected", s.stats.rejected.Load())
	kv("request_throttle_wait_count", s.throttle.waits.Load())
	kv("throttled_ops", s.throttle.throttled.Load())
	kv("stale_requests", s.throttle.stale.Load())
	kv("stale_requests_dropped", s.throttle.staleDropped.Load())
	kv("open_file_descriptor_count", openFDs())
	kv("max_file_descriptor_count", maxFDs())
	last, least, most := s.stats.responses.sizes()
	kv("last_client_response_size", last)
	kv("max_client_response_size", most)
	kv("min_client_response_size", least)
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

func (s *Server) writeWchs(b *strings.Builder) {
	watchers, paths, watches := s.node.FSM.Watches.Summary()
	fmt.Fprintf(b, "%d connections watching %d paths\nTotal watches:%d\n", watchers, paths, watches)
}

func (s *Server) writeWchc(b *strings.Builder) {
	defer b.WriteString("\n")
	for _, c := range s.connList() {
		paths := s.node.FSM.Watches.PathsOf(c)
		if len(paths) == 0 {
			continue
		}
		fmt.Fprintf(b, "0x%x\n", c.sessionID())
		for _, p := range paths {
			fmt.Fprintf(b, "\t%s\n", p)
		}
	}
}

func (s *Server) writeWchp(b *strings.Builder) {
	defer b.WriteString("\n")
	reg := s.node.FSM.Watches
	for _, p := range reg.WatchedPaths() {
		fmt.Fprintf(b, "%s\n", p)
		var ids []int64
		for _, w := range reg.Watchers(p) {
			if c, ok := w.(*conn); ok {
				ids = append(ids, c.sessionID())
			}
		}
		sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
		for _, id := range ids {
			fmt.Fprintf(b, "\t0x%x\n", id)
		}
	}
}

func (s *Server) writeDump(b *strings.Builder) {
	var eph map[int64][]string
	var sessions []session.Session
	s.node.FSM.Read(func(t *datatree.Tree, st *session.Table) {
		eph = t.EphemeralSessions()
		sessions = st.All()
	})
	b.WriteString("SessionTracker dump:\n")
	// zkraft keeps expiry deadlines on the leader's tracker, not per server; sessions are
	// listed as one set with their timeouts.
	if len(sessions) == 0 {
		b.WriteString("Session Sets (0)/(0):\n")
	} else {
		fmt.Fprintf(b, "Session Sets (1)/(%d):\n", len(sessions))
		b.WriteString("sessions with timeout:\n")
		for _, ss := range sessions {
			fmt.Fprintf(b, "\t0x%x\t%dms\n", ss.ID, ss.Timeout)
		}
	}
	b.WriteString("ephemeral nodes dump:\n")
	fmt.Fprintf(b, "Sessions with Ephemerals (%d):\n", len(eph))
	ids := make([]int64, 0, len(eph))
	for id := range eph {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		fmt.Fprintf(b, "0x%x:\n", id)
		for _, p := range eph[id] {
			fmt.Fprintf(b, "\t%s\n", p)
		}
	}
	b.WriteString("Connections dump:\n")
	conns := s.connList()
	fmt.Fprintf(b, "Connections Sets (1)/(%d):\n", len(conns))
	for _, c := range conns {
		fmt.Fprintf(b, "\tip: /%s sessionId: 0x%x\n", c.nc.RemoteAddr().String(), c.sessionID())
	}
}

func (s *Server) writeDirs(b *strings.Builder) {
	fmt.Fprintf(b, "datadir_size: %d\n", dirSize(s.cfg.DataDir))
	logDir := s.cfg.DataDir
	if s.cfg.DataLogDir != "" {
		logDir = s.cfg.DataLogDir
	}
	fmt.Fprintf(b, "logdir_size: %d\n", dirSize(logDir))
}

// javaDouble prints f as Java's Double.toString does for the values latency takes
// ("0.0", "1.5", "0.3333333333333333").
func javaDouble(f float64) string {
	out := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(out, ".") {
		out += ".0"
	}
	return out
}

func openFDs() int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(ents)
}
