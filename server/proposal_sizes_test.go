package server

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// mntrValues parses mntr's key<TAB>value lines.
func mntrValues(out string) map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(l, "\t"); ok {
			m[k] = v
		}
	}
	return m
}

var proposalLine = regexp.MustCompile(`\nProposal sizes last/min/max: (-?\d+)/(-?\d+)/(-?\d+)\n`)

// A ZooKeeper 3.8 leader reports the sizes of the txns it proposed, -1 until the
// first, in mntr (zk_last_proposal_size, zk_max_proposal_size, zk_min_proposal_size:
// collectd's zookeeper plugin reads them), in srvr and stat ("Proposal sizes
// last/min/max") and in the AdminServer's proposal_stats; srst resets them. A follower
// reports none of them. zkraft's leader reported none.
func TestLeaderReportsProposalSizes(t *testing.T) {
	tc := newTestCluster(t, 3)
	lead, follower := tc.leader(), tc.follower()
	sizes := func() [3]int64 {
		t.Helper()
		m := mntrValues(askFourLetter(t, tc.addr(lead), "mntr"))
		var out [3]int64
		for i, k := range []string{"zk_last_proposal_size", "zk_min_proposal_size", "zk_max_proposal_size"} {
			v, err := strconv.ParseInt(m[k], 10, 64)
			if err != nil {
				t.Fatalf("leader's mntr %s = %q: %v", k, m[k], err)
			}
			out[i] = v
		}
		srvr := askFourLetter(t, tc.addr(lead), "srvr")
		want := fmt.Sprintf("\nProposal sizes last/min/max: %d/%d/%d\n", out[0], out[1], out[2])
		if !strings.Contains(srvr, want) {
			t.Fatalf("leader's srvr lacks %q:\n%s", want, srvr)
		}
		return out
	}
	if got := sizes(); got != [3]int64{-1, -1, -1} {
		t.Fatalf("before any proposal last/min/max %v, want -1/-1/-1", got)
	}
	c := zkSession(t, 10*time.Second, tc.addr(follower)) // forwarded: the leader proposes it
	if _, err := c.Create("/small", []byte("x"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	big := make([]byte, 5000)
	if _, err := c.Create("/big", big, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	got := sizes()
	if got[0] <= int64(len(big)) || got[0] != got[2] || got[1] <= 0 || got[1] >= int64(len(big)) {
		t.Fatalf("after a small and a %d-byte create last/min/max %v: want last = max > %d, 0 < min < %d",
			len(big), got, len(big), len(big))
	}
	if _, err := c.Sync("/big"); err != nil { // a sync is no txn: it changes nothing here
		t.Fatal(err)
	}
	if again := sizes(); again != got {
		t.Fatalf("a sync moved last/min/max from %v to %v", got, again)
	}
	askFourLetter(t, tc.addr(lead), "srst")
	if got := sizes(); got != [3]int64{-1, -1, -1} {
		t.Fatalf("after srst last/min/max %v, want -1/-1/-1", got)
	}
	for _, w := range []string{"mntr", "srvr"} {
		out := askFourLetter(t, tc.addr(follower), w)
		if strings.Contains(out, "proposal_size") || proposalLine.MatchString(out) {
			t.Fatalf("the follower's %s reports proposal sizes:\n%s", w, out)
		}
	}
}
