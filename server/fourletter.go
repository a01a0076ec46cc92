package server

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"net"
	"strconv"
	"strings"
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
	// ZooKeeper 3.8 lists the digests it recorded at every 128th zxid; zkraft records
	// none (its digest walks the whole tree) and answers as ZooKeeper before its 128th
	// transaction: with nothing (docs/compatibility.md).
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
	c.srv.metrics.bytesReceived.Add(4) // the word, read as a frame's length
	allowed := c.srv.cfg.fourLetterAllowed(cmd)
	if cmd == "stmk" && allowed {
		// The whitelist comes first: an stmk it refuses reads no mask and sets none.
		// ZooKeeper takes the mask from one read of what has arrived with the word: with
		// fewer than 8 bytes there it closes the connection at once, unanswered. What
		// the read that brought the word buffered stands for that read.
		if br.Buffered() < 12 {
			return true
		}
		mask, _ := br.Peek(12)
		c.srv.traceMask.Store(int64(binary.BigEndian.Uint64(mask[4:])))
	}
	var b strings.Builder
	switch {
	case !allowed:
		fmt.Fprintf(&b, "%s is not executed because it is not in the whitelist.\n", cmd)
	case needsServing[cmd] && !c.srv.clientPortServing():
		// A member with no leader (partitioned, removed, still joining), or a leader
		// not yet established, serves nobody, unless it is read-only. ZooKeeper's hash prints it without the newline.
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
	c.writeAnswer([]byte(b.String()))
	packets := fourLetterPackets(b.Len())
	c.sent.Add(packets)
	c.srv.stats.sent.Add(packets)
	return true
}

// writeAnswer writes a four-letter word's answer whole, as ZooKeeper's blocking writes
// (NIOServerCnxn.sendBufferSync) mean to, with the write deadline afresh on every write
// that makes progress (writeAll): a client that reads slowly gets all of it, one that
// reads nothing for writeDeadline is left.
func (c *conn) writeAnswer(answer []byte) {
	bufs := net.Buffers{answer}
	writeAll(c.nc, &bufs)
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

// writeStat is srvr, or stat with the clients of the client port (secure false) or of
// the secure client port.
func (s *Server) writeStat(b *strings.Builder, clients, secure bool) {
	f := s.statFacts()
	fmt.Fprintf(b, "Zookeeper version: %s\n", f.version)
	if f.readOnly {
		b.WriteString("READ-ONLY mode; serving only read-only clients\n")
	}
	if clients {
		b.WriteString("Clients:\n")
		for _, c := range s.connFacts() {
			if c.secure == secure {
				c.describe(b, false)
			}
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(b, "Latency min/avg/max: %d/%s/%d\n", f.minLat, javaDouble(f.avgLat), f.maxLat)
	fmt.Fprintf(b, "Received: %d\n", f.received)
	fmt.Fprintf(b, "Sent: %d\n", f.sent)
	fmt.Fprintf(b, "Connections: %d\n", f.connections)
	fmt.Fprintf(b, "Outstanding: %d\n", f.outstanding)
	fmt.Fprintf(b, "Zxid: 0x%x\n", f.zxid)
	fmt.Fprintf(b, "Mode: %s\n", f.mode)
	fmt.Fprintf(b, "Node count: %d\n", f.nodes)
	if f.leads {
		fmt.Fprintf(b, "Proposal sizes last/min/max: %d/%d/%d\n", f.proposals.Last, f.proposals.Min, f.proposals.Max)
	}
}

// describe writes one connection as cons (full) or stat (brief) lists it.
func (c connFacts) describe(b *strings.Builder, full bool) {
	interest := 1
	if c.sid == 0 {
		interest = 0 // not past the handshake (a four-letter word, for one)
	}
	fmt.Fprintf(b, " /%s[%d](queued=%d,recved=%d,sent=%d", c.addr, interest, c.queued, c.recv, c.sent)
	if full && c.sid != 0 {
		c.describeSession(b)
	}
	b.WriteString(")\n")
}

// describeSession appends what ZooKeeper's cons prints after sent= for a connection with
// a session: from sid to maxlat.
func (c connFacts) describeSession(b *strings.Builder) {
	f := c.figures
	fmt.Fprintf(b, ",sid=0x%x,lop=%s,est=%d,to=%d", uint64(c.sid), f.lastOp, c.started.UnixMilli(), c.timeout)
	if f.lastCxid >= 0 {
		fmt.Fprintf(b, ",lcxid=0x%x", f.lastCxid)
	}
	fmt.Fprintf(b, ",lzxid=0x%x,lresp=%d,llat=%d,minlat=%d,avglat=%d,maxlat=%d",
		uint64(f.lastZxid), f.lastResp, f.lastLat, f.minLat, f.avgLat, f.maxLat)
}

// writeIsro answers isro as ZooKeeper does: "ro" from a read-only server, "rw" from one
// that serves, "null" from one that serves nobody (read-only clients look for "rw").
func (s *Server) writeIsro(b *strings.Builder) {
	switch {
	case s.isReadOnly():
		b.WriteString("ro")
	case s.clientPortServing():
		b.WriteString("rw")
	default:
		b.WriteString("null")
	}
}

func (s *Server) writeCons(b *strings.Builder, secure bool) {
	for _, c := range s.connFacts() {
		if c.secure == secure {
			c.describe(b, true)
		}
	}
	b.WriteString("\n")
}

func (s *Server) writeConf(b *strings.Builder) {
	f := s.confFacts()
	fmt.Fprintf(b, "clientPort=%d\n", f.clientPort)
	fmt.Fprintf(b, "secureClientPort=%d\n", f.securePort)
	fmt.Fprintf(b, "dataDir=%s\n", f.dirs.dataDir)
	fmt.Fprintf(b, "dataDirSize=%d\n", f.dirs.dataSize)
	fmt.Fprintf(b, "dataLogDir=%s\n", f.dirs.logDir)
	fmt.Fprintf(b, "dataLogSize=%d\n", f.dirs.logSize)
	fmt.Fprintf(b, "tickTime=%d\n", f.tickTime)
	fmt.Fprintf(b, "maxClientCnxns=%d\n", f.maxClientCnxns)
	fmt.Fprintf(b, "minSessionTimeout=%d\n", f.minTimeout)
	fmt.Fprintf(b, "maxSessionTimeout=%d\n", f.maxTimeout)
	b.WriteString("clientPortListenBacklog=-1\n")
	fmt.Fprintf(b, "serverId=%d\n", f.serverID)
	q := f.quorum
	if q == nil {
		return
	}
	fmt.Fprintf(b, "initLimit=%d\nsyncLimit=%d\nelectionAlg=3\n", q.initLimit, q.syncLimit)
	fmt.Fprintf(b, "electionPort=%s\nquorumPort=%s\npeerType=%d\n", q.electionPort, q.quorumPort, q.peerType)
	if q.showsMembership {
		b.WriteString("membership: \n")
		b.WriteString(q.membership)
	}
}

func (s *Server) writeEnvi(b *strings.Builder) {
	b.WriteString("Environment:\n")
	for _, e := range environment() {
		fmt.Fprintf(b, "%s=%s\n", e[0], e[1])
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

func (s *Server) writeWchs(b *strings.Builder) {
	w := s.watchSummary()
	fmt.Fprintf(b, "%d connections watching %d paths\nTotal watches:%d\n", w.connections, w.paths, w.watches)
}

func (s *Server) writeWchc(b *strings.Builder) {
	for _, w := range s.watchesBySession() {
		fmt.Fprintf(b, "0x%x\n", uint64(w.sid))
		for _, p := range w.paths {
			fmt.Fprintf(b, "\t%s\n", p)
		}
	}
	b.WriteString("\n")
}

func (s *Server) writeWchp(b *strings.Builder) {
	for _, w := range s.watchesByPath() {
		fmt.Fprintf(b, "%s\n", w.path)
		for _, id := range w.sids {
			fmt.Fprintf(b, "\t0x%x\n", uint64(id))
		}
	}
	b.WriteString("\n")
}

func (s *Server) writeDump(b *strings.Builder) {
	f := s.dumpFacts()
	b.WriteString("SessionTracker dump:\n")
	if f.tracks {
		// The leader's tracker, as SessionTrackerImpl prints its ExpiryQueue: buckets by
		// deadline, each with the time it falls due as Java's Date prints it.
		n := 0
		for _, bk := range f.buckets {
			n += len(bk.IDs)
		}
		fmt.Fprintf(b, "Session Sets (%d)/(%d):\n", len(f.buckets), n)
		for _, bk := range f.buckets {
			fmt.Fprintf(b, "%d expire at %s:\n", len(bk.IDs), bk.At.Format(javaDateLayout))
			for _, id := range bk.IDs {
				fmt.Fprintf(b, "\t0x%x\n", uint64(id))
			}
		}
	} else {
		// A follower keeps no deadlines: it lists the sessions it knows with their
		// timeouts, as LearnerSessionTracker does.
		fmt.Fprintf(b, "Global Sessions(%d):\n", len(f.sessions))
		for _, ss := range f.sessions {
			fmt.Fprintf(b, "0x%x\t%dms\n", uint64(ss.ID), ss.Timeout)
		}
	}
	b.WriteString("ephemeral nodes dump:\n")
	fmt.Fprintf(b, "Sessions with Ephemerals (%d):\n", len(f.ephemerals))
	for _, e := range f.ephemerals {
		fmt.Fprintf(b, "0x%x:\n", uint64(e.sid))
		for _, p := range e.paths {
			fmt.Fprintf(b, "\t%s\n", p)
		}
	}
	b.WriteString("Connections dump:\n")
	fmt.Fprintf(b, "Connections Sets (1)/(%d):\n", len(f.conns))
	for _, c := range f.conns {
		fmt.Fprintf(b, "\tip: /%s sessionId: 0x%x\n", c.addr, uint64(c.sid))
	}
}

func (s *Server) writeDirs(b *strings.Builder) {
	f := s.dirFacts()
	fmt.Fprintf(b, "datadir_size: %d\n", f.dataSize)
	fmt.Fprintf(b, "logdir_size: %d\n", f.logSize)
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
