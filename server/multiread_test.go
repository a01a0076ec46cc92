package server

import (
	"fmt"
	"testing"

	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/server/ztest"
)

// multiReadCases are multiReads that ZooKeeper refuses, each a different way.
var multiReadCases = []struct {
	name string
	ops  []jute.MultiOp
}{
	// Writes alone are a valid MultiOperationRecord: ZooKeeper's FinalRequestProcessor has
	// begun its MultiResponse when it fails on the first op, and sends it, empty.
	{"a create", []jute.MultiOp{{Type: jute.OpCreate, Req: &jute.CreateRequest{Path: "/b", Acl: openACL}}}},
	{"a check", []jute.MultiOp{{Type: jute.OpCheck, Req: &jute.CheckVersionRequest{Path: "/a", Version: -1}}}},
	{"a delete and a setData", []jute.MultiOp{
		{Type: jute.OpDelete, Req: &jute.DeleteRequest{Path: "/a", Version: -1}},
		{Type: jute.OpSetData, Req: &jute.SetDataRequest{Path: "/a", Version: -1}}}},
	// Reads mixed with writes fail as the record is read: no body.
	{"a getData and a create", []jute.MultiOp{
		{Type: jute.OpGetData, Req: &jute.GetDataRequest{Path: "/a"}},
		{Type: jute.OpCreate, Req: &jute.CreateRequest{Path: "/b", Acl: openACL}}}},
	{"a create and a getChildren", []jute.MultiOp{
		{Type: jute.OpCreate, Req: &jute.CreateRequest{Path: "/b", Acl: openACL}},
		{Type: jute.OpGetChildren, Req: &jute.GetChildrenRequest{Path: "/"}}}},
}

// multiReadReply sends a multiRead of ops and describes the reply: its error code and
// the bytes after the header, in hex.
func multiReadReply(c *rawClient, ops []jute.MultiOp) string {
	c.t.Helper()
	h, body := c.reply(c.send(jute.OpMultiRead, &jute.MultiRequest{Ops: ops}))
	return fmt.Sprintf("err=%d body=%x", h.Err, body)
}

// A multiRead of writes alone is answered MarshallingError followed by an empty
// MultiResponse (its closing header), as ZooKeeper 3.8 answers it; one that mixes reads
// and writes is MarshallingError with no body. Nothing is written either way.
func TestMultiReadOfWritesAnswersAnEmptyResponse(t *testing.T) {
	s := startServer(t, nil)
	c := dial(t, s.Addr().String())
	c.connect(0, nil)
	if h := c.call(jute.OpCreate, &jute.CreateRequest{Path: "/a", Acl: openACL}, nil); h.Err != 0 {
		t.Fatalf("create /a: %d", h.Err)
	}
	empty := fmt.Sprintf("%x", jute.Marshal(&jute.MultiResponse{}))
	if empty != "ffffffff01ffffffff" {
		t.Fatalf("an empty MultiResponse encodes as %s", empty)
	}
	want := []string{"err=-5 body=" + empty, "err=-5 body=" + empty, "err=-5 body=" + empty, "err=-5 body=", "err=-5 body="}
	for i, tc := range multiReadCases {
		if got := multiReadReply(c, tc.ops); got != want[i] {
			t.Errorf("multiRead of %s: %s, want %s", tc.name, got, want[i])
		}
	}
	var kids jute.GetChildrenResponse
	if h := c.call(jute.OpGetChildren, &jute.GetChildrenRequest{Path: "/"}, &kids); h.Err != 0 || len(kids.Children) != 2 {
		t.Fatalf("children of /: %d %v, want [a zookeeper]", h.Err, kids.Children)
	}
	if h := c.call(jute.OpExists, &jute.ExistsRequest{Path: "/a"}, &jute.ExistsResponse{}); h.Err != 0 {
		t.Fatalf("/a after the multiReads: %d", h.Err)
	}
}

// The same replies from ZooKeeper 3.8 and zkraft, byte for byte after the header.
func TestMultiReadRefusalsMatchZooKeeper(t *testing.T) {
	t.Parallel()
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	run := func(start func(ztest.Options) (*ztest.Server, error)) []string {
		s, err := start(ztest.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Stop()
		c := dial(t, s.Addr)
		c.connect(0, nil)
		if h := c.call(jute.OpCreate, &jute.CreateRequest{Path: "/a", Acl: openACL}, nil); h.Err != 0 {
			t.Fatalf("%s: create /a: %d", s.Name, h.Err)
		}
		var out []string
		for _, tc := range multiReadCases {
			out = append(out, multiReadReply(c, tc.ops))
		}
		return out
	}
	zk, us := run(ztest.StartZooKeeper), run(ztest.StartZkraft)
	for i, tc := range multiReadCases {
		if zk[i] != us[i] {
			t.Errorf("multiRead of %s: zookeeper %s, zkraft %s", tc.name, zk[i], us[i])
		}
	}
}
