package server

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/quorum"
	"github.com/zkraft/zkraft/session"
)

// handshake reads the ConnectRequest and answers it: a new session is created through
// the log; an existing one is reattached if its password matches. false closes the
// connection (a refused or failed handshake).
func (c *conn) handshake(br *bufio.Reader) bool {
	frame, err := jute.ReadFrame(br, nil, c.srv.cfg.MaxBuffer)
	if err != nil {
		// A probe that connects and closes, or a frame too large: not a refusal.
		if errors.Is(err, os.ErrDeadlineExceeded) {
			// No handshake within nio.sessionlessCnxnTimeout: ZooKeeper's connection
			// expirer closes it and counts it.
			c.srv.metrics.sessionlessExpired.Add(1)
		}
		c.logReadErr(err)
		c.close(readReason(err))
		return false
	}
	if !c.fitsLarge(len(frame)) {
		c.close(closedLargeRequest)
		return false
	}
	c.client.Store(true) // before the leader is asked: a drop from now on closes it
	start := time.Now()
	c.recv.Add(1) // ZooKeeper counts the ConnectRequest among the packets received
	c.srv.stats.received.Add(1)
	c.srv.metrics.bytesReceived.Add(int64(4 + len(frame)))
	var req jute.Connect
	d := jute.NewDecoder(frame)
	req.Decode(d)
	if d.Err != nil {
		c.srv.log.Warn("closing connection: bad connect request", "client", c.nc.RemoteAddr().String(), "err", d.Err)
		return false
	}
	// A member that serves nobody refuses before the connection throttle is asked, as
	// ZooKeeper's client port refuses every frame while it has no server to hand it to.
	if !c.srv.isReadOnly() && !c.srv.node.HasLeader() {
		c.srv.log.Debug("refusing session: this member has no leader", "client", c.nc.RemoteAddr().String())
		return false
	}
	if c.srv.leaderRefusesClients() {
		c.srv.log.Debug("refusing session: this member leads and leaderServes=no", "client", c.nc.RemoteAddr().String())
		return false
	}
	if !c.srv.connThrottle.admit(req.SessionId != 0) {
		// ZooKeeper's ClientCnxnLimitException: counted as a refused connection.
		c.srv.stats.rejected.Add(1)
		c.srv.log.Warn("closing connection: the connection throttle has no token for it", "client", c.nc.RemoteAddr().String(),
			"session", fmt.Sprintf("0x%x", uint64(req.SessionId)))
		c.close(closedConnThrottle)
		return false
	}
	if c.srv.isReadOnly() {
		return c.readOnlyHandshake(&req, start)
	}
	fsm := c.srv.node.FSM
	timeout := c.negotiateTimeout(req.TimeOut)
	if !c.caughtUp(req.LastZxidSeen, timeout) {
		return false
	}
	resp := jute.Connected{HasReadOnly: req.HasReadOnly}
	resp.TimeOut = timeout
	if req.SessionId == 0 {
		id, pw, ok := c.createSession(timeout)
		if !ok {
			return false
		}
		resp.SessionId, resp.Passwd = id, pw
		// ZooKeeper's createSession passes its FinalRequestProcessor (a reattach does not).
		c.stats.answered(jute.OpCreateSession, 0, jute.OK, fsm.LastZxid(), start)
		c.srv.observe(&pending{op: jute.OpCreateSession, start: start})
	} else {
		// ZooKeeper counts every reconnect it takes past the zxid check, whether the
		// session then proves valid or not.
		c.srv.metrics.connectionRevalidates.Add(1)
		var s session.Session
		var found bool
		fsm.Read(func(_ *datatree.Tree, t *session.Table) { s, found = t.Get(req.SessionId) })
		if c.srv.node.IsClustered() && (!found || s.Owner == c.srv.node.ID()) {
			// A session that moves here is moved through the log, which brings this
			// member up to date; any other reattach syncs with the leader first, as a
			// ZooKeeper follower revalidates every session with its leader: this member
			// may lag the leader (just restarted, or back from a pause or a cut, while
			// raft is still sending it what it missed), or not have applied the
			// session's creation yet (a session is only declared expired after that).
			if !c.srv.node.Sync() {
				c.srv.log.Warn("refusing session: this member could not sync with its leader", "client", c.nc.RemoteAddr().String())
				return false
			}
			fsm.Read(func(_ *datatree.Tree, t *session.Table) { s, found = t.Get(req.SessionId) })
		}
		if !found || !s.CheckPassword(req.Passwd) {
			c.answerExpired(resp)
			return false
		}
		if s.Owner != c.srv.node.ID() && !c.moveSession(s.ID) {
			return false
		}
		resp.SessionId, resp.Passwd = s.ID, s.Password
	}
	c.bind(&resp)
	if !c.srv.attach(resp.SessionId, c) {
		return false // closed while the handshake waited (no leader, a snapshot installed)
	}
	if req.SessionId != 0 && !c.sessionLives(req.SessionId) {
		// Its closeSession (an expiry) was applied after the session was looked up and
		// before the connection was attached, so it found no connection to close.
		c.answerExpired(resp)
		return false
	}
	c.srv.node.Touch(resp.SessionId, resp.TimeOut)
	f := jute.AppendFrame(nil, &resp)
	c.out.push(&f)
	return true
}

// negotiateTimeout fits the client's session timeout into the configured bounds.
func (c *conn) negotiateTimeout(asked int32) int32 {
	return session.NegotiateTimeout(asked, int32(c.srv.cfg.MinTimeout().Milliseconds()), int32(c.srv.cfg.MaxTimeout().Milliseconds()))
}

// bind makes the connection its session's, before the server lists it as the session's
// connection (so that closing it can find it there).
func (c *conn) bind(resp *jute.Connected) {
	c.sid.Store(resp.SessionId)
	caller := *c.caller.Load()
	caller.Session = resp.SessionId
	c.caller.Store(&caller)
	c.timeout = resp.TimeOut
}

// answerExpired tells the client its session is gone: ZooKeeper answers an expired
// session or a wrong password with a zero timeout and id, which the client reports as
// session expired, then closes.
func (c *conn) answerExpired(resp jute.Connected) {
	resp.TimeOut, resp.SessionId, resp.Passwd = 0, 0, make([]byte, 16)
	c.nc.SetWriteDeadline(time.Now().Add(5 * time.Second))
	c.nc.Write(jute.AppendFrame(nil, &resp))
}

// sessionLives reports whether session id is still in the session table.
func (c *conn) sessionLives(id int64) bool {
	found := false
	c.srv.node.FSM.Read(func(_ *datatree.Tree, t *session.Table) { _, found = t.Get(id) })
	return found
}

// caughtUp waits until this cluster member has applied what the client has seen (it may
// come from a member that is ahead), for at most a quarter of the session timeout, so
// the client never travels back in time; false refuses the client, which tries another
// member. A standalone server has nothing to wait for and refuses at once, as
// ZooKeeper does.
func (c *conn) caughtUp(seen int64, timeout int32) bool {
	last := c.srv.node.FSM.LastZxid()
	if seen <= last || (c.srv.node.IsClustered() && c.srv.node.FSM.WaitApplied(seen, time.Duration(timeout)*time.Millisecond/4)) {
		return true
	}
	c.srv.log.Warn("refusing session: client has seen a newer zxid than this member could catch up with", "client", c.nc.RemoteAddr().String(),
		"clientZxid", fmt.Sprintf("0x%x", seen), "ourZxid", fmt.Sprintf("0x%x", c.srv.node.FSM.LastZxid()))
	return false
}

// createSession proposes a new session and waits for it to be applied.
func (c *conn) createSession(timeout int32) (int64, []byte, bool) {
	for attempt := 0; attempt < 8; attempt++ {
		id, pw := c.srv.newSessionID(), newPassword()
		f := c.srv.node.Propose(&quorum.Entry{Session: id, Op: jute.OpCreateSession, Origin: c.srv.node.ID(),
			Req: &quorum.SessionRequest{Timeout: timeout, Password: pw}})
		if err := f.Error(); err != nil {
			c.srv.log.Warn("create session failed", "err", err)
			return 0, nil, false
		}
		if res := f.Response().(*quorum.Result); res.Err == jute.OK {
			return id, pw, true
		}
	}
	return 0, nil, false
}

// moveSession makes this member the session's owner through the log, so that the
// connection the client left on another member is dropped and its writes refused.
func (c *conn) moveSession(id int64) bool {
	f := c.srv.node.Propose(&quorum.Entry{Session: id, Op: quorum.OpMoveSession, Origin: c.srv.node.ID()})
	if err := f.Error(); err != nil {
		c.srv.log.Warn("moving session failed", "session", fmt.Sprintf("0x%x", id), "err", err)
		return false
	}
	return f.Response().(*quorum.Result).Err == jute.OK
}
