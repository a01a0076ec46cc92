package server

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/server/ztest"
)

// ZooKeeper's quorum metrics, counted alike on both 3-member clusters: eight transactions
// of one client connected to a follower (its createSession, a create, three setData, a
// create that fails, a delete, its closeSession; its sync is none) are proposed and
// committed by the leader and received and committed by each follower, each member
// counts one stretch unavailable, the leader a learner sync per follower. Then a
// follower restarts and replays the eight from its log.
func TestQuorumMetricsMatchZooKeeper(t *testing.T) {
	t.Parallel()
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	const txns = 8
	counts := []string{"proposal_count", "commit_count", "learner_proposal_received_count",
		"learner_commit_received_count"}
	for _, s := range []string{"quorum_ack_latency", "commit_propagation_latency", "propagation_latency",
		"proposal_latency", "dbinittime", "startup_snap_load_time", "unavailable_time",
		"leader_unavailable_time", "follower_sync_time"} {
		counts = append(counts, "cnt_"+s)
	}
	values := func(mntr string, keys []string) string {
		var vals []string
		for _, k := range keys {
			vals = append(vals, k+"="+mntrLine(mntr, k))
		}
		return strings.Join(vals, " ")
	}
	// A learner syncs by the log (diff) or by a snapshot (snap). ZooKeeper's leader
	// sometimes sends a new follower a snapshot; zkraft's sends one only to a member its
	// log no longer reaches, and counts a diff for every learner, a snapshot sent besides
	// (compatibility.md): the syncs are compared.
	syncs := func(name, mntr string) string {
		snap, _ := strconv.Atoi(mntrLine(mntr, "snap_count"))
		diff, _ := strconv.Atoi(mntrLine(mntr, "diff_count"))
		if name == "zkraft" {
			snap = 0
		}
		return fmt.Sprintf(" syncs=%d", snap+diff)
	}
	run := func(start func(int, ztest.Options) (*ztest.Cluster, error)) (members []string, restarted string) {
		c, err := start(3, ztest.Options{Logf: t.Logf})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Stop()
		leader := syncedLeaderOf(t, c)
		if up, _ := strconv.Atoi(mntrLine(askFourLetter(t, c.Members[leader].Addr, "mntr"), "leader_uptime")); up <= 0 {
			t.Errorf("%s: leader_uptime %d on the leader", c.Name, up)
		}
		follower := (leader + 1) % 3
		cl := dial(t, c.Members[follower].Addr)
		cl.connect(0, nil)
		must := func(what string, h jute.ReplyHeader, want jute.Code) {
			t.Helper()
			if jute.Code(h.Err) != want {
				t.Fatalf("%s: %s: error %d, want %d", c.Name, what, h.Err, want)
			}
		}
		must("create", cl.call(jute.OpCreate, &jute.CreateRequest{Path: "/q", Acl: openACL}, nil), 0)
		for i := range 3 {
			must("setData", cl.call(jute.OpSetData, &jute.SetDataRequest{Path: "/q", Data: []byte{byte(i)}, Version: -1}, nil), 0)
		}
		must("create again", cl.call(jute.OpCreate, &jute.CreateRequest{Path: "/q", Acl: openACL}, nil), jute.ErrNodeExists)
		must("delete", cl.call(jute.OpDelete, &jute.DeleteRequest{Path: "/q", Version: -1}, nil), 0)
		must("sync", cl.call(jute.OpSync, &jute.SyncRequest{Path: "/"}, nil), 0)
		must("closeSession", cl.call(jute.OpCloseSession, nil, nil), 0)
		// Every member has applied the eight once each one's propagation count says so.
		mntrs := make([]string, 3)
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			done := 0
			for i, m := range c.Members {
				mntrs[i] = askFourLetter(t, m.Addr, "mntr")
				if mntrLine(mntrs[i], "cnt_propagation_latency") == strconv.Itoa(txns) {
					done++
				}
			}
			if done == 3 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: not every member applied %d transactions:\n%s", c.Name, txns, strings.Join(mntrs, "\n"))
			}
		}
		for i, mntr := range mntrs {
			role := "follower"
			if i == leader {
				role = "leader"
			}
			members = append(members, role+": "+values(mntr, counts)+syncs(c.Name, mntr))
		}
		sort.Strings(members)

		// The follower restarts and loads its state again.
		m := c.Members[follower]
		if err := m.Kill(); err != nil {
			t.Fatal(err)
		}
		if err := m.Restart(false); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			mntr, err := ztest.FourLetter(m.Addr, "mntr")
			if err == nil && mntrLine(mntr, "cnt_dbinittime") == "1" && mntrLine(mntr, "cnt_follower_sync_time") == "1" {
				restarted = values(mntr, []string{"cnt_dbinittime", "cnt_startup_snap_load_time",
					"cnt_startup_txns_loaded", "sum_startup_txns_loaded", "cnt_follower_sync_time", "cnt_unavailable_time",
					"learner_commit_received_count", "cnt_propagation_latency"})
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the restarted follower did not sync: %q", c.Name, mntr)
			}
		}
		return members, restarted
	}
	zkMembers, zkRestart := run(ztest.StartZooKeeperEnsemble)
	usMembers, usRestart := run(ztest.StartZkraftCluster)
	t.Logf("ZooKeeper: %v; restarted: %s", zkMembers, zkRestart)
	if fmt.Sprint(usMembers) != fmt.Sprint(zkMembers) {
		t.Errorf("quorum metrics:\nzkraft    %v\nZooKeeper %v", usMembers, zkMembers)
	}
	if usRestart != zkRestart {
		t.Errorf("a restarted follower:\nzkraft    %s\nZooKeeper %s", usRestart, zkRestart)
	}
}
