package server

import (
	"os"
	"strings"
	"testing"

	"github.com/zkraft/zkraft/server/ztest"
)

// quotaRestartScript makes a quota's stats move away from what its data would give a
// fresh count (set data over and under), so a restart shows how each server counts.
var quotaRestartScript = strings.Join([]string{
	"create /r",
	"create /r/a x",
	"setquota -n 10 /r",
	"create /r/b 1234",
	"set /r/a 0123456789",
	"create /r/c",
	"delete /r/b",
	"create -e /r/e eph",
	"listquota /r",
	"quit",
}, "\n") + "\n"

// TestQuotaAfterRestartMatchesZooKeeper: after a restart (ZooKeeper counts every quota
// again when it loads its data; zkraft keeps the counts it agreed on) listquota, the
// stats node and mntr's quota and data size lines are the same on both.
func TestQuotaAfterRestartMatchesZooKeeper(t *testing.T) {
	_, err := os.Stat(zkCli)
	requireClient(t, "zkCli.sh and ZooKeeper 3.8", err == nil && ztest.Available() == nil)
	after := "listquota /r\nget /zookeeper/quota/r/zookeeper_stats\nstat /zookeeper/quota/r/zookeeper_stats\nls /r\nquit\n"
	run := func(start func(ztest.Options) (*ztest.Server, error)) (cli []string) {
		s, err := start(ztest.Options{Logf: t.Logf})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Stop()
		cli = runZkCliScript(t, s.Addr, quotaRestartScript, false)
		cli = append(cli, quotaMntr(t, s.Addr)...)
		if err := s.Kill(); err != nil {
			t.Fatal(err)
		}
		if err := s.Restart(true); err != nil {
			t.Fatal(err)
		}
		cli = append(cli, "-- restarted")
		cli = append(cli, runZkCliScript(t, s.Addr, after, false)...)
		return append(cli, quotaMntr(t, s.Addr)...)
	}
	want := run(ztest.StartZooKeeper)
	got := run(ztest.StartZkraft)
	t.Logf("zookeeper:\n%s", strings.Join(want, "\n"))
	compareLines(t, want, got)
}
