package server

import (
	"fmt"
	"time"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/session"
)

// Read-only mode (readonlymode.enabled), as ZooKeeper 3.8's ReadOnlyZooKeeperServer with
// local sessions (the configuration its read-only mode needs since ZOOKEEPER-3863): a
// member that has had no leader for readOnlyDelay serves the clients that ask for a
// read-only session from its own state.
//
//   - Only a ConnectRequest with readOnly=true gets a session; any other connection is
//     closed without an answer (ZooKeeper's NOT_READ_ONLY_CLIENT), as is a client that has
//     seen a newer zxid, or one that reattaches a replicated session owning ephemerals
//     (what ZooKeeper's local sessions become when they create one, a global session:
//     RENEW_GLOBAL_SESSION_IN_RO_MODE). A replicated session owning none is answered as
//     expired, as ZooKeeper answers its local sessions, the only kind it has without
//     localSessionsUpgradingEnabled: a read-only client that was connected before the
//     cut then opens a read-only session instead of knocking forever.
//   - A new session is local: an id from this member's generator and a password, kept in
//     this server's memory only (nothing can be proposed). The client may reattach it here
//     with its password while read-only mode lasts; anywhere else it is unknown, so expired.
//   - Reads and watches are served as usual; every write, sync included, is answered
//     NotReadOnly (ReadOnlyRequestProcessor); closeSession ends the local session.
//   - When a leader is known again, read-only mode ends and every read-only connection is
//     closed, as ZooKeeper shuts its read-only server down when the election ends: the
//     clients reconnect and, finding a read-write member, get a read-write session.

// readOnlyDelay is how long a member goes without a leader before it serves read-only
// clients: ZooKeeper starts its read-only server max(2 s, tickTime) after the peer starts
// looking for a leader (QuorumPeer.run), if it is still looking.
func readOnlyDelay(tick time.Duration) time.Duration { return max(2*time.Second, tick) }

// localSession is a read-only client's session: it lives in this server's memory only.
type localSession struct {
	password []byte
	timeout  int32     // negotiated, ms
	detached time.Time // when its connection closed; zero while one is attached
}

// expired reports whether the session can no longer be reattached at now: its client
// has been away for longer than its timeout.
func (l *localSession) expired(now time.Time) bool {
	return !l.detached.IsZero() && now.Sub(l.detached) > time.Duration(l.timeout)*time.Millisecond
}

// isReadOnly reports whether the server serves read-only clients now.
func (s *Server) isReadOnly() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.local != nil
}

// enterReadOnly starts serving read-only clients. The connections still open belong to
// read-write sessions, which cannot be served without a leader, so they are closed first;
// a handshake racing with the switch sees no leader and no read-only mode yet and is
// refused.
func (s *Server) enterReadOnly() {
	s.dropClients(closedReadOnlyChange)
	s.mu.Lock()
	s.local = map[int64]*localSession{}
	s.mu.Unlock()
	s.log.Warn("no leader: serving read-only clients", "zxid", fmt.Sprintf("0x%x", s.node.FSM.LastZxid()))
}

// leaveReadOnly ends read-only mode once a leader is known: the local sessions are
// forgotten and their connections closed. A read-only handshake that has not attached
// its session yet is refused by attachLocal.
func (s *Server) leaveReadOnly() {
	s.mu.Lock()
	s.local = nil
	var conns []*conn
	for c := range s.conns {
		if c.readOnly {
			conns = append(conns, c)
		}
	}
	s.mu.Unlock()
	s.log.Info("leader found: read-only mode ends, dropping read-only clients", "count", len(conns))
	for _, c := range conns {
		c.close(closedReadOnlyChange)
	}
}

// expireLocal forgets the local sessions whose clients have been away longer than their
// timeout, as ZooKeeper's local session tracker expires them.
func (s *Server) expireLocal(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, l := range s.local {
		if l.expired(now) {
			delete(s.local, id)
			s.metrics.staleSessionsExpired.Add(1) // ZooKeeper's local session tracker counts it
		}
	}
}

// localValid reports whether id is a local session here that pw opens.
func (s *Server) localValid(id int64, pw []byte) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.local[id]
	return ok && !l.expired(time.Now()) && session.Session{Password: l.password}.CheckPassword(pw)
}

// attachLocal makes c the read-only connection of local session id, closing one it
// replaces; false if read-only mode has ended meanwhile, or c was closed (see attach).
func (s *Server) attachLocal(c *conn, id int64, pw []byte, timeout int32) bool {
	s.mu.Lock()
	if _, open := s.conns[c]; s.local == nil || !open {
		s.mu.Unlock()
		return false
	}
	c.readOnly = true
	old := s.swap(id, c)
	s.local[id] = &localSession{password: pw, timeout: timeout}
	s.mu.Unlock()
	closeReplaced(old)
	return true
}

// detachLocal records that a local session's connection closed (s.mu held).
func (s *Server) detachLocal(id int64) {
	if l, ok := s.local[id]; ok {
		l.detached = time.Now()
	}
}

// forgetLocal ends a local session (its client closed it).
func (s *Server) forgetLocal(id int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.local, id)
}

// localCount is how many local sessions there are (mntr's local_sessions).
func (s *Server) localCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.local)
}

// mode is ZooKeeper's name for what this server is now: its node's role, or read-only.
func (s *Server) mode() string {
	if s.isReadOnly() {
		return "read-only"
	}
	return s.node.Mode()
}

// readOnlyHandshake answers a ConnectRequest while the server is read-only; false closes
// the connection.
func (c *conn) readOnlyHandshake(req *jute.Connect, start time.Time) bool {
	client := c.nc.RemoteAddr().String()
	if !req.ReadOnly {
		c.srv.log.Debug("refusing session: not a read-only client, and this member is read-only", "client", client)
		return false
	}
	if last := c.srv.node.FSM.LastZxid(); req.LastZxidSeen > last {
		// Nothing will be applied here until a leader is back: refuse at once.
		c.srv.log.Info("refusing read-only session: client has seen a newer zxid", "client", client,
			"clientZxid", fmt.Sprintf("0x%x", req.LastZxidSeen), "ourZxid", fmt.Sprintf("0x%x", last))
		return false
	}
	resp := jute.Connected{ReadOnly: true, HasReadOnly: true}
	resp.TimeOut = c.negotiateTimeout(req.TimeOut)
	if req.SessionId == 0 {
		resp.SessionId, resp.Passwd = c.srv.newSessionID(), newPassword()
		// A local session's createSession passes ZooKeeper's FinalRequestProcessor too.
		c.srv.observe(&pending{op: jute.OpCreateSession, start: start})
	} else {
		c.srv.metrics.connectionRevalidates.Add(1)
		holds := false
		c.srv.node.FSM.Read(func(tr *datatree.Tree, t *session.Table) {
			_, global := t.Get(req.SessionId)
			holds = global && len(tr.Ephemerals(req.SessionId, "")) > 0
		})
		if holds {
			c.srv.log.Info("refusing to reattach a global session in read-only mode", "client", client,
				"session", fmt.Sprintf("0x%x", req.SessionId))
			return false
		}
		if !c.srv.localValid(req.SessionId, req.Passwd) {
			c.answerExpired(resp)
			return false
		}
		resp.SessionId, resp.Passwd = req.SessionId, req.Passwd
	}
	c.bind(&resp)
	if !c.srv.attachLocal(c, resp.SessionId, resp.Passwd, resp.TimeOut) {
		return false
	}
	f := jute.AppendFrame(nil, &resp)
	c.out.push(&f)
	return true
}

// refuseWrite answers, on a read-only session, what ZooKeeper's ReadOnlyRequestProcessor
// stops before anything else looks at it: every write, sync included, gets NotReadOnly.
// closeSession is let through: it ends the local session, and nothing is proposed.
func (c *conn) refuseWrite(p *pending) {
	switch {
	case p.op == jute.OpCloseSession:
		c.srv.forgetLocal(c.sessionID())
	case jute.IsWrite(p.op) || p.op == jute.OpSync:
		p.err = jute.ErrNotReadOnly
	}
}
