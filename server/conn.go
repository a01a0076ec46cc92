package server

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/quorum"
	"github.com/zkraft/zkraft/server/sasl"
	"github.com/zkraft/zkraft/session"
)

// conn is one client connection. Four stages, each request passing through them in
// arrival order: the reader decodes frames; the processor authenticates, proposes
// writes and runs reads, a read only once every earlier write of the connection has
// been applied and answered (read-your-writes) and before any later write is proposed
// (so it never sees a later write of its own session); the responder waits for proposed
// writes in order and answers them; the writer drains the out queue and flushes when it
// runs dry, so pipelined replies share writes. While the processor is idle the reader
// stands in for it (only the reader hands it work, so nothing can overtake): it proposes
// a write itself, and runs a plain read with no write of its connection unanswered,
// writing the reply too once no further frame is buffered (one goroutine instead of
// three for the common read). The reader is a goroutine for the connection's life; the
// other three run on goroutines that exist only while they have work (stage.go,
// outbox.go), so an idle connection holds one goroutine's stack.
type conn struct {
	srv *Server
	nc  net.Conn
	ip  string
	// secure: the connection came in on the secure client port (ZooKeeper's secure
	// connection factory); cons, stat and the admin commands list them apart.
	secure bool

	out *outbox // encoded frames for the writer
	// wbufs and wb belong to whoever holds wmu (the writer, or the reader writing its
	// own replies): the frames of one writev, and what of them is left to write (kept
	// here so that writing allocates nothing).
	wbufs, wb net.Buffers
	processor *stage       // decoded requests, run in order
	queued    atomic.Int64 // requests handed to the processor and not yet processed (the last stays counted if it ended the processor)
	wmu       sync.Mutex   // held to take frames from the outbox and write them, so frames go out in queue order
	dec       jute.Decoder // the reader's, reset for each frame
	responder *stage       // proposed writes and barriers, answered in order
	inflight  atomic.Int64 // writes proposed and not yet answered
	closing   atomic.Bool  // this connection asked to close its session; it closes itself after the reply
	// client: a ConnectRequest came. The drops that close a member's clients (no
	// leader, leaderServes=no, a read-only switch) leave a connection without one be: a
	// four-letter word, or a handshake not yet sent (it is refused when it comes).
	client atomic.Bool
	done   chan struct{}
	once   sync.Once

	sid     atomic.Int64
	timeout int32 // negotiated, ms
	// readOnly: the connection of a read-only client's local session (readonly.go), set
	// under Server.mu before the connection serves requests.
	readOnly bool
	// stream is the connection's ordered way into the log: its writes are applied in
	// the order they arrived, or the connection is closed.
	stream *quorum.Stream

	// caller is replaced, never changed in place, when addauth adds an identity, so
	// readers take it without a lock or a copy.
	caller atomic.Pointer[datatree.Caller]
	// saslExchange is the connection's DIGEST-MD5 exchange once a SASL token came
	// (the processor's alone).
	saslExchange *sasl.Digest

	recv, sent atomic.Int64
	started    time.Time
	stats      *connStats // cons' per-connection figures
	adm        admission  // its requests counted by the request throttle (throttle.go)
	large      largeHeld  // what its large requests hold (large_requests.go)
}

// pending is one request on its way through the connection.
type pending struct {
	xid     int32
	op      int32
	req     jute.Record
	future  quorum.Future // writes: the proposal
	err     jute.Code     // answered without a read or a proposal (e.g. unknown op)
	close   bool          // close the connection after the reply (closeSession, auth failure, unknown op)
	invalid bool          // not a request type ZooKeeper takes (Request.isValid): err is Unimplemented, close is set
	start   time.Time
	barrier chan struct{} // closed by the responder when every earlier write is answered
	// admitted: counted in process by the request throttle until answered.
	admitted bool
	large    int32     // the bytes it holds as a large request (large_requests.go), in admitted's padding
	ids      []jute.Id // a write's identities when proposed, for the audit log (audit.go)
}

// readBufferSize is a busy connection's read buffer (an idle one lends it back,
// connreader.go): a client's pipelined burst of small requests per read (eight setData
// of 100 bytes are 1.2 KiB; 1 KiB made set at depth 8 a tenth slower), and little to
// hold (64 KiB made a connect-and-close loop spend a third of its per-connection CPU
// zeroing it). A frame larger than the buffer is read past it, straight into the frame.
const readBufferSize = 2 << 10

// keepFrame is the largest frame buffer the reader keeps for its next frame. A larger one
// (a big create or setData) is dropped once decoded, as ZooKeeper drops each request's
// buffer: a connection that once sent a request of jute.maxbuffer must not hold that
// much for the rest of its life.
const keepFrame = 64 << 10

func newConn(s *Server, nc net.Conn) *conn {
	c := &conn{srv: s, nc: nc, ip: remoteIP(nc), stream: s.node.NewStream(),
		done: make(chan struct{}), started: time.Now(), stats: newConnStats()}
	c.out = newOutbox(c.writeOut)
	c.processor = newStage(s.cfg.MaxOutstanding, c.done, c.processNext)
	c.responder = newStage(s.cfg.MaxOutstanding, c.done, c.respondNext)
	c.caller.Store(&datatree.Caller{Ids: []jute.Id{{Scheme: "ip", Id: c.ip}}, Super: s.cfg.SkipACL})
	c.dec.AsJava = true // strings that are not UTF-8 read as ZooKeeper reads them
	return c
}

func (c *conn) sessionID() int64 { return c.sid.Load() }

// Caller is the identity ACL checks and persistent-watch delivery use.
func (c *conn) Caller() datatree.Caller {
	return *c.caller.Load()
}

// Notify queues a watch notification; it never blocks.
func (c *conn) Notify(ev *jute.WatcherEvent, zxid int64) {
	f := replyFrame(jute.XidNotification, zxid, jute.OK, ev)
	c.srv.metrics.watchBytes.Add(int64(len(*f) - 4))
	c.send(f)
}

// send queues a frame without blocking; a client too far behind is disconnected.
func (c *conn) send(frame *[]byte) {
	c.srv.stats.responses.record(len(*frame) - 4)
	if !c.out.push(frame) {
		c.srv.log.Warn("closing slow client: too much queued for it", "client", c.nc.RemoteAddr().String(), "session", fmt.Sprintf("0x%x", c.sessionID()))
		c.close(closedSlowClient)
	}
}

// close tears the connection down at once; the first reason given is the one counted.
func (c *conn) close(why closeReason) {
	c.once.Do(func() {
		close(c.done)
		c.settleAdmissions()
		c.releaseAllLarge()
		c.srv.stats.closed[why].Add(1)
		// Forget the connection before the socket closes, so a client that sees the
		// close never finds it still listed (stat, cons) or counted.
		c.srv.removeConn(c)
		c.srv.node.FSM.Watches.RemoveWatcher(c)
		c.nc.Close()
		c.srv.log.Debug("connection closed", "client", c.nc.RemoteAddr().String(), "session", fmt.Sprintf("0x%x", c.sessionID()), "why", why.String())
	})
}

// closeAfterFlush lets queued replies go out, then closes; the first reason given is the
// one counted.
func (c *conn) closeAfterFlush(why closeReason) { c.out.closeAfter(why) }

func (c *conn) serve() {
	if why, ok := c.startTLS(); !ok {
		c.close(why)
		return
	}
	r := newConnReader(c.nc, &c.srv.readBuffersLent)
	br := r.buffered()
	// A connection without a session is closed after SessionlessTimeout, as ZooKeeper's
	// (zookeeper.nio.sessionlessCnxnTimeout): an idle or half-sent handshake must not
	// hold its goroutine and its maxClientCnxns place for good.
	c.nc.SetReadDeadline(time.Now().Add(c.srv.cfg.sessionless()))
	if handled := c.maybeFourLetter(br); handled {
		c.close(closedFourLetter)
		r.release()
		return
	}
	if !c.handshake(br) {
		c.close(closedHandshake)
		r.release()
		return
	}
	c.nc.SetReadDeadline(time.Time{})
	r.setIdle()
	// The reader is a goroutine of its own, not this one: the handshake's calls grew
	// this stack, and an idle connection would keep that for as long as it stays open
	// (1.5 KiB of RSS a session, measured at 3,000).
	c.srv.wg.Add(1)
	go func() {
		defer c.srv.wg.Done()
		c.readLoop(r)
		r.release()
	}()
}

// readLoop decodes requests and hands them to the processor in arrival order, or runs
// a plain read or proposes a write itself when the processor would do so at once
// (runsItself, proposesItself).
func (c *conn) readLoop(r *connReader) {
	var buf []byte
	held := false // the outbox's wake-up is held: replies of reads this loop ran wait for its flush
	for {
		if c.readOnly {
			// No leader expires a local session: a client silent for its timeout is gone,
			// as ZooKeeper's local session tracker decides.
			c.nc.SetReadDeadline(time.Now().Add(time.Duration(c.timeout) * time.Millisecond))
		}
		frame, err := r.next(buf, c.srv.cfg.MaxBuffer)
		if err != nil {
			c.logReadErr(err)
			c.close(readReason(err))
			return
		}
		if buf = frame[:0]; cap(buf) > keepFrame {
			buf = nil
		}
		c.recv.Add(1)
		c.srv.stats.received.Add(1)
		c.srv.metrics.bytesReceived.Add(int64(4 + len(frame)))
		p, ok := c.decode(frame)
		if !ok {
			c.close(closedBadFrame)
			return
		}
		if !c.admitLarge(p, len(frame)) {
			c.close(closedLargeRequest)
			return
		}
		if !c.readOnly {
			c.srv.node.Touch(c.sessionID(), c.timeout)
		}
		if c.runsItself(p) {
			// Nothing of this connection is ahead of the read (the processor is idle,
			// no write unanswered), so the reader runs it, and writes the reply itself
			// unless another request is already buffered (the replies of pipelined
			// reads then share one write).
			if held && c.waitsFresh(p) && c.srv.node.FreshReadTarget() != 0 {
				// The read will wait for the leader's apply: the replies before it go now.
				held = false
				if !c.flushHeld() {
					return
				}
			}
			if !held {
				c.out.holdWake()
				held = true
			}
			ok := c.process(p)
			if !r.frameBuffered() || !ok {
				held = false
				if !c.flushHeld() {
					return
				}
			}
			if !ok {
				return
			}
			continue
		}
		if held {
			held = false
			if !c.flushHeld() {
				return
			}
		}
		if c.proposesItself(p) {
			if !c.process(p) {
				return
			}
			continue
		}
		c.queued.Add(1)
		if !c.processor.put(p) {
			return
		}
	}
}

// runsItself reports whether the reader may run p itself: a plain read with nothing of
// its connection ahead of it, which the processor would run at once. The ops are those
// that change nothing of the connection (not addauth or sasl, which the processor
// owns) and never close it.
func (c *conn) runsItself(p *pending) bool {
	if p.err != jute.OK || c.queued.Load() != 0 || c.inflight.Load() != 0 || c.srv.throttle.cfg.on() || c.readOnly || c.isDone() {
		return false
	}
	switch p.op {
	case jute.OpGetData, jute.OpExists, jute.OpGetChildren, jute.OpGetChildren2, jute.OpGetACL, jute.OpPing:
		return true
	}
	return false
}

// proposesItself reports whether the reader may propose the write p itself: the
// processor is idle, so it would propose it at once (its answer is the responder's).
func (c *conn) proposesItself(p *pending) bool {
	if p.err != jute.OK || c.queued.Load() != 0 || c.srv.throttle.cfg.on() || c.readOnly || c.isDone() {
		return false
	}
	return jute.IsWrite(p.op) && p.op != jute.OpCloseSession && p.op != jute.OpReconfig
}

// Gone reports whether the connection is closed (watch.Mortal): a read that runs as it
// closes sets no watch, since close has removed its watches already or is about to.
func (c *conn) Gone() bool { return c.isDone() }

// isDone reports whether the connection is closed: the reader may still find whole
// frames in its buffer after that, and nothing of them may run.
func (c *conn) isDone() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// outstanding is how many of the connection's requests are read and not yet answered
// or run (ZooKeeper's outstanding requests): those queued for the processor and the
// writes proposed. A read the reader runs itself is never outstanding.
func (c *conn) outstanding() int64 { return c.queued.Load() + c.inflight.Load() }

// readerWriteMax is the most the reader writes itself; more (a large reply, or a queue
// the client is slow to drain) is the writer's, so that the reader does not stop
// reading while a socket drains.
const readerWriteMax = 64 << 10

// flushHeld ends the reader's hold on the writer's wake-up and writes what is queued,
// unless the writer is writing (it is then woken to write it next) or there is much of
// it; false means the connection is done.
func (c *conn) flushHeld() bool {
	if c.out.releaseWake() > readerWriteMax || !c.wmu.TryLock() {
		c.out.signal()
		return true
	}
	defer c.wmu.Unlock()
	return c.writeQueued()
}

func (c *conn) logReadErr(err error) {
	var big *jute.ErrFrameTooLarge
	switch {
	case errors.As(err, &big):
		c.srv.log.Warn("closing connection: frame too large", "client", c.nc.RemoteAddr().String(), "len", big.Len, "max", big.Max)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		if !c.isDone() && !c.closing.Load() {
			// The client closed its end, not after its closeSession: ZooKeeper's failed
			// read (connection_drop_count).
			c.srv.metrics.connectionDrops.Add(1)
		}
	case errors.Is(err, net.ErrClosed):
	default:
		if !c.isDone() {
			c.srv.log.Debug("read", "client", c.nc.RemoteAddr().String(), "err", err)
		}
	}
}

// decode turns a frame into a pending request; false closes the connection (a frame
// too short for a request header).
func (c *conn) decode(frame []byte) (*pending, bool) {
	d := &c.dec
	d.Reset(frame)
	defer d.Reset(nil) // holds no frame between frames (keepFrame)
	var h jute.RequestHeader
	h.Decode(d)
	if d.Err != nil {
		return nil, false
	}
	p := &pending{xid: h.Xid, op: h.Type, start: time.Now()}
	info, known := jute.Op(h.Type)
	switch {
	case !known || info.Client == jute.NotFromClients:
		// An op no client may send: since 3.9.3 and 3.8.5 a check outside a multi is one
		// (ZOOKEEPER-2623); a check inside a multi stays.
		p.err, p.close, p.invalid = jute.ErrUnimplemented, true, true
		return p, true
	case info.Client == jute.RefusedFromClients:
		p.err = jute.ErrBadArguments
		return p, true
	}
	if req := info.NewRecord(); req != nil {
		req.Decode(d)
		if d.Err != nil && h.Type == jute.OpAuth {
			// ZooKeeper reads addauth on the connection itself and closes it when the
			// packet does not decode.
			return nil, false
		}
		if d.Err != nil {
			// ZooKeeper answers a request body it cannot decode with MarshallingError
			// and keeps the connection.
			c.srv.log.Debug("undecodable request", "client", c.nc.RemoteAddr().String(), "op", h.Type, "err", d.Err)
			p.err = jute.ErrMarshallingError
			return p, true
		}
		p.req = req
	}
	return p, true
}

// processNext runs the processor's next request, in arrival order.
func (c *conn) processNext(p *pending) bool {
	// A request that ends the connection (process false) leaves queued raised: the
	// reader must never take a processor that has stopped for an idle one, or a request
	// read after it would run (runsItself, proposesItself).
	if !c.process(p) {
		return false
	}
	c.queued.Add(-1)
	return true
}

// process proposes a write (the responder answers it) or answers anything else itself
// once the writes before it are answered; false means the connection is done.
func (c *conn) process(p *pending) bool {
	if !c.enforced(p) {
		return false
	}
	if p.op == jute.OpSASL {
		// ZooKeeper runs SASL on the connection, outside its request pipeline and
		// throttle (saslauth.go).
		return c.saslToken(p)
	}
	if !c.admit(p) {
		c.close(closedStaleRequest)
		return false
	}
	if p.err == jute.OK { // not already answered: ThrottledOp, an undecodable body, an unknown op
		c.prepare(p)
		if c.isDone() {
			return false // prepare closed it (addauth ensemble with another ensemble's name)
		}
	}
	if p.err == jute.OK && c.overMemoryCap(p) {
		p.err = jute.ErrQuotaExceeded
	}
	if p.err == jute.ErrQuotaExceeded || (p.op == jute.OpReconfig && (p.err == jute.ErrReconfigDisabled || p.err == jute.ErrUnimplemented)) {
		// Refused before it was proposed, where ZooKeeper's PrepRequestProcessor refuses
		// it and so audits it (a throttled request it does not audit).
		c.auditWrite(p.op, p.req, c.Caller().Ids, p.err, nil)
	}
	if c.readOnly && !p.invalid {
		c.refuseWrite(p)
	} else if p.err == jute.OK && (jute.IsWrite(p.op) || p.op == jute.OpSync) {
		caller := c.Caller()
		if c.srv.cfg.Audit {
			p.ids = caller.Ids
		}
		c.inflight.Add(1)
		p.future = c.stream.Propose(&quorum.Entry{Session: caller.Session, Cxid: p.xid, Op: p.op,
			Super: caller.Super, Ids: caller.Ids, Req: p.req})
		return c.toResponder(p)
	}
	if c.inflight.Load() > 0 {
		b := &pending{barrier: make(chan struct{})}
		if !c.toResponder(b) {
			return false
		}
		select {
		case <-b.barrier:
		case <-c.done:
			return false
		}
	}
	defer c.settle(p)
	switch {
	case p.invalid:
		c.reply(p.xid, -1, p.err, nil)
	case p.op == jute.OpAuth: // ZooKeeper answers addauth at zxid 0, failed or not
		c.answer(p, 0, p.err, nil)
	case p.err != jute.OK:
		c.answer(p, c.srv.node.FSM.LastZxid(), p.err, nil)
	case p.op == jute.OpCloseSession: // a local session's (refuseWrite): nothing to propose
		c.answer(p, c.srv.node.FSM.LastZxid(), jute.OK, nil)
	default:
		if c.waitsFresh(p) {
			c.srv.node.WaitFreshRead()
		}
		c.srv.node.FSM.Read(func(t *datatree.Tree, _ *session.Table) {
			zxid := c.srv.node.FSM.LastZxid()
			code, body := c.read(t, p, zxid)
			c.answer(p, zxid, code, body)
		})
	}
	if p.close {
		c.closeAfterFlush(closedAfterReply)
		return false
	}
	return true
}

// waitsFresh reports whether read p first waits for what other members may have applied
// (quorum's WaitFreshRead): not a ping, and not a read-only session's read, which is
// served without a leader, so nothing newer will come.
func (c *conn) waitsFresh(p *pending) bool { return p.op != jute.OpPing && !c.readOnly }

// prepare does what an op needs before it is proposed or read: addauth changes the
// caller, closeSession marks the connection, reconfig may be refused.
func (c *conn) prepare(p *pending) {
	switch p.op {
	case jute.OpAuth:
		c.authenticate(p)
	case jute.OpCloseSession:
		p.close = true
		c.closing.Store(true)
	case jute.OpReconfig:
		switch {
		case !c.srv.cfg.ReconfigEnabled:
			p.err = jute.ErrReconfigDisabled
		case !c.srv.node.IsClustered():
			p.err = jute.ErrUnimplemented // as a standalone ZooKeeper answers
		case c.srv.cfg.SkipACL:
			c.srv.log.Warn("skipACL is set, reconfig operation will skip ACL checks!")
		}
	}
}

func (c *conn) toResponder(p *pending) bool { return c.responder.put(p) }

// respondNext answers the next proposed write, in the order they were proposed, or lets
// a barrier's waiter go.
func (c *conn) respondNext(p *pending) bool {
	if p.barrier != nil {
		close(p.barrier)
		return true
	}
	return c.respond(p)
}

func (c *conn) respond(p *pending) bool {
	defer c.settle(p)
	defer c.inflight.Add(-1)
	if err := p.future.Error(); err != nil {
		// Outcome unknown (lost leadership, shutting down), or the write was refused as
		// out of its connection's order: ConnectionLoss, as ZooKeeper.
		c.srv.log.Warn("closing connection: proposal failed", "session", fmt.Sprintf("0x%x", c.sessionID()), "err", err)
		c.close(closedProposalFailed)
		return false
	}
	res := p.future.Response().(*quorum.Result)
	if res.Err == jute.ErrSessionMoved {
		// The client reattached through another member; like ZooKeeper, close this
		// connection instead of answering.
		c.close(closedSessionMoved)
		return false
	}
	if p.op == jute.OpReconfig && res.Err == jute.OK {
		c.awaitMembership()
	}
	var body jute.Record
	if res.Err == jute.OK || p.op == jute.OpMulti {
		body = res.Resp
	}
	c.auditWrite(p.op, p.req, p.ids, res.Err, body)
	c.answer(p, res.Zxid, res.Err, body)
	if p.close {
		c.closeAfterFlush(closedAfterReply)
		return false
	}
	return true
}

// settle records an answered request's latency and gives back its place in the
// request throttle.
func (c *conn) settle(p *pending) {
	c.finish(p)
	c.releaseLarge(p)
	c.srv.observe(p)
}

// answer replies to a request, its figures for cons recorded first (as ZooKeeper does),
// so a client that has the reply finds them.
func (c *conn) answer(p *pending, zxid int64, code jute.Code, body jute.Record) {
	// A large request's bytes are given back before its reply goes, as ZooKeeper's
	// FinalRequestProcessor does: the client's next request may come at once.
	c.releaseLarge(p)
	c.stats.answered(p.op, p.xid, code, zxid, p.start)
	xid := p.xid
	if p.op == jute.OpPing {
		xid = jute.XidPing // ZooKeeper answers every ping with its own xid, whatever was sent
	}
	f := replyFrame(xid, zxid, code, body)
	if p.op != jute.OpPing && p.op != jute.OpAuth && code != jute.ErrNotReadOnly {
		// FinalRequestProcessor's response_bytes: not a ping's reply (it counts 0 for
		// it), nor addauth's or a refused write's on a read-only server (answered
		// before that processor).
		c.srv.metrics.responseBytes.Add(int64(len(*f) - 4))
	}
	c.send(f)
}

func (c *conn) reply(xid int32, zxid int64, code jute.Code, body jute.Record) {
	c.send(replyFrame(xid, zxid, code, body))
}

// framesWriter is a connection that writes a batch of frames its own way (secureConn:
// as one TLS write, not one record per frame).
type framesWriter interface {
	WriteFrames(bufs *net.Buffers) (int64, error)
}

// writeFrames writes bufs (consuming what was written): with one writev on a TCP
// socket, or as the connection prefers.
func writeFrames(nc net.Conn, bufs *net.Buffers) (int64, error) {
	if fw, ok := nc.(framesWriter); ok {
		return fw.WriteFrames(bufs)
	}
	return bufs.WriteTo(nc)
}

// writeAll writes bufs whole. Each write that makes progress gets a fresh deadline: a
// slow reader is served, one that reads nothing for writeDeadline is left (the error).
func writeAll(nc net.Conn, bufs *net.Buffers) error {
	for len(*bufs) > 0 {
		nc.SetWriteDeadline(writeDeadlineFromNow())
		n, err := writeFrames(nc, bufs)
		if err != nil && (n == 0 || !errors.Is(err, os.ErrDeadlineExceeded)) {
			return err
		}
		if n == 0 && err == nil { // nothing left to write but empty buffers
			return nil
		}
	}
	return nil
}

// writeOut is the outbox's writer: it writes what is queued with one writev; false
// means the connection is done.
func (c *conn) writeOut() bool {
	if c.isDone() {
		return false
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.writeQueued()
}

// writeQueued writes everything queued with one writev (wmu held); false means the
// connection is done (a write failed, or it was to close after its last reply).
func (c *conn) writeQueued() bool {
	frames, closing, why := c.out.take()
	if len(frames) > 0 {
		for _, f := range frames {
			c.wbufs = append(c.wbufs, *f)
		}
		c.wb = c.wbufs
		if err := writeAll(c.nc, &c.wb); err != nil {
			c.close(writeReason(err))
			return false
		}
		c.sent.Add(int64(len(frames)))
		c.srv.stats.sent.Add(int64(len(frames)))
		clear(c.wbufs)
		if c.wbufs = c.wbufs[:0]; cap(c.wbufs) > maxSpare {
			c.wbufs = nil
		}
		releaseFrames(frames)
		c.out.recycle(frames)
	}
	if closing {
		c.close(why)
		return false
	}
	return true
}

// awaitMembership holds a reconfig's answer until Raft's configuration follows the new
// /zookeeper/config (the leader changes it right after the entry applies), for at most
// 10 s: ZooKeeper answers once the new configuration is in force.
func (c *conn) awaitMembership() {
	for deadline := time.Now().Add(10 * time.Second); !c.srv.node.MembershipApplied(); {
		if time.Now().After(deadline) {
			c.srv.log.Warn("reconfig committed but Raft's membership has not followed yet")
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}
