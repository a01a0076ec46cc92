package server

import (
	"strconv"
	"testing"
	"time"

	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/server/ztest"
)

// The AdminServer's fsync_threshold_exceed_count counts the transaction log's
// fdatasyncs slower than fsync.warningthresholdms, as ZooKeeper's FileTxnLog counts them,
// and srst leaves it, as ZooKeeper's reset does.
func TestFsyncThresholdExceedCount(t *testing.T) {
	exceeded := func(s *Server) int64 {
		return s.adminStats(false)["server_stats"].(map[string]any)["fsync_threshold_exceed_count"].(int64)
	}
	for _, c := range []struct {
		threshold time.Duration
		counts    bool
	}{{time.Nanosecond, true}, {time.Hour, false}} {
		s := startServer(t, func(cfg *Config) { cfg.FsyncWarning = c.threshold })
		before := exceeded(s)
		cl := dial(t, s.Addr().String())
		cl.connect(0, nil)
		for i := range 3 {
			if h := cl.call(jute.OpCreate, &jute.CreateRequest{Path: "/n" + strconv.Itoa(i), Acl: openACL}, nil); h.Err != 0 {
				t.Fatalf("create: %d", h.Err)
			}
		}
		got := exceeded(s) - before
		if c.counts && got < 3 || !c.counts && got != 0 {
			t.Errorf("threshold %v: %d fdatasyncs counted slower after three writes", c.threshold, got)
		}
		askFourLetter(t, s.Addr().String(), "srst")
		if c.counts && exceeded(s) < got {
			t.Errorf("srst reset fsync_threshold_exceed_count to %d", exceeded(s))
		}
	}
}

// With forceSync=no ZooKeeper's FileTxnLog writes its log without an fsync and records
// no fsync time; zkraft likewise (persistence/force_sync.go): after the same writes
// both report a zk_cnt_fsynctime of 0, where zkraft with the default counts its
// fdatasyncs.
func TestForceSyncOffMatchesZooKeeper(t *testing.T) {
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	servers := startBoth(t, func(string) ztest.Options {
		return ztest.Options{Logf: t.Logf, JVMFlags: []string{"-Dzookeeper.forceSync=no"}}
	})
	synced, err := ztest.StartZkraft(ztest.Options{Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	defer synced.Stop()
	syncs := func(addr string) string {
		c := rawSession(t, addr)
		for i := range 5 {
			if h := c.call(jute.OpCreate, &jute.CreateRequest{Path: "/n" + strconv.Itoa(i), Acl: openACL}, nil); h.Err != 0 {
				t.Fatalf("%s: create: %d", addr, h.Err)
			}
		}
		return mntrLine(askFourLetter(t, addr, "mntr"), "cnt_fsynctime")
	}
	for name, s := range servers {
		if got := syncs(s.Addr); got != "0" {
			t.Errorf("%s with forceSync=no: zk_cnt_fsynctime %q after five writes", name, got)
		}
	}
	if n, _ := strconv.Atoi(syncs(synced.Addr)); n < 5 {
		t.Errorf("zkraft with forceSync: zk_cnt_fsynctime %d after five writes", n)
	}
}
