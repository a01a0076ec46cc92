package server

import (
	"strconv"
	"testing"
	"time"

	"github.com/zkraft/zkraft/jute"
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
