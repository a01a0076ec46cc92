package server

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/server/ztest"
)

// Scripts of raw requests run against ZooKeeper 3.8 and zkraft, every reply compared:
// error code, reply zxid and every field of the body, and the watch events each client
// got meanwhile. Zxids are numbered by first appearance, session ids by client, times
// shown only as zero or not, children and ephemerals sorted.

// opStep is one request of a script: which client sends it, and what.
type opStep struct {
	who  int // index of the client
	op   int32
	req  jute.Record
	kept bool // a difference docs/compatibility.md lists: the replies must differ
}

// opPause is a step that sends nothing: it waits for its pause.
const opPause int32 = -1000

// opMntr is a step that reads the tree's counts from mntr on the server of the client.
const opMntr int32 = -1001

type pause time.Duration

func (pause) Encode(*jute.Encoder) {}
func (pause) Decode(*jute.Decoder) {}

// rawMulti encodes a multi of any ops, including ones a multi may not carry.
type rawMulti []jute.MultiOp

func (m rawMulti) Encode(e *jute.Encoder) {
	for _, op := range m {
		(&jute.MultiHeader{Type: op.Type, Done: false, Err: -1}).Encode(e)
		op.Req.Encode(e)
	}
	(&jute.MultiHeader{Type: -1, Done: true, Err: -1}).Encode(e)
}
func (rawMulti) Decode(*jute.Decoder) {}

// rawBody is a request body given byte for byte.
type rawBody []byte

func (b rawBody) Encode(e *jute.Encoder) { e.Buf = append(e.Buf, b...) }
func (rawBody) Decode(*jute.Decoder)     {}

// transcriber renders replies so that two servers' transcripts compare.
type transcriber struct {
	zxids    map[int64]int
	sessions map[int64]string
}

func (tr *transcriber) zxid(z int64) string {
	if z <= 0 {
		return fmt.Sprint(z)
	}
	n, ok := tr.zxids[z]
	if !ok {
		n = len(tr.zxids) + 1
		tr.zxids[z] = n
	}
	return fmt.Sprintf("z%d", n)
}

func (tr *transcriber) owner(o int64) string {
	if s, ok := tr.sessions[o]; ok {
		return s
	}
	return fmt.Sprintf("%#x", uint64(o))
}

func (tr *transcriber) stat(s jute.Stat) string {
	t := func(v int64) string {
		if v == 0 {
			return "0"
		}
		return "T"
	}
	return fmt.Sprintf("{c=%s m=%s p=%s ct=%s mt=%s v=%d cv=%d av=%d own=%s len=%d n=%d}",
		tr.zxid(s.Czxid), tr.zxid(s.Mzxid), tr.zxid(s.Pzxid), t(s.Ctime), t(s.Mtime),
		s.Version, s.Cversion, s.Aversion, tr.owner(s.EphemeralOwner), s.DataLength, s.NumChildren)
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

// body renders a reply body of op.
func (tr *transcriber) body(op int32, d *jute.Decoder) string {
	switch op {
	case jute.OpCreate:
		var r jute.CreateResponse
		r.Decode(d)
		return r.Path
	case jute.OpCreate2, jute.OpCreateContainer, jute.OpCreateTTL:
		var r jute.Create2Response
		r.Decode(d)
		return r.Path + " " + tr.stat(r.Stat)
	case jute.OpExists:
		var r jute.ExistsResponse
		r.Decode(d)
		return tr.stat(r.Stat)
	case jute.OpGetData:
		var r jute.GetDataResponse
		r.Decode(d)
		if r.Data == nil {
			return "null " + tr.stat(r.Stat)
		}
		return fmt.Sprintf("%q %s", r.Data, tr.stat(r.Stat))
	case jute.OpSetData:
		var r jute.SetDataResponse
		r.Decode(d)
		return tr.stat(r.Stat)
	case jute.OpGetACL:
		var r jute.GetACLResponse
		r.Decode(d)
		return fmt.Sprintf("%v %s", r.Acl, tr.stat(r.Stat))
	case jute.OpSetACL:
		var r jute.SetACLResponse
		r.Decode(d)
		return tr.stat(r.Stat)
	case jute.OpGetChildren:
		var r jute.GetChildrenResponse
		r.Decode(d)
		return fmt.Sprint(sortedCopy(r.Children))
	case jute.OpGetChildren2:
		var r jute.GetChildren2Response
		r.Decode(d)
		return fmt.Sprintf("%v %s", sortedCopy(r.Children), tr.stat(r.Stat))
	case jute.OpSync:
		var r jute.SyncResponse
		r.Decode(d)
		return r.Path
	case jute.OpGetAllChildrenNumber:
		var r jute.GetAllChildrenNumberResponse
		r.Decode(d)
		return fmt.Sprint(r.TotalNumber)
	case jute.OpGetEphemerals:
		var r jute.GetEphemeralsResponse
		r.Decode(d)
		return fmt.Sprint(sortedCopy(r.Ephemerals))
	case jute.OpMulti, jute.OpMultiRead:
		var r jute.MultiResponse
		r.Decode(d)
		var parts []string
		for _, res := range r.Results {
			s := fmt.Sprintf("%d:%d", res.Type, res.Err)
			if res.Resp != nil {
				s += " " + tr.body(res.Type, jute.NewDecoder(jute.Marshal(res.Resp)))
			}
			parts = append(parts, s)
		}
		return "[" + strings.Join(parts, "; ") + "]"
	case jute.OpAddWatch:
		var r jute.ErrorResponse
		r.Decode(d)
		return fmt.Sprint(r.Err)
	}
	return ""
}

// runOps runs steps with n clients, client i connected to addrs[i%len(addrs)], and
// returns one line per step: the reply (or the closed connection, after which the client
// goes on with a new session), then the watch events every client got since the step
// before.
func runOps(t *testing.T, addrs []string, n int, steps []opStep) []string {
	t.Helper()
	tr := &transcriber{zxids: map[int64]int{}, sessions: map[int64]string{}}
	clients := make([]*rawClient, n)
	renew := func(i int, name string) {
		clients[i] = dial(t, addrs[i%len(addrs)])
		clients[i].connect(0, nil)
		tr.sessions[clients[i].sid] = name
	}
	for i := range clients {
		renew(i, fmt.Sprintf("S%d", i))
	}
	var out []string
	for _, s := range steps {
		// Each step gets its own 30 s, not the connection its 30 s in all: a script of
		// hundreds of fsynced writes on a loaded machine can run longer than that.
		for _, c := range clients {
			c.nc.SetDeadline(time.Now().Add(30 * time.Second))
		}
		if s.op == opPause {
			time.Sleep(time.Duration(s.req.(pause)))
			out = append(out, "paused")
			continue
		}
		if s.op == opMntr {
			var counts []string
			for _, k := range []string{"znode_count", "approximate_data_size", "ephemerals_count", "watch_count"} {
				counts = append(counts, k+"="+mntrValue(t, addrs[s.who%len(addrs)], k))
			}
			out = append(out, strings.Join(counts, " "))
			continue
		}
		c := clients[s.who]
		c.xid++
		if _, err := c.nc.Write(jute.AppendFrame(nil, &jute.RequestHeader{Xid: c.xid, Type: s.op}, s.req)); err != nil {
			t.Fatal(err)
		}
		var line string
		for {
			b, err := jute.ReadFrame(c.br, nil, jute.DefaultMaxBuffer)
			if err != nil {
				line = "closed: " + closedOrErr(err)
				renew(s.who, fmt.Sprintf("S%d'", s.who))
				break
			}
			d := jute.NewDecoder(b)
			var h jute.ReplyHeader
			h.Decode(d)
			if h.Xid == jute.XidNotification {
				continue // drainEvents collects them
			}
			if h.Xid != c.xid {
				t.Fatalf("reply xid %d, want %d", h.Xid, c.xid)
			}
			line = fmt.Sprintf("err=%d zxid=%s", h.Err, tr.zxid(h.Zxid))
			if h.Err == 0 {
				line += " " + tr.body(s.op, d)
			}
			if d.Err != nil {
				line += fmt.Sprintf(" (decode: %v)", d.Err)
			}
			if d.Remaining() != 0 {
				line += fmt.Sprintf(" (+%d bytes)", d.Remaining())
			}
			break
		}
		if s.op == jute.OpCloseSession {
			renew(s.who, fmt.Sprintf("S%d'", s.who))
		}
		for i, c := range clients {
			if evs := drainEvents(c); len(evs) > 0 {
				if s.op == jute.OpCloseSession {
					sort.Strings(evs) // ZooKeeper's in its hash set's order (compatibility.md)
				}
				line += fmt.Sprintf(" events%d%v", i, evs)
			}
		}
		out = append(out, line)
	}
	return out
}

// drainEvents pings and returns the events that came before the ping's answer: those of
// every change answered before (the server queues them ahead of the write's reply).
func drainEvents(c *rawClient) []string {
	if _, err := c.nc.Write(jute.AppendFrame(nil, &jute.RequestHeader{Xid: jute.XidPing, Type: jute.OpPing})); err != nil {
		return []string{"closed"}
	}
	out, _, err := eventsBeforeReply(c)
	if err != nil {
		return append(out, "closed")
	}
	return out
}

// eventsBeforeReply reads frames up to the next one that is not a notification and
// returns the events before it ("type:path") and its header, or the error that ended
// the connection.
func eventsBeforeReply(c *rawClient) ([]string, jute.ReplyHeader, error) {
	var out []string
	for {
		b, err := jute.ReadFrame(c.br, nil, jute.DefaultMaxBuffer)
		if err != nil {
			return out, jute.ReplyHeader{}, err
		}
		d := jute.NewDecoder(b)
		var h jute.ReplyHeader
		h.Decode(d)
		if h.Xid != jute.XidNotification {
			return out, h, nil
		}
		var ev jute.WatcherEvent
		ev.Decode(d)
		out = append(out, fmt.Sprintf("%d:%s", ev.Type, ev.Path))
	}
}

// opsOnStandalone runs steps on a standalone ZooKeeper 3.8 and a standalone zkraft.
func opsOnStandalone(t *testing.T, opts ztest.Options, n int, steps []opStep) (zk, us []string) {
	run := func(start func(ztest.Options) (*ztest.Server, error)) []string {
		s, err := start(opts)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Stop()
		return runOps(t, []string{s.Addr}, n, steps)
	}
	return run(ztest.StartZooKeeper), run(ztest.StartZkraft)
}

// opsOnEnsembles runs steps on a 3-member ZooKeeper 3.8 ensemble and a 3-member zkraft
// cluster, the clients on one follower (on two, a read of one could come before its
// follower applied the other's last write, and its reply's zxid would vary).
func opsOnEnsembles(t *testing.T, opts ztest.Options, n int, steps []opStep) (zk, us []string) {
	run := func(start func(int, ztest.Options) (*ztest.Cluster, error)) []string {
		c, err := start(3, opts)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Stop()
		if err := c.AwaitServing(60 * time.Second); err != nil {
			t.Fatal(err)
		}
		follower := c.Members[(c.Leader()+1)%len(c.Members)]
		return runOps(t, []string{follower.Addr}, n, steps)
	}
	return run(ztest.StartZooKeeperEnsemble), run(ztest.StartZkraftCluster)
}

// compareOps requires the same line from both servers for every step, except the kept
// ones, whose lines must differ (or compatibility.md is out of date).
func compareOps(t *testing.T, steps []opStep, zk, us []string) {
	t.Helper()
	for i, s := range steps {
		same := zk[i] == us[i]
		switch {
		case !same && !s.kept:
			t.Errorf("step %d (client %d, op %d, %+v):\n  zookeeper %s\n  zkraft    %s", i, s.who, s.op, s.req, zk[i], us[i])
		case same && s.kept:
			t.Errorf("step %d (client %d, op %d, %+v): a kept difference is gone, both answer %s", i, s.who, s.op, s.req, us[i])
		}
	}
}

// maskZxids drops the zxid numbers from lines: after a step that uses a zxid on one
// server only, the numbering no longer compares.
var zxidLabel = regexp.MustCompile(`z[0-9]+`)

func maskZxids(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = zxidLabel.ReplaceAllString(l, "z")
	}
	return out
}

// opsSteps are the ops of one script: every create mode and flag, TTL bounds, paths, the
// system nodes, versions, ACL versions, reads of every kind, watches checked and removed,
// multis that pass and fail, multiReads.
func opsSteps() []opStep {
	cr := func(p string, flags int32) *jute.CreateRequest {
		return &jute.CreateRequest{Path: p, Data: []byte("d"), Acl: openACL, Flags: flags}
	}
	ttl := func(p string, flags int32, ttl int64) *jute.CreateTTLRequest {
		return &jute.CreateTTLRequest{Path: p, Data: []byte("d"), Acl: openACL, Flags: flags, Ttl: ttl}
	}
	steps := []opStep{
		{who: 0, op: jute.OpCreate, req: cr("/a", 0)},
		{who: 0, op: jute.OpCreate2, req: cr("/a/b", 0)},
		{who: 0, op: jute.OpCreate2, req: cr("/a/s-", 2)},
		{who: 0, op: jute.OpCreate2, req: cr("/a/s-", 2)},
		{who: 0, op: jute.OpDelete, req: &jute.DeleteRequest{Path: "/a/s-0000000001", Version: -1}},
		{who: 0, op: jute.OpCreate2, req: cr("/a/s-", 2)},
		{who: 0, op: jute.OpCreate2, req: cr("/a/", 2)},
		{who: 0, op: jute.OpCreate2, req: cr("/a/e-", 3)},
		{who: 0, op: jute.OpCreate2, req: cr("/a/e", 1)},
		{who: 0, op: jute.OpCreate2, req: cr("/a/e/x", 0)},
		{who: 0, op: jute.OpCreate2, req: cr("/a/e/x", 2)},
		{who: 0, op: jute.OpGetChildren2, req: &jute.GetChildren2Request{Path: "/a"}},
		{who: 0, op: jute.OpCreateContainer, req: cr("/c", 4)},
		{who: 0, op: jute.OpCreateContainer, req: cr("/c2", 0)},
		{who: 0, op: jute.OpCreateContainer, req: cr("/c3", 1)},
		{who: 0, op: jute.OpCreateContainer, req: cr("/c4", 2)},
		{who: 0, op: jute.OpCreate2, req: cr("/c5", 4)},
		{who: 0, op: jute.OpCreate, req: cr("/c6", 4)},
		{who: 0, op: jute.OpCreateTTL, req: ttl("/t", 5, 1000)},
		{who: 0, op: jute.OpCreateTTL, req: ttl("/t0", 5, 0)},
		{who: 0, op: jute.OpCreateTTL, req: ttl("/t1", 5, -1)},
		{who: 0, op: jute.OpCreateTTL, req: ttl("/t2", 5, 0xFFFFFFFFFF)},
		{who: 0, op: jute.OpCreateTTL, req: ttl("/t3", 5, 0x10000000000)},
		{who: 0, op: jute.OpCreateTTL, req: ttl("/t/s-", 6, 1000)},
		{who: 0, op: jute.OpCreateTTL, req: ttl("/t4", 0, 100)},
		{who: 0, op: jute.OpCreateTTL, req: ttl("/t5", 1, 100)},
		{who: 0, op: jute.OpCreateTTL, req: ttl("/t9", 3, 5)},
		{who: 0, op: jute.OpCreate, req: cr("/t10", 5)},
		{who: 0, op: jute.OpCreate2, req: cr("/t11", 6)},
		{who: 0, op: jute.OpCreate2, req: cr("/t12", 7)},
		{who: 0, op: jute.OpCreate2, req: cr("/t13", -1)},
		{who: 0, op: jute.OpCreateTTL, req: ttl("/t14", 7, 100)},
		{who: 0, op: jute.OpGetData, req: &jute.GetDataRequest{Path: "/t"}},
		{who: 0, op: jute.OpExists, req: &jute.ExistsRequest{Path: "/c"}},
		{who: 0, op: jute.OpCreate2, req: cr("/a//b", 0)},
		{who: 0, op: jute.OpCreate2, req: cr("/a/./b", 0)},
		{who: 0, op: jute.OpCreate2, req: cr("/a/../b", 0)},
		{who: 0, op: jute.OpCreate2, req: cr("/a/.b", 0)},
		{who: 0, op: jute.OpCreate2, req: cr("/a/...", 0)},
		{who: 0, op: jute.OpCreate2, req: cr("/a/b/", 0)},
		{who: 0, op: jute.OpCreate2, req: cr("", 0)},
		{who: 0, op: jute.OpCreate2, req: cr("/", 0)},
		{who: 0, op: jute.OpCreate2, req: cr("a", 0)},
		{who: 0, op: jute.OpCreate2, req: cr("/a/\u00e9\u4e2d", 0)},
		{who: 0, op: jute.OpCreate2, req: cr("/a/\u0085", 0)},
		{who: 0, op: jute.OpCreate2, req: cr("/a/\U0001F600", 0)},
		{who: 0, op: jute.OpCreate2, req: cr("/a/\uFFFF", 0)},
		{who: 0, op: jute.OpCreate2, req: cr("/a/\uE000", 0)},
		{who: 0, op: jute.OpCreate2, req: cr("/a/x\x00y", 0)},
		{who: 0, op: jute.OpCreate2, req: cr("/a/\x7f", 0)},
		{who: 0, op: jute.OpCreate2, req: cr("/zookeeper/x", 0)},
		{who: 0, op: jute.OpCreate2, req: cr("/zookeeper/quota/x", 0)},
		{who: 0, op: jute.OpCreate2, req: cr("/zookeeper/config/x", 0)},
		{who: 0, op: jute.OpCreate2, req: cr("/zookeeper", 0)},
		{who: 0, op: jute.OpSetData, req: &jute.SetDataRequest{Path: "/zookeeper", Data: []byte("z"), Version: -1}},
		{who: 0, op: jute.OpSetData, req: &jute.SetDataRequest{Path: "/zookeeper/quota", Data: []byte("z"), Version: -1}},
		{who: 0, op: jute.OpSetData, req: &jute.SetDataRequest{Path: "/zookeeper/config", Data: []byte("z"), Version: -1}},
		{who: 0, op: jute.OpSetData, req: &jute.SetDataRequest{Path: "/", Data: []byte("r"), Version: 0}},
		{who: 0, op: jute.OpDelete, req: &jute.DeleteRequest{Path: "/zookeeper/x", Version: -1}},
		{who: 0, op: jute.OpDelete, req: &jute.DeleteRequest{Path: "/zookeeper/quota/x", Version: -1}},
		{who: 0, op: jute.OpDelete, req: &jute.DeleteRequest{Path: "/zookeeper/quota", Version: -1}},
		{who: 0, op: jute.OpDelete, req: &jute.DeleteRequest{Path: "/zookeeper/config", Version: -1}},
		{who: 0, op: jute.OpDelete, req: &jute.DeleteRequest{Path: "/zookeeper", Version: -1}},
		{who: 0, op: jute.OpDelete, req: &jute.DeleteRequest{Path: "/", Version: -1}},
		{who: 0, op: jute.OpDelete, req: &jute.DeleteRequest{Path: "", Version: -1}},
		{who: 0, op: jute.OpDelete, req: &jute.DeleteRequest{Path: "/a/", Version: -1}},
		{who: 0, op: jute.OpDelete, req: &jute.DeleteRequest{Path: "/a//b", Version: -1}},
		{who: 0, op: jute.OpDelete, req: &jute.DeleteRequest{Path: "//a", Version: -1}},
		{who: 0, op: jute.OpDelete, req: &jute.DeleteRequest{Path: "//zookeeper", Version: -1}},
		{who: 0, op: jute.OpDelete, req: &jute.DeleteRequest{Path: "/a", Version: -1}},
		{who: 0, op: jute.OpDelete, req: &jute.DeleteRequest{Path: "/a/b", Version: 3}},
		{who: 0, op: jute.OpDelete, req: &jute.DeleteRequest{Path: "/nope/b", Version: 3}},
		{who: 0, op: jute.OpDelete, req: &jute.DeleteRequest{Path: "/a/nope", Version: 3}},
		{who: 0, op: jute.OpSetData, req: &jute.SetDataRequest{Path: "/a/b", Data: []byte("12345"), Version: 0}},
		{who: 0, op: jute.OpSetData, req: &jute.SetDataRequest{Path: "/a/b", Data: []byte("1"), Version: 0}},
		{who: 0, op: jute.OpSetData, req: &jute.SetDataRequest{Path: "/a/b", Data: nil, Version: -1}},
		{who: 0, op: jute.OpGetData, req: &jute.GetDataRequest{Path: "/a/b"}},
		{who: 0, op: jute.OpSetData, req: &jute.SetDataRequest{Path: "/a/b/", Data: nil, Version: -1}},
		{who: 0, op: jute.OpSetData, req: &jute.SetDataRequest{Path: "/nope", Data: nil, Version: 7}},
		{who: 0, op: jute.OpSetData, req: &jute.SetDataRequest{Path: "/a/b", Data: nil, Version: -2}},
		{who: 0, op: jute.OpSetACL, req: &jute.SetACLRequest{Path: "/a/b", Acl: openACL, Version: 1}},
		{who: 0, op: jute.OpSetACL, req: &jute.SetACLRequest{Path: "/a/b", Acl: openACL, Version: 0}},
		{who: 0, op: jute.OpSetACL, req: &jute.SetACLRequest{Path: "/a/b", Acl: openACL, Version: -1}},
		{who: 0, op: jute.OpGetACL, req: &jute.GetACLRequest{Path: "/a/b"}},
		{who: 0, op: jute.OpSetACL, req: &jute.SetACLRequest{Path: "/a/b", Acl: nil, Version: -1}},
		{who: 0, op: jute.OpSetACL, req: &jute.SetACLRequest{Path: "/nope", Acl: nil, Version: -1}},
		{who: 0, op: jute.OpSetACL, req: &jute.SetACLRequest{Path: "/zookeeper/config", Acl: openACL, Version: -1}},
		{who: 0, op: jute.OpGetACL, req: &jute.GetACLRequest{Path: "/zookeeper/config"}},
		{who: 0, op: jute.OpGetACL, req: &jute.GetACLRequest{Path: "/a/b/"}},
		{who: 0, op: jute.OpGetACL, req: &jute.GetACLRequest{Path: ""}},
		{who: 0, op: jute.OpGetData, req: &jute.GetDataRequest{Path: ""}},
		{who: 0, op: jute.OpExists, req: &jute.ExistsRequest{Path: ""}},
		{who: 0, op: jute.OpExists, req: &jute.ExistsRequest{Path: "/a/"}},
		{who: 0, op: jute.OpGetChildren2, req: &jute.GetChildren2Request{Path: ""}},
		{who: 0, op: jute.OpGetChildren, req: &jute.GetChildrenRequest{Path: "/"}},
		{who: 0, op: jute.OpGetAllChildrenNumber, req: &jute.GetAllChildrenNumberRequest{Path: "/"}},
		{who: 0, op: jute.OpGetAllChildrenNumber, req: &jute.GetAllChildrenNumberRequest{Path: ""}},
		{who: 0, op: jute.OpGetAllChildrenNumber, req: &jute.GetAllChildrenNumberRequest{Path: "/a"}},
		{who: 0, op: jute.OpGetAllChildrenNumber, req: &jute.GetAllChildrenNumberRequest{Path: "/a/"}},
		{who: 0, op: jute.OpGetAllChildrenNumber, req: &jute.GetAllChildrenNumberRequest{Path: "/nope"}},
		{who: 0, op: jute.OpGetAllChildrenNumber, req: &jute.GetAllChildrenNumberRequest{Path: "/zookeeper"}},
		{who: 0, op: jute.OpGetEphemerals, req: &jute.GetEphemeralsRequest{PrefixPath: "/a"}},
		{who: 0, op: jute.OpGetEphemerals, req: &jute.GetEphemeralsRequest{PrefixPath: "/a/e-"}},
		{who: 0, op: jute.OpGetEphemerals, req: &jute.GetEphemeralsRequest{PrefixPath: " / "}},
		{who: 0, op: jute.OpGetEphemerals, req: &jute.GetEphemeralsRequest{PrefixPath: "a"}},
		{who: 1, op: jute.OpGetEphemerals, req: &jute.GetEphemeralsRequest{PrefixPath: ""}},
		{who: 0, op: jute.OpCheckWatches, req: &jute.CheckWatchesRequest{Path: "/a", Type: 1}},
		{who: 0, op: jute.OpRemoveWatches, req: &jute.RemoveWatchesRequest{Path: "/a", Type: 3}},
		{who: 0, op: jute.OpGetData, req: &jute.GetDataRequest{Path: "/a", Watch: true}},
		{who: 0, op: jute.OpCheckWatches, req: &jute.CheckWatchesRequest{Path: "/a", Type: 1}},
		{who: 0, op: jute.OpCheckWatches, req: &jute.CheckWatchesRequest{Path: "/a", Type: 2}},
		{who: 0, op: jute.OpCheckWatches, req: &jute.CheckWatchesRequest{Path: "/a", Type: 3}},
		// 3.8.0 answers OK for another connection's watch (compatibility.md, 3.9's rules).
		{who: 1, op: jute.OpCheckWatches, req: &jute.CheckWatchesRequest{Path: "/a", Type: 3}, kept: true},
		{who: 0, op: jute.OpRemoveWatches, req: &jute.RemoveWatchesRequest{Path: "/a", Type: 1}},
		{who: 0, op: jute.OpRemoveWatches, req: &jute.RemoveWatchesRequest{Path: "/a", Type: 3}},
		{who: 0, op: jute.OpRemoveWatches, req: &jute.RemoveWatchesRequest{Path: "/a", Type: 3}},
		{who: 0, op: jute.OpCheckWatches, req: &jute.CheckWatchesRequest{Path: "/nope", Type: 3}},
		{who: 0, op: jute.OpExists, req: &jute.ExistsRequest{Path: "/nope", Watch: true}},
		{who: 0, op: jute.OpCheckWatches, req: &jute.CheckWatchesRequest{Path: "/nope", Type: 2}},
		{who: 0, op: jute.OpCheckWatches, req: &jute.CheckWatchesRequest{Path: "/nope", Type: 1}},
		{who: 0, op: jute.OpRemoveWatches, req: &jute.RemoveWatchesRequest{Path: "/nope", Type: 2}},
		{who: 0, op: jute.OpMulti, req: &jute.MultiRequest{Ops: []jute.MultiOp{
			{Type: jute.OpCheck, Req: &jute.CheckVersionRequest{Path: "/a", Version: 0}},
			{Type: jute.OpCreate, Req: cr("/m", 0)},
			{Type: jute.OpCreate, Req: cr("/m/s-", 2)},
			{Type: jute.OpSetData, Req: &jute.SetDataRequest{Path: "/m", Data: []byte("xyz"), Version: 0}},
			{Type: jute.OpDelete, Req: &jute.DeleteRequest{Path: "/m/s-0000000000", Version: 0}},
			{Type: jute.OpCreate, Req: cr("/m/s-", 2)},
			{Type: jute.OpCreateContainer, Req: cr("/mc", 4)},
			{Type: jute.OpCreateTTL, Req: ttl("/mt", 5, 100)},
		}}},
		{who: 0, op: jute.OpGetData, req: &jute.GetDataRequest{Path: "/m"}},
		{who: 0, op: jute.OpGetChildren2, req: &jute.GetChildren2Request{Path: "/m"}},
		{who: 0, op: jute.OpMulti, req: &jute.MultiRequest{Ops: []jute.MultiOp{
			{Type: jute.OpCreate, Req: cr("/m2", 0)},
			{Type: jute.OpSetData, Req: &jute.SetDataRequest{Path: "/m2", Data: []byte("xyz"), Version: 1}},
			{Type: jute.OpCreate, Req: cr("/m3", 0)},
		}}},
		{who: 0, op: jute.OpMulti, req: &jute.MultiRequest{Ops: []jute.MultiOp{
			{Type: jute.OpCheck, Req: &jute.CheckVersionRequest{Path: "/nope", Version: -1}},
			{Type: jute.OpCreate, Req: cr("/m3", 0)},
		}}},
		{who: 0, op: jute.OpMulti, req: &jute.MultiRequest{Ops: []jute.MultiOp{
			{Type: jute.OpCreate, Req: cr("/m4", 0)},
			{Type: jute.OpCreate, Req: cr("/m4/x", 13)},
		}}},
		{who: 0, op: jute.OpMulti, req: &jute.MultiRequest{Ops: []jute.MultiOp{
			{Type: jute.OpCreate, Req: cr("/m5", 1)},
			{Type: jute.OpCreate, Req: cr("/m5/x", 0)},
		}}},
		{who: 0, op: jute.OpMulti, req: &jute.MultiRequest{}},
		{who: 0, op: jute.OpMulti, req: &jute.MultiRequest{Ops: []jute.MultiOp{
			{Type: jute.OpCreate, Req: cr("/m6", 0)},
			{Type: jute.OpDelete, Req: &jute.DeleteRequest{Path: "/m6", Version: -1}},
			{Type: jute.OpCreate, Req: cr("/m6", 0)},
			{Type: jute.OpCreate, Req: cr("/m6/s", 2)},
		}}},
		{who: 0, op: jute.OpGetChildren2, req: &jute.GetChildren2Request{Path: "/m6"}},
		{who: 0, op: jute.OpExists, req: &jute.ExistsRequest{Path: "/m6"}},
		{who: 0, op: jute.OpMultiRead, req: &jute.MultiRequest{Ops: []jute.MultiOp{
			{Type: jute.OpGetData, Req: &jute.GetDataRequest{Path: "/m"}},
			{Type: jute.OpGetData, Req: &jute.GetDataRequest{Path: "/nope"}},
			{Type: jute.OpGetChildren, Req: &jute.GetChildrenRequest{Path: "/m"}},
			{Type: jute.OpGetChildren, Req: &jute.GetChildrenRequest{Path: "/m/"}},
			{Type: jute.OpGetData, Req: &jute.GetDataRequest{Path: ""}},
		}}},
		{who: 0, op: jute.OpMultiRead, req: &jute.MultiRequest{}},
		{who: 0, op: jute.OpGetEphemerals, req: &jute.GetEphemeralsRequest{PrefixPath: "/"}},
	}
	return steps
}

// moreSteps follow opsSteps in the same script: the system nodes read every way,
// ephemerals of two sessions through a multi, a failed multi's traces, multis and
// multiReads of every op type, ACLs and the order of their checks, null data.
func moreSteps() []opStep {
	cr := func(p string, flags int32) *jute.CreateRequest {
		return &jute.CreateRequest{Path: p, Data: []byte("d"), Acl: openACL, Flags: flags}
	}
	var steps []opStep
	add := func(who int, op int32, req jute.Record) { steps = append(steps, opStep{who: who, op: op, req: req}) }
	keep := func(who int, op int32, req jute.Record) {
		steps = append(steps, opStep{who: who, op: op, req: req, kept: true})
	}
	for _, p := range []string{"/zookeeper", "/zookeeper/quota", "/zookeeper/config", "/"} {
		add(0, jute.OpGetData, &jute.GetDataRequest{Path: p})
		add(0, jute.OpGetACL, &jute.GetACLRequest{Path: p})
		add(0, jute.OpGetChildren2, &jute.GetChildren2Request{Path: p})
		add(0, jute.OpExists, &jute.ExistsRequest{Path: p})
		add(0, jute.OpGetAllChildrenNumber, &jute.GetAllChildrenNumberRequest{Path: p})
	}
	add(1, jute.OpCreate, cr("/e", jute.FlagEphemeral))
	add(0, jute.OpSetData, &jute.SetDataRequest{Path: "/e", Data: []byte("x"), Version: -1})
	add(0, jute.OpCreate, cr("/e/x", 0))
	add(0, jute.OpGetEphemerals, &jute.GetEphemeralsRequest{PrefixPath: "/"})
	add(1, jute.OpGetEphemerals, &jute.GetEphemeralsRequest{PrefixPath: "/"})
	add(0, jute.OpMulti, &jute.MultiRequest{Ops: []jute.MultiOp{
		{Type: jute.OpSetData, Req: &jute.SetDataRequest{Path: "/e", Data: []byte("1"), Version: 1}},
		{Type: jute.OpSetData, Req: &jute.SetDataRequest{Path: "/e", Data: []byte("22"), Version: 2}},
		{Type: jute.OpCheck, Req: &jute.CheckVersionRequest{Path: "/e", Version: 3}},
		{Type: jute.OpDelete, Req: &jute.DeleteRequest{Path: "/e", Version: 3}},
		{Type: jute.OpCreate, Req: cr("/e", 0)},
		{Type: jute.OpCreate, Req: cr("/e/x", jute.FlagEphemeral)},
	}})
	add(1, jute.OpGetEphemerals, &jute.GetEphemeralsRequest{PrefixPath: "/"})
	add(0, jute.OpGetEphemerals, &jute.GetEphemeralsRequest{PrefixPath: "/"})
	add(0, jute.OpGetChildren2, &jute.GetChildren2Request{Path: "/e"})
	add(0, jute.OpDelete, &jute.DeleteRequest{Path: "/e/x", Version: 0})
	add(0, jute.OpGetEphemerals, &jute.GetEphemeralsRequest{PrefixPath: "/"})
	// A failed multi leaves no trace: no sequence number used, no ephemeral, no container.
	add(0, jute.OpCreate, cr("/r", 0))
	add(0, jute.OpMulti, &jute.MultiRequest{Ops: []jute.MultiOp{
		{Type: jute.OpCreate, Req: cr("/r/x", jute.FlagPersistentSequential)},
		{Type: jute.OpCreate, Req: cr("/r/e", jute.FlagEphemeral)},
		{Type: jute.OpCreateContainer, Req: cr("/r/c", jute.FlagContainer)},
		{Type: jute.OpSetData, Req: &jute.SetDataRequest{Path: "/r", Data: []byte("123"), Version: -1}},
		{Type: jute.OpDelete, Req: &jute.DeleteRequest{Path: "/r/x0000000000", Version: -1}},
		{Type: jute.OpCreate, Req: cr("/nope/z", 0)},
	}})
	add(0, jute.OpGetData, &jute.GetDataRequest{Path: "/r"})
	add(0, jute.OpGetChildren2, &jute.GetChildren2Request{Path: "/r"})
	add(0, jute.OpGetEphemerals, &jute.GetEphemeralsRequest{PrefixPath: "/"})
	add(0, jute.OpCreate, cr("/r/x", jute.FlagPersistentSequential))
	add(0, jute.OpGetAllChildrenNumber, &jute.GetAllChildrenNumberRequest{Path: "/"})
	// Ops a multiRead cannot carry, alone and mixed; writes mixed with reads in a multi.
	gd := &jute.GetDataRequest{Path: "/r"}
	for _, o := range []jute.MultiOp{
		{Type: jute.OpSetACL, Req: &jute.SetACLRequest{Path: "/r", Acl: openACL, Version: -1}},
		{Type: jute.OpSync, Req: &jute.SyncRequest{Path: "/r"}},
		{Type: jute.OpGetChildren2, Req: &jute.GetChildren2Request{Path: "/r"}},
		{Type: jute.OpExists, Req: &jute.ExistsRequest{Path: "/r"}},
		{Type: jute.OpDeleteContainer, Req: &jute.DeleteRequest{Path: "/r", Version: -1}},
		{Type: jute.OpMulti, Req: &jute.SyncRequest{Path: "/r"}},
		{Type: 99, Req: &jute.SyncRequest{Path: "/r"}},
		{Type: jute.OpCreate, Req: cr("/b", 0)},
		{Type: jute.OpCheck, Req: &jute.CheckVersionRequest{Path: "/r", Version: -1}},
	} {
		add(0, jute.OpMultiRead, rawMulti{o})
		add(0, jute.OpMultiRead, rawMulti{{Type: jute.OpGetData, Req: gd}, o})
	}
	add(0, jute.OpMulti, rawMulti{{Type: jute.OpCreate, Req: cr("/b", 0)}, {Type: jute.OpGetData, Req: gd}})
	add(0, jute.OpMulti, rawMulti{{Type: jute.OpGetData, Req: gd}, {Type: jute.OpCreate, Req: cr("/b", 0)}})
	add(0, jute.OpMulti, rawMulti{{Type: jute.OpGetData, Req: gd}})
	// A multi's ops re-typed by their flags, TTL in and out of a multi.
	ttl := func(p string, flags int32, ttl int64) *jute.CreateTTLRequest {
		return &jute.CreateTTLRequest{Path: p, Data: []byte("d"), Acl: openACL, Flags: flags, Ttl: ttl}
	}
	add(0, jute.OpMulti, rawMulti{{Type: jute.OpCheck, Req: &jute.CheckVersionRequest{Path: "/r/", Version: -1}}})
	add(0, jute.OpMulti, rawMulti{{Type: jute.OpSetData, Req: &jute.SetDataRequest{Path: "/r", Version: -1}},
		{Type: jute.OpCheck, Req: &jute.CheckVersionRequest{Path: "/r", Version: 1}}})
	add(0, jute.OpMulti, rawMulti{{Type: jute.OpCreateTTL, Req: ttl("/mt", 0, 100)}})
	add(0, jute.OpMulti, rawMulti{{Type: jute.OpCreateTTL, Req: ttl("/mt1", 5, 0)}})
	add(0, jute.OpMulti, rawMulti{{Type: jute.OpCreateTTL, Req: ttl("/mt", 4, 100)}})
	add(0, jute.OpMulti, rawMulti{{Type: jute.OpCreateTTL, Req: ttl("/mt", 0, -1)}})
	add(0, jute.OpMulti, rawMulti{{Type: jute.OpCreate, Req: cr("/mt2", 5)}})
	add(0, jute.OpMulti, rawMulti{{Type: jute.OpCreate, Req: cr("/mt2", 0)}, {Type: jute.OpCreate, Req: cr("/mt2/x", 6)}})
	add(0, jute.OpMulti, rawMulti{{Type: jute.OpCheck, Req: &jute.CheckVersionRequest{Path: "/nope", Version: -1}},
		{Type: jute.OpCreate, Req: cr("/mt2", 5)}, {Type: jute.OpCreate, Req: cr("/mt2", 0)}})
	add(0, jute.OpMulti, rawMulti{{Type: jute.OpCreate, Req: cr("/mt2", 0)}, {Type: jute.OpCreate, Req: cr("/mt2", 0)},
		{Type: jute.OpCreate, Req: cr("/mt2/x", 6)}})
	add(0, jute.OpMulti, rawMulti{{Type: jute.OpCreateContainer, Req: cr("/mt3", 0)}})
	add(0, jute.OpMulti, rawMulti{{Type: jute.OpCreateContainer, Req: cr("/mt4", 1)}})
	add(0, jute.OpMulti, rawMulti{{Type: jute.OpCreate, Req: cr("/mt5", 4)}})
	add(0, jute.OpMulti, rawMulti{{Type: jute.OpCreate, Req: cr("/mt6", 1)}, {Type: jute.OpCreate, Req: cr("/mt7", 9)}})
	add(0, jute.OpGetEphemerals, &jute.GetEphemeralsRequest{PrefixPath: "/"})
	// Null data, read alone and in a multiRead; a create2 inside a multi (3.9's result,
	// with its stat: compatibility.md).
	add(0, jute.OpCreate, &jute.CreateRequest{Path: "/n", Acl: openACL})
	add(0, jute.OpMultiRead, rawMulti{{Type: jute.OpGetData, Req: &jute.GetDataRequest{Path: "/n"}},
		{Type: jute.OpGetChildren, Req: &jute.GetChildrenRequest{Path: "/n"}}})
	keep(0, jute.OpMulti, rawMulti{{Type: jute.OpSetData, Req: &jute.SetDataRequest{Path: "/n", Version: -1}},
		{Type: jute.OpCreate2, Req: &jute.CreateRequest{Path: "/n/x", Acl: openACL}}})
	add(0, jute.OpMultiRead, rawMulti{{Type: jute.OpGetData, Req: &jute.GetDataRequest{Path: "/n"}},
		{Type: jute.OpGetData, Req: &jute.GetDataRequest{Path: "/n/x"}}})
	add(0, jute.OpCreate, rawBody(append(jute.Marshal(&jute.CreateRequest{Path: "/tb", Acl: openACL}), 9, 9)))
	add(0, jute.OpGetData, rawBody(append(jute.Marshal(&jute.GetDataRequest{Path: "/tb"}), 1, 2, 3)))
	// Watches by path as given: 3.8.0's checkWatches throws on a path without a slash
	// (compatibility.md, 3.9's rules).
	keep(0, jute.OpCheckWatches, &jute.CheckWatchesRequest{Path: "a", Type: 1})
	add(0, jute.OpAddWatch, &jute.AddWatchRequest{Path: "a", Mode: 0})
	keep(0, jute.OpCheckWatches, &jute.CheckWatchesRequest{Path: "a", Type: 2})
	add(0, jute.OpRemoveWatches, &jute.RemoveWatchesRequest{Path: "a", Type: 3})
	return append(steps, aclSteps()...)
}

// aclSteps set ACLs of every permission and check which error comes first.
func aclSteps() []opStep {
	acl := func(perms int32) []jute.ACL {
		return []jute.ACL{{Perms: perms, Id: jute.Id{Scheme: "world", Id: "anyone"}}}
	}
	bad := []jute.ACL{{Perms: 31, Id: jute.Id{Scheme: "digest", Id: "nocolon"}}}
	cr := func(p string, a []jute.ACL, flags int32) *jute.CreateRequest {
		return &jute.CreateRequest{Path: p, Acl: a, Flags: flags}
	}
	var steps []opStep
	add := func(op int32, req jute.Record) { steps = append(steps, opStep{op: op, req: req}) }
	for _, n := range []struct {
		p     string
		perms int32
	}{{"/ro", 1}, {"/nc", 27}, {"/nd", 23}, {"/nw", 29}, {"/na", 15}, {"/none", 0}} {
		add(jute.OpCreate, cr(n.p, openACL, 0))
		add(jute.OpCreate, cr(n.p+"/x", openACL, 0))
		add(jute.OpSetACL, &jute.SetACLRequest{Path: n.p, Acl: acl(n.perms), Version: -1})
	}
	add(jute.OpCreate, cr("/ro/x", openACL, 0))
	add(jute.OpCreate, cr("/ro/y/.", openACL, 0))
	add(jute.OpCreate, cr("/ro/.", openACL, 0))
	add(jute.OpCreate, cr("/ro/", openACL, 0))
	add(jute.OpCreate, cr("/ro/x", bad, 0))
	add(jute.OpCreate, cr("/ro/z", openACL, 9))
	add(jute.OpCreate, cr("/ro/x/y", openACL, 0))
	add(jute.OpCreate, cr("/nc/s", openACL, jute.FlagPersistentSequential))
	add(jute.OpCreate2, cr("/nd/y", openACL, 0))
	add(jute.OpDelete, &jute.DeleteRequest{Path: "/nd/x", Version: -1})
	add(jute.OpDelete, &jute.DeleteRequest{Path: "/nd/none", Version: -1})
	add(jute.OpDelete, &jute.DeleteRequest{Path: "/nd/x", Version: 99})
	add(jute.OpDelete, &jute.DeleteRequest{Path: "/nd", Version: -1})
	add(jute.OpDelete, &jute.DeleteRequest{Path: "/ro/x", Version: -1})
	add(jute.OpSetData, &jute.SetDataRequest{Path: "/nw", Version: 99})
	add(jute.OpSetData, &jute.SetDataRequest{Path: "/nw/", Version: 99})
	add(jute.OpSetData, &jute.SetDataRequest{Path: "/nw/none", Version: 99})
	add(jute.OpSetACL, &jute.SetACLRequest{Path: "/na", Acl: openACL, Version: -1})
	add(jute.OpSetACL, &jute.SetACLRequest{Path: "/na", Acl: openACL, Version: 99})
	add(jute.OpSetACL, &jute.SetACLRequest{Path: "/na", Acl: bad, Version: 99})
	add(jute.OpSetACL, &jute.SetACLRequest{Path: "/na/", Acl: bad, Version: 99})
	add(jute.OpGetACL, &jute.GetACLRequest{Path: "/na"})
	add(jute.OpGetACL, &jute.GetACLRequest{Path: "/none"})
	add(jute.OpGetACL, &jute.GetACLRequest{Path: "/ro"})
	add(jute.OpGetData, &jute.GetDataRequest{Path: "/none"})
	add(jute.OpGetChildren, &jute.GetChildrenRequest{Path: "/none"})
	add(jute.OpGetChildren2, &jute.GetChildren2Request{Path: "/none"})
	add(jute.OpGetAllChildrenNumber, &jute.GetAllChildrenNumberRequest{Path: "/none"})
	add(jute.OpMulti, rawMulti{{Type: jute.OpCheck, Req: &jute.CheckVersionRequest{Path: "/none", Version: 99}}})
	add(jute.OpMulti, rawMulti{{Type: jute.OpCheck, Req: &jute.CheckVersionRequest{Path: "/none/x", Version: 99}}})
	add(jute.OpMulti, rawMulti{{Type: jute.OpSetData, Req: &jute.SetDataRequest{Path: "/none/x", Version: 99}},
		{Type: jute.OpDelete, Req: &jute.DeleteRequest{Path: "/none/x", Version: -1}}})
	add(jute.OpMultiRead, rawMulti{{Type: jute.OpGetData, Req: &jute.GetDataRequest{Path: "/none"}},
		{Type: jute.OpGetChildren, Req: &jute.GetChildrenRequest{Path: "/none"}},
		{Type: jute.OpGetData, Req: &jute.GetDataRequest{Path: "/none/x"}}})
	add(jute.OpSetACL, &jute.SetACLRequest{Path: "/none/x", Acl: acl(0), Version: -1})
	add(jute.OpGetACL, &jute.GetACLRequest{Path: "/none/x"})
	add(jute.OpCreate, cr("/zero", []jute.ACL{}, 0))
	add(jute.OpCreate, cr("/dup", append(acl(1), acl(1)...), 0))
	add(jute.OpGetACL, &jute.GetACLRequest{Path: "/dup"})
	add(jute.OpCreate, cr("/mix", append(acl(1), acl(3)...), 0))
	add(jute.OpGetACL, &jute.GetACLRequest{Path: "/mix"})
	add(jute.OpCreate, cr("/big", acl(0x7fffffff), 0))
	add(jute.OpCreate, cr("/big/x", openACL, 0))
	add(jute.OpCreate, cr("/neg", acl(-1), 0))
	add(jute.OpGetACL, &jute.GetACLRequest{Path: "/neg"})
	return steps
}

// nullPathSteps send a null path (length -1) in every op: zkraft reads it as "", which
// ZooKeeper 3.8.0 mostly answers with MarshallingError (compatibility.md). They come
// last: a multi of them uses a zxid on zkraft only.
func nullPathSteps() []opStep {
	null := []byte{0xff, 0xff, 0xff, 0xff}
	cat := func(parts ...[]byte) rawBody {
		var out []byte
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	i32 := func(v int32) []byte { return jute.Marshal(&jute.ErrorResponse{Err: v}) }
	no := []byte{0}
	acl := jute.Marshal(&jute.SetACLRequest{Acl: openACL})
	acl = acl[4 : len(acl)-4] // the vector, between an empty path and the version
	end := jute.Marshal(&jute.MultiHeader{Type: -1, Done: true, Err: -1})
	head := func(op int32) []byte { return jute.Marshal(&jute.MultiHeader{Type: op, Err: -1}) }
	same := func(op int32, req jute.Record) opStep { return opStep{op: op, req: req} }
	kept := func(op int32, req jute.Record) opStep { return opStep{op: op, req: req, kept: true} }
	return []opStep{
		kept(jute.OpGetData, cat(null, no)),
		kept(jute.OpExists, cat(null, no)),
		kept(jute.OpGetChildren, cat(null, no)),
		kept(jute.OpGetChildren2, cat(null, no)),
		kept(jute.OpGetACL, cat(null)),
		kept(jute.OpGetAllChildrenNumber, cat(null)),
		same(jute.OpGetEphemerals, cat(null)),
		kept(jute.OpCheckWatches, cat(null, i32(3))),
		same(jute.OpRemoveWatches, cat(null, i32(3))),
		same(jute.OpAddWatch, cat(null, i32(0))),
		kept(jute.OpCreate, cat(null, null, acl, i32(0))),
		same(jute.OpCreate, cat(i32(3), []byte("/nb"), null, null, i32(0))),
		same(jute.OpCreate, cat(i32(3), []byte("/nb"), null, acl, i32(0))),
		same(jute.OpGetData, &jute.GetDataRequest{Path: "/nb"}),
		kept(jute.OpDelete, cat(null, i32(-1))),
		same(jute.OpSetData, cat(null, null, i32(-1))),
		same(jute.OpSetData, cat(i32(3), []byte("/nb"), null, i32(-1))),
		same(jute.OpSetACL, cat(null, acl, i32(-1))),
		same(jute.OpSetACL, cat(i32(3), []byte("/nb"), null, i32(-1))),
		kept(jute.OpMulti, cat(head(jute.OpCreate), null, null, acl, i32(0), end)),
		kept(jute.OpMulti, cat(head(jute.OpDelete), null, i32(-1), end)),
		kept(jute.OpMultiRead, cat(head(jute.OpGetData), null, no, end)),
	}
}

// Every op, its checks and its answers as ZooKeeper 3.8 gives them, on a standalone
// server.
func TestOpsMatchZooKeeper(t *testing.T) {
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	steps := append(opsSteps(), moreSteps()...)
	steps = append(steps, nullPathSteps()...)
	zk, us := opsOnStandalone(t, ztest.Options{}, 2, steps)
	compareOps(t, steps, zk, us)
}

// The same with zookeeper.extendedTypesEnabled=false: TTL creates are Unimplemented, in
// and out of a multi, whatever their ttl.
func TestOpsMatchZooKeeperWithoutExtendedTypes(t *testing.T) {
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	steps := opsSteps()
	zk, us := opsOnStandalone(t, ztest.Options{JVMFlags: []string{"-Dzookeeper.extendedTypesEnabled=false"}}, 2, steps)
	compareOps(t, steps, zk, us)
}

// The same through a follower of 3-member ensembles: the write forwarded to the leader,
// the reply from the follower.
func TestOpsMatchZooKeeperEnsemble(t *testing.T) {
	t.Parallel()
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	steps := opsSteps()
	zk, us := opsOnEnsembles(t, ztest.Options{}, 2, steps)
	compareOps(t, steps, zk, us)
}

// Container and TTL cleanup (ContainerManager): which nodes go and when (a container
// that never had a child stays; one whose children all went, by delete, by a multi, by
// their session's end, goes; a TTL node goes once empty and unchanged for its ttl; a
// container emptied by the cleanup itself goes on the next pass), and the parents'
// stats and the events after it. Sessions end, sequence numbers stick on a taken name.
func TestCleanupMatchesZooKeeper(t *testing.T) {
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	cr := func(p string, flags int32) *jute.CreateRequest {
		return &jute.CreateRequest{Path: p, Data: []byte("d"), Acl: openACL, Flags: flags}
	}
	ttl := func(p string, flags int32, ttl int64) *jute.CreateTTLRequest {
		return &jute.CreateTTLRequest{Path: p, Data: []byte("d"), Acl: openACL, Flags: flags, Ttl: ttl}
	}
	del := func(p string) *jute.DeleteRequest { return &jute.DeleteRequest{Path: p, Version: -1} }
	ls := func(p string) *jute.GetChildren2Request { return &jute.GetChildren2Request{Path: p} }
	watch := func(p string) *jute.ExistsRequest { return &jute.ExistsRequest{Path: p, Watch: true} }
	wait := opStep{op: opPause, req: pause(3500 * time.Millisecond)}
	steps := []opStep{
		{op: jute.OpCreate, req: &jute.CreateRequest{Path: "/null", Acl: openACL}},
		{op: jute.OpGetData, req: &jute.GetDataRequest{Path: "/null"}},
		{op: jute.OpSetData, req: &jute.SetDataRequest{Path: "/null", Data: []byte{}, Version: -1}},
		{op: jute.OpGetData, req: &jute.GetDataRequest{Path: "/null"}},
		{op: jute.OpSetData, req: &jute.SetDataRequest{Path: "/null", Version: -1}},
		{op: jute.OpGetData, req: &jute.GetDataRequest{Path: "/null"}},
		{op: jute.OpCreate, req: cr("/q", 0)},
		{op: jute.OpCreate, req: cr("/q/s", jute.FlagPersistentSequential)},
		{op: jute.OpCreate, req: cr("/q/s0000000002", 0)},
		{op: jute.OpCreate, req: cr("/q/s", jute.FlagPersistentSequential)},
		{op: jute.OpCreate, req: cr("/q/s", jute.FlagPersistentSequential)},
		{op: jute.OpGetChildren2, req: ls("/q")},
		{who: 1, op: jute.OpCreate, req: cr("/q/e", jute.FlagEphemeral)},
		{who: 1, op: jute.OpCreate, req: cr("/q/f", jute.FlagEphemeralSequential)},
		{who: 1, op: jute.OpCreate, req: cr("/null/g", jute.FlagEphemeralSequential)},
		{op: jute.OpGetChildren, req: &jute.GetChildrenRequest{Path: "/q", Watch: true}},
		{who: 1, op: jute.OpCloseSession},
		{op: jute.OpGetChildren2, req: ls("/q")},
		{op: jute.OpGetChildren2, req: ls("/null")},
		{op: jute.OpCreateContainer, req: cr("/c1", jute.FlagContainer)},
		{op: jute.OpCreateContainer, req: cr("/c2", jute.FlagContainer)},
		{op: jute.OpCreate, req: cr("/c2/x", 0)},
		{op: jute.OpDelete, req: del("/c2/x")},
		{op: jute.OpCreateContainer, req: cr("/c3", jute.FlagContainer)},
		{op: jute.OpCreate, req: cr("/c3/x", 0)},
		{op: jute.OpCreateContainer, req: cr("/c4", jute.FlagContainer)},
		{op: jute.OpMulti, req: &jute.MultiRequest{Ops: []jute.MultiOp{
			{Type: jute.OpCreate, Req: cr("/c4/x", 0)},
			{Type: jute.OpDelete, Req: del("/c4/x")},
		}}},
		{op: jute.OpCreateContainer, req: cr("/c5", jute.FlagContainer)},
		{op: jute.OpCreate, req: cr("/c5", 0)},
		{op: jute.OpCreate, req: cr("/c5/x/y", 0)},
		{op: jute.OpCreate, req: cr("/c7", jute.FlagContainer)},
		{op: jute.OpCreate, req: cr("/c7/x", 0)},
		{op: jute.OpDelete, req: del("/c7/x")},
		{op: jute.OpCreateContainer, req: cr("/p", jute.FlagContainer)},
		{op: jute.OpCreateContainer, req: cr("/p/q", jute.FlagContainer)},
		{op: jute.OpCreate, req: cr("/p/q/x", 0)},
		{op: jute.OpDelete, req: del("/p/q/x")},
		{who: 1, op: jute.OpCreateContainer, req: cr("/c6", jute.FlagContainer)},
		{who: 1, op: jute.OpCreate, req: cr("/c6/e", jute.FlagEphemeral)},
		{op: jute.OpCreate, req: cr("/x", 0)},
		{op: jute.OpCreateContainer, req: cr("/x/c", jute.FlagContainer)},
		{op: jute.OpCreate, req: cr("/x/c/y", 0)},
		{op: jute.OpDelete, req: del("/x/c/y")},
		{op: jute.OpCreateTTL, req: ttl("/t1", jute.FlagPersistentWithTTL, 300)},
		{op: jute.OpCreateTTL, req: ttl("/t2", jute.FlagPersistentWithTTL, 300)},
		{op: jute.OpCreate, req: cr("/t2/x", 0)},
		{op: jute.OpCreateTTL, req: ttl("/t3", jute.FlagPersistentSequentialWithTTL, 300)},
		{op: jute.OpCreateTTL, req: ttl("/t4", jute.FlagPersistentWithTTL, 60000)},
		{op: jute.OpCreateContainer, req: cr("/t4/c", jute.FlagContainer)},
		{op: jute.OpCreate, req: cr("/t4/c/x", 0)},
		{op: jute.OpDelete, req: del("/t4/c/x")},
		{op: jute.OpExists, req: watch("/c2")},
		{op: jute.OpExists, req: watch("/t1")},
		{op: jute.OpGetChildren, req: &jute.GetChildrenRequest{Path: "/x", Watch: true}},
		{who: 1, op: jute.OpCloseSession},
		wait,
		{op: jute.OpGetChildren2, req: ls("/")},
		{op: jute.OpGetChildren2, req: ls("/c1")},
		{op: jute.OpGetChildren2, req: ls("/c3")},
		{op: jute.OpGetChildren2, req: ls("/c5")},
		{op: jute.OpGetChildren2, req: ls("/p")},
		{op: jute.OpGetChildren2, req: ls("/x")},
		{op: jute.OpGetChildren2, req: ls("/t2")},
		{op: jute.OpGetChildren2, req: ls("/t4")},
		{op: jute.OpDelete, req: del("/c3/x")},
		{op: jute.OpSetData, req: &jute.SetDataRequest{Path: "/t2", Version: -1}},
		{op: jute.OpDelete, req: del("/t2/x")},
		wait,
		{op: jute.OpGetChildren2, req: ls("/")},
		{op: jute.OpGetChildren2, req: ls("/c3")},
		{op: jute.OpGetChildren2, req: ls("/t2")},
	}
	opts := ztest.Options{JVMFlags: []string{"-Dznode.container.checkIntervalMs=1000"}}
	zk, us := opsOnStandalone(t, opts, 2, steps)
	compareOps(t, steps, zk, us)
}

// A request zkraft refuses before it reaches its log uses no zxid, where ZooKeeper logs
// an error transaction; a sync uses one on zkraft only (compatibility.md, "zxid
// values"). The error codes are the same.
func TestRequestsUseZxidsAsDocumented(t *testing.T) {
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	create := func(p string) opStep {
		return opStep{op: jute.OpCreate, req: &jute.CreateRequest{Path: p, Acl: openACL}}
	}
	cases := []struct {
		name string
		step opStep
		// how far the reply's zxid is past the write before it, and the next write's
		zk, us int64
	}{
		{"reconfig while disabled", opStep{op: jute.OpReconfig, req: &jute.ReconfigRequest{JoiningServers: "server.5=127.0.0.1:1:2;3", CurConfigId: -1}}, 1, 0},
		{"a create that does not decode", opStep{op: jute.OpCreate, req: rawBody{0, 0, 0, 3, '/', 'z'}}, 1, 0},
		{"a setData that does not decode", opStep{op: jute.OpSetData, req: rawBody{0, 0, 0, 3, '/', 'z'}}, 1, 0},
		{"a multi holding a setACL", opStep{op: jute.OpMulti, req: rawMulti{{Type: jute.OpSetACL, Req: &jute.SetACLRequest{Path: "/", Acl: openACL, Version: -1}}}}, 1, 0},
		{"a multi holding an unknown op", opStep{op: jute.OpMulti, req: rawMulti{{Type: 99, Req: &jute.SyncRequest{Path: "/"}}}}, 1, 0},
		{"sync", opStep{op: jute.OpSync, req: &jute.SyncRequest{Path: "/"}}, 0, 1},
		{"a create that fails", create("/nope/x"), 1, 1},
	}
	run := func(start func(ztest.Options) (*ztest.Server, error), zk bool) {
		s, err := start(ztest.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Stop()
		c := dial(t, s.Addr)
		c.connect(0, nil)
		for i, tc := range cases {
			before := c.call(jute.OpCreate, &jute.CreateRequest{Path: fmt.Sprintf("/b%d", i), Acl: openACL}, nil)
			c.send(tc.step.op, tc.step.req)
			var h jute.ReplyHeader
			c.readFrame(&h)
			after := c.call(jute.OpCreate, &jute.CreateRequest{Path: fmt.Sprintf("/a%d", i), Acl: openACL}, nil)
			want := tc.us
			if zk {
				want = tc.zk
			}
			if before.Err != 0 || after.Err != 0 || h.Zxid != before.Zxid+want || after.Zxid != before.Zxid+want+1 {
				t.Errorf("%s: %s: zxids %d, %d (err %d), %d; want the reply %d past the write before", s.Name, tc.name, before.Zxid, h.Zxid, h.Err, after.Zxid, want)
			}
		}
	}
	run(ztest.StartZooKeeper, true)
	run(ztest.StartZkraft, false)
}

// zk_approximate_data_size counts the root twice (ZooKeeper's node map holds it as "" and
// "/"). A running ZooKeeper adds a change of the root's data once, and counts it twice
// only when it loads a snapshot that holds it; zkraft counts it twice always
// (compatibility.md). Other nodes' data counts once on both.
func TestRootDataSizeAsDocumented(t *testing.T) {
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	for _, start := range []func(ztest.Options) (*ztest.Server, error){ztest.StartZooKeeper, ztest.StartZkraft} {
		s, err := start(ztest.Options{})
		if err != nil {
			t.Fatal(err)
		}
		c := dial(t, s.Addr)
		c.connect(0, nil)
		fresh := mntrInt(t, s.Addr, "approximate_data_size")
		c.expectErr("create /a", c.call(jute.OpCreate, &jute.CreateRequest{Path: "/a", Data: []byte("0123456789"), Acl: openACL}, nil), jute.OK)
		c.expectErr("setData /", c.call(jute.OpSetData, &jute.SetDataRequest{Path: "/", Data: []byte("0123456789"), Version: -1}, &jute.SetDataResponse{}), jute.OK)
		got := mntrInt(t, s.Addr, "approximate_data_size")
		root := 20 // zkraft: "" and "/"
		if s.Name == "zookeeper" {
			root = 10
		}
		if want := fresh + len("/a") + 10 + root; got != want {
			t.Errorf("%s: zk_approximate_data_size %d after the writes, want %d (%d fresh)", s.Name, got, want, fresh)
		}
		s.Stop()
	}
}

// znode.container.maxNeverUsedIntervalMs: a container that never had a child is cleaned
// up once it is that old, as in ZooKeeper 3.8 (ContainerManager); without the setting
// it stays (TestCleanupMatchesZooKeeper).
func TestContainerNeverUsedMatchesZooKeeper(t *testing.T) {
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	cr := func(p string, flags int32) *jute.CreateRequest {
		return &jute.CreateRequest{Path: p, Data: []byte("d"), Acl: openACL, Flags: flags}
	}
	ls := func(p string) *jute.GetChildren2Request { return &jute.GetChildren2Request{Path: p} }
	steps := []opStep{
		{op: jute.OpCreateContainer, req: cr("/never", jute.FlagContainer)},
		{op: jute.OpCreateContainer, req: cr("/full", jute.FlagContainer)},
		{op: jute.OpCreate, req: cr("/full/x", 0)},
		{op: opPause, req: pause(3500 * time.Millisecond)},
		{op: jute.OpCreateContainer, req: cr("/young", jute.FlagContainer)},
		{op: jute.OpGetChildren2, req: ls("/")},
	}
	opts := ztest.Options{JVMFlags: []string{"-Dznode.container.checkIntervalMs=500", "-Dznode.container.maxNeverUsedIntervalMs=1000"}}
	zk, us := opsOnStandalone(t, opts, 1, steps)
	compareOps(t, steps, zk, us)
	if last := zk[len(zk)-1]; strings.Contains(last, "never") || !strings.Contains(last, "young") {
		t.Fatalf("ZooKeeper's tree after the cleanup: %s", last)
	}
}
