package server

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/quorum"
	"github.com/zkraft/zkraft/session"
)

// The AdminServer: ZooKeeper's commands over HTTP as JSON (each answer carries "command"
// and "error", as ZooKeeper's Jetty AdminServer's do), at /commands/<name> or a
// four-letter alias, and probes for orchestrators: /healthz (the process answers) and
// /ready (this server serves: it has a leader and has applied what it learned is
// committed).

// adminCommand answers one command; aliases are ZooKeeper's.
type adminCommand struct {
	names []string                                        // primary first
	run   func(s *Server, args url.Values) map[string]any // args: the query's parameters
}

// noArgs is a command that takes no parameters.
func noArgs(run func(s *Server) map[string]any) func(*Server, url.Values) map[string]any {
	return func(s *Server, _ url.Values) map[string]any { return run(s) }
}

// adminSetTraceMask sets the mask gtmk and stmk report (zkraft traces nothing by it) from
// the traceMask parameter, answering as ZooKeeper's SetTraceMaskCommand without one.
func (s *Server) adminSetTraceMask(args url.Values) map[string]any {
	if !args.Has("traceMask") {
		return map[string]any{"error": "setTraceMask requires long traceMask argument"}
	}
	v := args.Get("traceMask")
	mask, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return map[string]any{"error": "setTraceMask requires long traceMask argument, got " + v}
	}
	s.traceMask.Store(mask)
	return map[string]any{"tracemask": mask}
}

// needsServing: the command answers only while the server serves, as ZooKeeper's do
// but those it registers as not needing its server (CommandBase's serverRequired false):
// environment, zabstate, get_trace_mask, set_trace_mask and system_properties. monitor
// is one of those too, but 3.8 then fails it with a NullPointerException (500); zkraft
// answers it as the others (docs/compatibility.md).
func (c adminCommand) needsServing() bool {
	switch c.names[0] {
	case "environment", "zabstate", "get_trace_mask", "set_trace_mask", "system_properties":
		return false
	}
	return true
}

var adminCommands = []adminCommand{
	{[]string{"ruok"}, noArgs(func(s *Server) map[string]any { return map[string]any{} })},
	{[]string{"stats", "stat"}, noArgs(func(s *Server) map[string]any { return s.adminStats(true) })},
	{[]string{"server_stats", "srvr"}, noArgs(func(s *Server) map[string]any { return s.adminStats(false) })},
	{[]string{"monitor", "mntr"}, noArgs(func(s *Server) map[string]any { return s.adminMonitor() })},
	{[]string{"configuration", "conf", "config"}, noArgs((*Server).adminConf)},
	{[]string{"connections", "cons"}, noArgs(func(s *Server) map[string]any {
		conns := s.connFacts()
		return map[string]any{"connections": adminConns(conns, false, false), "secure_connections": adminConns(conns, true, false)}
	})},
	{[]string{"environment", "envi", "env"}, noArgs((*Server).adminEnvi)},
	{[]string{"is_read_only", "isro"}, noArgs(func(s *Server) map[string]any { return map[string]any{"read_only": s.isReadOnly()} })},
	{[]string{"dump"}, noArgs((*Server).adminDump)},
	{[]string{"watch_summary", "wchs"}, noArgs(func(s *Server) map[string]any {
		w := s.watchSummary()
		return map[string]any{"num_connections": w.connections, "num_paths": w.paths, "num_total_watches": w.watches}
	})},
	{[]string{"watches", "wchc"}, noArgs((*Server).adminWatches)},
	{[]string{"watches_by_path", "wchp"}, noArgs((*Server).adminWatchesByPath)},
	{[]string{"dirs"}, noArgs(func(s *Server) map[string]any {
		f := s.dirFacts()
		return map[string]any{"datadir_size": f.dataSize, "logdir_size": f.logSize}
	})},
	{[]string{"leader", "lead"}, noArgs((*Server).adminLeader)},
	{[]string{"voting_view"}, noArgs((*Server).adminVotingView)},
	{[]string{"observers", "obsr"}, noArgs(func(s *Server) map[string]any {
		_, _, observers := s.node.Learners()
		return map[string]any{"synced_observers": observers, "observers": []any{}}
	})},
	// zkraft keeps no per-observer connection figures (observers lists none): nothing
	// to reset, and ZooKeeper answers this with no keys of its own.
	{[]string{"observer_connection_stat_reset", "orst"}, noArgs(func(s *Server) map[string]any { return map[string]any{} })},
	{[]string{"last_snapshot", "lsnp"}, noArgs((*Server).adminLastSnapshot)},
	{[]string{"initial_configuration", "icfg"}, noArgs(func(s *Server) map[string]any {
		return map[string]any{"initial_configuration": s.cfg.InitialConfiguration}
	})},
	{[]string{"zabstate"}, noArgs((*Server).adminZabState)},
	{[]string{"hash"}, noArgs(func(s *Server) map[string]any {
		var d uint64
		s.node.FSM.Read(func(t *datatree.Tree, _ *session.Table) { d = t.Digest() })
		// ZooKeeper's digest is a Java long: the same bits, signed, so a Java client's
		// parser reads it.
		return map[string]any{"digests": []any{map[string]any{"zxid": s.node.FSM.LastZxid(), "digest": int64(d)}}}
	})},
	{[]string{"get_trace_mask", "gtmk"}, noArgs(func(s *Server) map[string]any {
		return map[string]any{"tracemask": s.traceMask.Load()}
	})},
	{[]string{"set_trace_mask", "stmk"}, (*Server).adminSetTraceMask},
	{[]string{"system_properties", "sysp"}, noArgs((*Server).adminSystemProperties)},
	{[]string{"stat_reset", "srst"}, noArgs(func(s *Server) map[string]any { s.resetStats(); return map[string]any{} })},
	{[]string{"connection_stat_reset", "crst"}, noArgs(func(s *Server) map[string]any { s.resetConnStats(); return map[string]any{} })},
}

func (s *Server) adminHandler() http.Handler {
	byName := map[string]adminCommand{}
	for _, c := range adminCommands {
		for _, n := range c.names {
			if _, ok := byName[n]; !ok {
				byName[n] = c
			}
		}
	}
	// The commands are under admin.commandURL, as JettyAdminServer maps its servlet.
	base := "/" + strings.Trim(s.cfg.AdminCommandURL, "/")
	if base == "/" {
		base = "/commands"
	}
	// Routed by prefix, not by a ServeMux, which would redirect a path it cleans: Jetty
	// hands "/commands//stat" to the servlet, which answers Unknown command "/stat".
	commands := jettyMethods(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(r.URL.Path, base)
		if name == "" || name == "/" {
			// As CommandServlet's printCommandLinks: no Content-Type, sorted by name.
			w.Header()["Content-Type"] = nil
			names := []string{"restore", "snapshot"}
			for _, c := range adminCommands {
				names = append(names, c.names[0])
			}
			slices.Sort(names)
			for _, n := range names {
				fmt.Fprintf(w, "<a href=\"%s/%s\">%s</a>\n<br/>\n", base, n, n)
			}
			return
		}
		name = name[1:]
		if name == "snapshot" || name == "snap" {
			s.serveAdminSnapshot(w, r)
			return
		}
		if name == "restore" || name == "rest" {
			// A POST command (admin_restore.go): POST does not come here.
			w.Header().Set("Allow", http.MethodPost)
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		cmd, ok := byName[name]
		var out map[string]any
		ownError := false
		switch {
		// Both answers are 200 and name the command as asked (Commands.runCommand; 3.9
		// keeps the 200s "to keep the current behavior of existing commands").
		case !ok:
			out = map[string]any{"command": name, "error": "Unknown command: " + name}
		case !s.serving() && cmd.needsServing():
			out = map[string]any{"command": name, "error": notServing}
		default:
			out = cmd.run(s, r.URL.Query())
			out["command"] = cmd.names[0]
			if _, ownError = out["error"]; !ownError {
				out["error"] = nil
			}
		}
		writeAdminJSON(w, jacksonJSON(out, ownError))
	}))
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("/ready", func(w http.ResponseWriter, r *http.Request) {
		if why := s.notReady(); why != "" {
			http.Error(w, why, http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ready")
	})
	// restore is the one command served on POST (3.9's PostCommand); POST to any other
	// path is refused as 3.8's servlets refuse it.
	restore := map[string]bool{base + "/restore": true, base + "/rest": true}
	others := jettyMethods(mux)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPost && restore[r.URL.Path]:
			s.serveAdminRestore(w, r)
		case r.Method == http.MethodOptions && restore[r.URL.Path]:
			// What 3.9's servlet, which serves GET and POST, lists.
			w.Header().Set("Allow", "GET, HEAD, POST, TRACE, OPTIONS")
			w.WriteHeader(http.StatusOK)
		case r.URL.Path == base || strings.HasPrefix(r.URL.Path, base+"/"):
			commands.ServeHTTP(w, r)
		default:
			others.ServeHTTP(w, r)
		}
	})
}

// serving reports whether the server answers clients: standalone, a member that knows a
// leader and is in step with its term (a leader once it is established: its barrier
// applied, so its mntr counts the membership it wrote first; a follower once it holds an
// entry of the term), or a read-only one. Only the four-letter words and the
// AdminServer (its /ready too) ask; handshakes and the quorum-loss timer keep
// HasLeader, so a leader whose barrier applies a long backlog keeps its clients.
func (s *Server) serving() bool {
	return !s.node.IsClustered() || s.isReadOnly() || s.inQuorum()
}

// inQuorum reports whether this cluster member serves as part of a quorum: it knows a
// leader it reaches and is in step with its term (Node.Synced: a leader established, a
// follower holding an entry of the term). A ZooKeeper leader hands its AdminServer its
// QuorumZooKeeperServer only once a quorum acknowledged it, a learner once its leader's
// sync is done. serving and zabstate both ask this, so srvr and zabstate never disagree.
func (s *Server) inQuorum() bool {
	return s.node.IsClustered() && s.node.HasLeader() && s.node.Synced()
}

// notReady says why this server should not get traffic yet, or "" when it should: it
// is in a quorum, and it has applied everything it knows to be committed (within a few
// entries). A read-only member serves only read-only clients: not ready.
func (s *Server) notReady() string {
	switch {
	case s.isReadOnly():
		return "no leader: not in a quorum (serving read-only clients)"
	case s.node.IsClustered() && s.node.IsLeader() && !s.node.Established():
		return "leading, not yet established: entries of earlier terms not all applied"
	case s.node.IsClustered() && s.node.HasLeader() && !s.node.Synced():
		return "following, not yet synced with the leader: no entry of its term yet"
	case !s.serving():
		return "no leader: not in a quorum"
	case s.leaderRefusesClients():
		return "leading with leaderServes=no: takes no clients"
	}
	st := s.node.Stats()
	commit, _ := strconv.ParseUint(st["commit_index"], 10, 64)
	applied, _ := strconv.ParseUint(st["applied_index"], 10, 64)
	if commit > applied+100 {
		return fmt.Sprintf("catching up: applied %d of %d", applied, commit)
	}
	return ""
}

func (s *Server) adminStats(withConns bool) map[string]any {
	f, dirs := s.statFacts(), s.dirFacts()
	buffers := map[string]any{"last_buffer_size": f.lastResponse, "min_buffer_size": f.minResponse, "max_buffer_size": f.maxResponse}
	out := map[string]any{
		"version":   f.version,
		"read_only": f.readOnly,
		"server_stats": map[string]any{
			"packets_sent": f.sent, "packets_received": f.received,
			"fsync_threshold_exceed_count": s.stats.fsyncExceeded.Load(), "client_response_stats": buffers,
			"uptime": f.uptime, "data_dir_size": dirs.dataSize,
			"log_dir_size": dirs.logSize, "provider_null": false, "server_state": f.mode,
			"last_processed_zxid": f.zxid, "outstanding_requests": f.outstanding,
			"avg_latency": f.avgLat, "max_latency": f.maxLat, "min_latency": f.minLat,
			"num_alive_client_connections": f.connections, "auth_failed_count": f.authFailed,
			"non_mtlsremote_conn_count": s.guard.nonMTLSRemote.Load(), "non_mtlslocal_conn_count": s.guard.nonMTLSLocal.Load(),
		},
		"client_response": buffers,
		"node_count":      f.nodes,
	}
	if f.leads {
		out["proposal_stats"] = map[string]any{"last_buffer_size": f.proposals.Last, "min_buffer_size": f.proposals.Min, "max_buffer_size": f.proposals.Max}
	}
	if withConns {
		conns := s.connFacts()
		out["connections"] = adminConns(conns, false, true)
		out["secure_connections"] = adminConns(conns, true, true)
	}
	return out
}

// adminMonitor is mntr as JSON: the same keys without the zk_ prefix.
func (s *Server) adminMonitor() map[string]any {
	out := map[string]any{}
	for _, m := range s.monitor() {
		out[m.name] = m.value
	}
	for _, m := range s.quotaMetrics() {
		out[m.namespace+"_"+m.name] = m.value
	}
	return out
}

func (s *Server) adminConf() map[string]any {
	f := s.confFacts()
	return map[string]any{"client_port": f.clientPort, "data_dir": f.dirs.dataDir, "data_log_dir": f.dirs.logDir,
		"tick_time": f.tickTime, "max_client_cnxns": f.maxClientCnxns,
		"min_session_timeout": f.minTimeout, "max_session_timeout": f.maxTimeout,
		"server_id": f.serverID, "client_port_listen_backlog": -1}
}

// adminConns lists the connections of the client port (secure false) or of the secure
// client port, as ZooKeeper lists each connection factory's apart, each as
// ServerCnxn.getConnectionInfo does: brief (stats) the address, interest ops, queue
// and packet counts; else also the session's figures, its id and the time it was
// established (ms since the epoch) as numbers.
func adminConns(conns []connFacts, secure, brief bool) []any {
	out := []any{}
	for _, c := range conns {
		if c.secure != secure {
			continue
		}
		m := map[string]any{
			"remote_socket_address": c.addr, "interest_ops": 1,
			"outstanding_requests": c.queued, "packets_received": c.recv, "packets_sent": c.sent,
		}
		if !brief {
			f := c.figures
			m["session_id"], m["session_timeout"], m["established"] = c.sid, c.timeout, c.started.UnixMilli()
			m["last_operation"], m["last_cxid"], m["last_zxid"] = f.lastOp, f.lastCxid, f.lastZxid
			m["last_response_time"], m["last_latency"] = f.lastResp, f.lastLat
			m["min_latency"], m["avg_latency"], m["max_latency"] = f.minLat, f.avgLat, f.maxLat
		}
		out = append(out, m)
	}
	return out
}

func (s *Server) adminEnvi() map[string]any {
	out := map[string]any{}
	for _, e := range environment() {
		out[e[0]] = e[1]
	}
	return out
}

func (s *Server) adminDump() map[string]any {
	f := s.dumpFacts()
	// Keyed by deadline on the clock ZooKeeper's ExpiryQueue reads (System.nanoTime in
	// milliseconds); a follower keeps no deadlines and, as LearnerSessionTracker, lists
	// none.
	byExpiry := map[string]any{}
	for _, bk := range f.buckets {
		ids := []any{}
		for _, id := range bk.IDs {
			ids = append(ids, id)
		}
		byExpiry[strconv.FormatInt(elapsedMillis(bk.At), 10)] = ids
	}
	ephemerals := map[string]any{}
	for _, e := range f.ephemerals {
		ephemerals[strconv.FormatInt(e.sid, 10)] = e.paths
	}
	return map[string]any{"expiry_time_to_session_ids": byExpiry, "session_id_to_ephemeral_paths": ephemerals}
}

func (s *Server) adminWatches() map[string]any {
	out := map[string]any{}
	for _, w := range s.watchesBySession() {
		out[strconv.FormatInt(w.sid, 10)] = w.paths
	}
	return map[string]any{"session_id_to_watched_paths": out}
}

func (s *Server) adminWatchesByPath() map[string]any {
	out := map[string]any{}
	for _, w := range s.watchesByPath() {
		out[w.path] = w.sids
	}
	return map[string]any{"path_to_session_ids": out}
}

func (s *Server) adminLeader() map[string]any {
	if !s.node.IsClustered() {
		return map[string]any{"error": "server is not initialized"}
	}
	out := map[string]any{"is_leader": s.node.IsLeader()}
	if id, ok := s.node.LeaderID(); ok {
		out["leader_id"], _ = strconv.Atoi(id)
		if p, ok := s.node.Peer(id); ok {
			out["leader_ip"], _, _ = net.SplitHostPort(p.PeerAddr)
		}
	}
	return out
}

func (s *Server) adminVotingView() map[string]any {
	view := map[string]any{}
	for _, p := range s.members() {
		if p.Observer {
			continue
		}
		view[p.ID] = map[string]any{"server_addresses": []string{p.PeerAddr}, "election_addresses": []string{p.RaftAddr},
			"client_address": s.clientAddress(p), "learner_type": "participant"}
	}
	return map[string]any{"current_config": view}
}

// clientAddress is member p's client address as ZooKeeper's AdminServer shows it: the
// one its server line names, else, for this server, its own (clientPortAddress, every
// address when unset, and clientPort), as a ZooKeeper member fills in its own
// QuorumServer; "" for another member whose line names none.
func (s *Server) clientAddress(p quorum.Peer) string {
	if p.ClientAddr != "" || p.ID != strconv.Itoa(s.cfg.ServerID) {
		return p.ClientAddr
	}
	host := s.cfg.ClientPortAddress
	if host == "" {
		host = "0.0.0.0"
	}
	return net.JoinHostPort(host, strconv.Itoa(s.cfg.ClientPort))
}

// members is the cluster's membership (none for a standalone server).
func (s *Server) members() []quorum.Peer {
	if m, ok := s.node.FSM.Members(); ok {
		return m.Peers
	}
	return s.cfg.Servers
}

// addressInfo is how ZooKeeper's AdminServer shows a MultipleAddresses.
func addressInfo(addr string) map[string]any {
	host, port, _ := net.SplitHostPort(addr)
	n, _ := strconv.Atoi(port)
	return map[string]any{"empty": addr == "", "all_addresses": []string{addr}, "all_reachable_addresses": []string{addr},
		"one": addr, "reachable_address": addr, "wildcard_addresses": []string{net.JoinHostPort("0.0.0.0", port)},
		"all_ports": []int{n}, "all_host_strings": []string{host}, "all_reachable_addresses_or_all": []string{addr},
		"reachable_or_one": addr}
}

// adminZabState is ZooKeeper's zabstate; zkraft's term stands for the Zab epoch. A
// server that is no serving quorum member (standalone, read-only, without a leader, a
// leader not yet established, a follower not yet synced) answers as ZooKeeper's does without a
// QuorumZooKeeperServer: not voting, no state.
func (s *Server) adminZabState() map[string]any {
	if !s.inQuorum() {
		return map[string]any{"voting": false, "zabstate": ""}
	}
	// ZooKeeper's voting: a participant of the membership (not an observer, nor a
	// member a reconfig removed, which follows as a non-voter).
	out := map[string]any{"voting": s.node.Mode() != "observer" && s.node.InMembership(), "zabstate": "broadcast"}
	term, _ := strconv.ParseInt(s.node.Stats()["term"], 10, 64)
	out["myid"] = s.cfg.ServerID
	out["is_leader"] = s.node.IsLeader()
	out["last_zxid"] = fmt.Sprintf("0x%x", s.node.FSM.LastZxid())
	out["zab_epoch"] = term
	out["zab_counter"] = s.node.FSM.LastZxid()
	out["client_address"] = ""
	if p, ok := s.node.Peer(strconv.Itoa(s.cfg.ServerID)); ok {
		out["quorum_address"] = addressInfo(p.PeerAddr)
		out["election_address"] = addressInfo(p.RaftAddr)
		out["client_address"] = s.clientAddress(p)
	}
	return out
}

// adminLastSnapshot is ZooKeeper's last_snapshot: the newest snapshot's zxid and when
// it was written (its file's modification time, in seconds). ZooKeeper takes one at
// every start; zkraft takes none, so before its first it answers zxid 0 and its start.
func (s *Server) adminLastSnapshot() map[string]any {
	zxid, written, ok := s.node.LastSnapshot()
	if !ok {
		zxid, written = 0, s.start
	}
	return map[string]any{"zxid": fmt.Sprintf("%x", zxid), "timestamp": written.Unix()}
}

// adminReadHeaderTimeout bounds the wait for a request's headers on the admin and
// metrics listeners (and for an HTTPS connection's first byte and handshake), unless
// the idle timeout is shorter.
const adminReadHeaderTimeout = 5 * time.Second

// adminIdleTimeout is Jetty's idle timeout as ZooKeeper sets it (admin.idleTimeout).
const adminIdleTimeout = 30 * time.Second

// adminTimeouts are the idle timeout of the AdminServer's connections and the bound on
// a request's headers, the idle timeout when it is shorter.
func (c *Config) adminTimeouts() (idle, header time.Duration) {
	idle = cmp.Or(c.AdminIdleTimeout, adminIdleTimeout)
	return idle, min(idle, adminReadHeaderTimeout)
}

// startAdmin starts the admin and metrics listeners the config asks for; one that
// cannot start does not keep the other from starting.
func (s *Server) startAdmin() error {
	// serve listens at addr, through wrap when it is not nil (it closes ln on error).
	idle, header := s.cfg.adminTimeouts()
	serve := func(addr string, h http.Handler, wrap func(net.Listener) (net.Listener, error)) error {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return err
		}
		if wrap != nil {
			if ln, err = wrap(ln); err != nil {
				return err
			}
		}
		// http.Server's own complaints (a failed TLS handshake, say) are debug lines of
		// the server's log, as Jetty logs them at DEBUG.
		hs := &http.Server{Handler: h, ReadHeaderTimeout: header, IdleTimeout: idle,
			ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelDebug)}
		go func() {
			if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				s.log.Warn("http listener stopped", "addr", addr, "err", err)
			}
		}()
		s.https = append(s.https, hs)
		return nil
	}
	var errs []error
	if s.cfg.AdminEnabled {
		addr := net.JoinHostPort(s.cfg.AdminHost, strconv.Itoa(s.cfg.AdminPort))
		if err := serve(addr, withSTS(s.adminHandler()), s.adminListener); err != nil {
			errs = append(errs, fmt.Errorf("admin server on %s: %w", addr, err))
		} else {
			s.log.Info("admin server listening", "addr", addr, "scheme", s.cfg.AdminTLS.scheme())
		}
	}
	if s.cfg.MetricsPort != 0 {
		addr := net.JoinHostPort(s.cfg.MetricsHost, strconv.Itoa(s.cfg.MetricsPort))
		mux := http.NewServeMux()
		mux.HandleFunc("/metrics", s.writeMetrics)
		if s.cfg.DebugGCEndpoint {
			mux.HandleFunc("/debug/gc", serveDebugGC)
		}
		if err := serve(addr, jettyMethods(mux, http.MethodPost), nil); err != nil {
			errs = append(errs, fmt.Errorf("metrics on %s: %w", addr, err))
		}
	}
	return errors.Join(errs...)
}
