package server

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/server/ztest"
)

// A follower removed by reconfig goes on as ZooKeeper 3.8's does, a "non-voting
// follower": srvr on it says follower, a new session on it reads a write made after the
// removal, the leader's mntr counts it in synced_followers and apart in
// synced_non_voting_followers, and its conf shows its own ports and the membership
// without it. (Whether its open connections survive the removal is not
// compared: ZooKeeper 3.8 drops some at moments that vary from run to run.)
func TestRemovedFollowerMatchesZooKeeper(t *testing.T) {
	t.Parallel()
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	extra := map[string]string{"reconfigEnabled": "true", "DigestAuthenticationProvider.superDigest": superDigest}
	observe := func(start func(int, ztest.Options) (*ztest.Cluster, error)) string {
		c, err := start(3, ztest.Options{Logf: t.Logf, ExtraConfig: extra})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Stop()
		l := c.Leader()
		if l < 0 {
			t.Fatalf("%s: no leader", c.Name)
		}
		f := (l + 1) % 3
		z := zkSession(t, 10*time.Second, c.Members[l].Addr)
		if err := z.AddAuth("digest", []byte("super:test")); err != nil {
			t.Fatal(err)
		}
		if _, err := z.IncrementalReconfig(nil, []string{strconv.Itoa(f + 1)}, -1); err != nil {
			t.Fatalf("%s: reconfig -remove %d: %v", c.Name, f+1, err)
		}
		if _, err := z.Create("/after", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatalf("%s: create after the removal: %v", c.Name, err)
		}
		var out []string
		// The removed member may take a moment to reconnect to its leader (ZooKeeper's
		// restarts its follower after the reconfig): each fact is awaited, bounded.
		await := func(what string, ok func() (string, bool)) {
			var last string
			for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
				got, done := ok()
				last = got
				if done || time.Now().After(deadline) {
					break
				}
			}
			out = append(out, what+"="+last)
		}
		await("mode", func() (string, bool) {
			srvr, _ := ztest.FourLetter(c.Members[f].Addr, "srvr")
			for _, line := range strings.Split(srvr, "\n") {
				if mode, ok := strings.CutPrefix(line, "Mode: "); ok {
					return mode, mode == "follower"
				}
			}
			return strings.TrimSpace(srvr), false
		})
		await("reads the write", func() (string, bool) {
			r, _, err := zk.Connect([]string{c.Members[f].Addr}, 10*time.Second, zk.WithLogInfo(false))
			if err != nil {
				return err.Error(), false
			}
			defer r.Close()
			ok, _, err := r.Exists("/after")
			return fmt.Sprint(ok, err), ok && err == nil
		})
		await("leader's synced followers", func() (string, bool) {
			mntr, _ := ztest.FourLetter(c.Members[l].Addr, "mntr")
			got := mntrLine(mntr, "synced_followers") + "/" + mntrLine(mntr, "synced_non_voting_followers")
			return got, got == "2/1"
		})
		// conf on the removed member: its own ports and peer type, and the membership it
		// shows (without itself).
		conf, _ := ztest.FourLetter(c.Members[f].Addr, "conf")
		var keys []string
		servers, self := 0, false
		for _, line := range strings.Split(conf, "\n") {
			k, v, ok := strings.Cut(line, "=")
			switch {
			case !ok:
			case k == "electionPort" || k == "quorumPort":
				keys = append(keys, fmt.Sprintf("%s:%t", k, v != ""))
			case k == "peerType":
				keys = append(keys, k+":"+v)
			case strings.HasPrefix(k, "server."):
				servers++
				self = self || k == "server."+strconv.Itoa(f+1)
			}
		}
		slices.Sort(keys)
		keys = append(keys, fmt.Sprintf("servers:%d", servers), fmt.Sprintf("lists itself:%t", self))
		out = append(out, "conf="+strings.Join(keys, ","))
		return strings.Join(out, " ")
	}
	zkOut, us := observe(ztest.StartZooKeeperEnsemble), observe(ztest.StartZkraftCluster)
	if zkOut != us {
		t.Fatalf("a removed follower:\nzkraft    %s\nZooKeeper %s", us, zkOut)
	}
	t.Logf("both: %s", us)
}
