package server

import (
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/quorum"
	"github.com/zkraft/zkraft/server/ztest"
	"github.com/zkraft/zkraft/session"
)

func loopbackAddr(t *testing.T) string {
	t.Helper()
	port, err := ztest.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return "127.0.0.1:" + strconv.Itoa(port)
}

// startCluster starts n in-process servers that form one cluster.
func startCluster(t *testing.T, n int) []*Server {
	t.Helper()
	var peers []quorum.Peer
	for i := 1; i <= n; i++ {
		peers = append(peers, quorum.Peer{ID: strconv.Itoa(i), RaftAddr: loopbackAddr(t), PeerAddr: loopbackAddr(t)})
	}
	servers := make([]*Server, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range servers {
		cfg := DefaultConfig()
		cfg.ClientPort, cfg.ClientPortAddress, cfg.DataDir = 0, "127.0.0.1", t.TempDir()
		cfg.ServerID, cfg.Servers = i+1, peers
		cfg.TickTime = 200 * time.Millisecond
		s, err := New(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		servers[i] = s
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.Start()
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("server %d: %v", i+1, err)
		}
	}
	t.Cleanup(func() {
		for _, s := range servers {
			s.Close()
		}
	})
	return servers
}

// Clients on different members of a 3-server cluster see one tree: a write through any
// member is answered after it is applied there, a read after sync sees it, and a watch
// set on one member fires for a change made through another.
func TestClusterServesClientsOnEveryMember(t *testing.T) {
	servers := startCluster(t, 3)
	clients := make([]*rawClient, 3)
	for i, s := range servers {
		clients[i] = dial(t, s.Addr().String())
		clients[i].connect(0, nil)
	}
	modes := map[string]int{}
	for _, s := range servers {
		modes[s.node.Mode()]++
	}
	if modes["leader"] != 1 || modes["follower"] != 2 {
		t.Fatalf("modes %v", modes)
	}
	for i, c := range clients {
		p := "/from" + strconv.Itoa(i)
		if h := c.call(jute.OpCreate, &jute.CreateRequest{Path: p, Data: []byte(p), Acl: openACL, Flags: jute.FlagEphemeral}, nil); h.Err != 0 {
			t.Fatalf("create via server %d: %d", i+1, h.Err)
		}
		var gd jute.GetDataResponse
		if h := c.call(jute.OpGetData, &jute.GetDataRequest{Path: p}, &gd); h.Err != 0 || string(gd.Data) != p {
			t.Fatalf("read-your-write on server %d: %d %q", i+1, h.Err, gd.Data)
		}
	}
	// A watch on member 3 fires for a change through member 1.
	if h := clients[2].call(jute.OpExists, &jute.ExistsRequest{Path: "/from0", Watch: true}, &jute.ExistsResponse{}); h.Err != 0 {
		t.Fatalf("exists: %d", h.Err)
	}
	clients[0].call(jute.OpSetData, &jute.SetDataRequest{Path: "/from0", Data: []byte("x"), Version: -1}, &jute.SetDataResponse{})
	var eh jute.ReplyHeader
	var ev jute.WatcherEvent
	clients[2].readFrame(&eh, &ev)
	if eh.Xid != jute.XidNotification || ev.Type != jute.EventNodeDataChanged || ev.Path != "/from0" {
		t.Fatalf("watch on another member: %+v %+v", eh, ev)
	}
	// After sync, member 2 has everything.
	if h := clients[1].call(jute.OpSync, &jute.SyncRequest{Path: "/"}, &jute.SyncResponse{}); h.Err != 0 {
		t.Fatalf("sync: %d", h.Err)
	}
	var kids jute.GetChildrenResponse
	if h := clients[1].call(jute.OpGetChildren, &jute.GetChildrenRequest{Path: "/"}, &kids); h.Err != 0 || len(kids.Children) != 4 {
		t.Fatalf("children on member 2: %d %v", h.Err, kids.Children)
	}
	// Every member ends with the same tree.
	deadline := time.Now().Add(10 * time.Second)
	for {
		var digests []uint64
		for _, s := range servers {
			s.node.FSM.Read(func(tr *datatree.Tree, _ *session.Table) { digests = append(digests, tr.Digest()) })
		}
		if digests[0] == digests[1] && digests[1] == digests[2] {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("members did not converge: %x", digests)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A member cut off from the majority drops its clients and refuses new ones, so they
// move to members that can serve them.
func TestMinorityMemberDropsClients(t *testing.T) {
	servers := startCluster(t, 3)
	var lone *Server
	for _, s := range servers {
		if !s.node.IsLeader() {
			lone = s
		}
	}
	c := dial(t, lone.Addr().String())
	c.connect(0, nil)
	for _, s := range servers {
		if s != lone {
			s.Close()
		}
	}
	c.nc.SetReadDeadline(time.Now().Add(15 * time.Second))
	if _, err := c.br.ReadByte(); err == nil || isTimeout(err) {
		t.Fatalf("client of a minority member kept its connection: %v", err)
	}
	d := dial(t, lone.Addr().String())
	req := &jute.Connect{ConnectRequest: jute.ConnectRequest{TimeOut: 10000, Passwd: make([]byte, 16)}}
	d.nc.Write(jute.AppendFrame(nil, req))
	if _, err := jute.ReadFrame(d.br, nil, jute.DefaultMaxBuffer); err == nil {
		t.Fatal("a member without a leader gave out a session")
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}
