package server

import (
	"fmt"
	"testing"
	"time"

	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/server/ztest"
)

// One reply larger than the most a connection may have queued (a multiRead of 34 nodes
// of a million bytes each, 34 MB) is sent, as ZooKeeper sends it, to a client that reads
// it (one whose jute.maxbuffer allows it): the queue's bound is for replies a client
// leaves unread, and a client that reads is not a slow one. Before, the connection was
// closed as a slow client at once, and a client that retried was closed every time.
func TestAReplyLargerThanTheQueueBoundIsSent(t *testing.T) {
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	const nodes, size = 34, 1000000
	if nodes*size <= maxQueuedBytes {
		t.Fatalf("the reply (%d bytes) must be larger than maxQueuedBytes (%d)", nodes*size, maxQueuedBytes)
	}
	read := func(name string, start func(ztest.Options) (*ztest.Server, error)) string {
		s, err := start(ztest.Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		defer s.Stop()
		c := dial(t, s.Addr)
		c.connect(0, nil)
		var ops []jute.MultiOp
		for i := 0; i < nodes; i++ {
			p := fmt.Sprintf("/big%02d", i)
			if h := c.call(jute.OpCreate, &jute.CreateRequest{Path: p, Data: make([]byte, size), Acl: openACL}, nil); h.Err != 0 {
				t.Fatalf("%s: create %s: %d", name, p, h.Err)
			}
			ops = append(ops, jute.MultiOp{Type: jute.OpGetData, Req: &jute.GetDataRequest{Path: p}})
		}
		xid := c.send(jute.OpMultiRead, &jute.MultiRequest{Ops: ops})
		c.nc.SetReadDeadline(time.Now().Add(30 * time.Second))
		f, err := jute.ReadFrame(c.br, nil, 2*nodes*size)
		if err != nil {
			return fmt.Sprintf("no reply: %v", err)
		}
		d := jute.NewDecoder(f)
		var h jute.ReplyHeader
		var mr jute.MultiResponse
		h.Decode(d)
		mr.Decode(d)
		if d.Err != nil || h.Xid != xid || h.Err != 0 {
			return fmt.Sprintf("reply xid %d err %d (%v)", h.Xid, h.Err, d.Err)
		}
		total := 0
		for _, r := range mr.Results {
			if gd, ok := r.Resp.(*jute.GetDataResponse); ok {
				total += len(gd.Data)
			}
		}
		if h := c.ping(); h.Err != 0 {
			return fmt.Sprintf("ping after the reply: %d", h.Err)
		}
		return fmt.Sprintf("%d results, %d bytes of data, the connection kept", len(mr.Results), total)
	}
	zk, us := read("zookeeper", ztest.StartZooKeeper), read("zkraft", ztest.StartZkraft)
	if zk != us {
		t.Fatalf("zookeeper: %s; zkraft: %s", zk, us)
	}
	t.Log(us)
}
