package server

import (
	"os"
	"os/exec"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/server/ztest"
)

// Quotas as zkCli.sh and kazoo drive them, against ZooKeeper 3.8 and zkraft, with
// zookeeper.enforceQuota off (3.8's default) and on (a -D flag, which zkraft takes from
// JVMFLAGS as the official image passes it).

// quotaCliScript sets soft and hard quotas, writes over them, lists and deletes them.
// /q holds /q, /q/a ("x") and, once created, /q/b ("1234") and /q/c ("y").
var quotaCliScript = strings.Join([]string{
	"create /q",
	"create /q/a x",
	"setquota -n 3 /q",
	"setquota -B 10 /q",
	"listquota /q",
	"get /zookeeper/quota/q/zookeeper_limits",
	"get /zookeeper/quota/q/zookeeper_stats",
	"stat /zookeeper/quota/q/zookeeper_stats",
	"create /q/b 1234",
	"create /q/c y",
	"set /q/a 0123456789",
	"listquota /q",
	"setquota -N 4 /q",
	"create /q/d",
	"create -s /q/s z",
	"delete /q/c",
	"listquota /q",
	"setquota -n 2 /q/a",
	"setquota -n 2 /",
	"setquota -n 1 /zookeeper/quota/x",
	"setquota -n 1 /nope",
	"delquota -N /q",
	"listquota /q",
	"create /q/e",
	"delquota /q",
	"listquota /q",
	"ls -R /zookeeper/quota",
	"create /q/f",
	"setquota -b 3 /q/b",
	"listquota /q/b",
	"set /q/b 123456",
	"listquota /q/b",
	"stat /zookeeper/quota/q/b/zookeeper_stats",
	"delete /q/b",
	"get /zookeeper/quota/q/b/zookeeper_stats",
	"quit",
}, "\n") + "\n"

// quotaMntr is the quota lines of mntr, and approximate_data_size (which ZooKeeper does
// not change when it rewrites a stats node).
func quotaMntr(t *testing.T, addr string) []string {
	t.Helper()
	out, err := ztest.FourLetter(addr, "mntr")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "quota") || strings.HasPrefix(l, "zk_approximate_data_size") {
			lines = append(lines, l)
		}
	}
	sort.Strings(lines)
	return lines
}

func quotaTargets(enforce bool) []string {
	if enforce {
		return []string{"-Dzookeeper.enforceQuota=true"}
	}
	return nil
}

func TestQuotaZkCliMatchesZooKeeper(t *testing.T) {
	t.Parallel()
	_, err := os.Stat(zkCli)
	requireClient(t, "zkCli.sh and ZooKeeper 3.8", err == nil && ztest.Available() == nil)
	for _, enforce := range []bool{false, true} {
		name := "enforceQuota=false"
		if enforce {
			name = "enforceQuota=true"
		}
		t.Run(name, func(t *testing.T) {
			run := func(start func(ztest.Options) (*ztest.Server, error)) (cli, mntr []string) {
				s, err := start(ztest.Options{JVMFlags: quotaTargets(enforce)})
				if err != nil {
					t.Fatal(err)
				}
				defer s.Stop()
				cli = runZkCliScript(t, s.Addr, quotaCliScript, false)
				return cli, quotaMntr(t, s.Addr)
			}
			wantCli, wantMntr := run(ztest.StartZooKeeper)
			gotCli, gotMntr := run(ztest.StartZkraft)
			if len(wantCli) < 30 || len(wantMntr) < 4 {
				t.Fatalf("reference output too short:\n%s\n%s", strings.Join(wantCli, "\n"), strings.Join(wantMntr, "\n"))
			}
			compareLines(t, wantCli, gotCli)
			compareLines(t, wantMntr, gotMntr)
			exceeded := strings.Contains(strings.Join(wantCli, "\n"), "Quota has exceeded")
			if exceeded != enforce {
				t.Errorf("ZooKeeper refused a write over a hard quota: %v, want %v", exceeded, enforce)
			}
			if t.Failed() || testing.Verbose() {
				t.Logf("zookeeper:\n%s\n%s", strings.Join(wantCli, "\n"), strings.Join(wantMntr, "\n"))
			}
		})
	}
}

func TestQuotaKazooMatchesZooKeeper(t *testing.T) {
	t.Parallel()
	requireClient(t, "kazoo and ZooKeeper 3.8", ztest.Available() == nil &&
		exec.Command(systemPy, "-c", "import kazoo").Run() == nil)
	for _, c := range []struct {
		name    string
		opts    ztest.Options
		enforce bool
	}{
		{"enforceQuota=false", ztest.Options{}, false},
		{"JVMFLAGS", ztest.Options{JVMFlags: quotaTargets(true)}, true},
		// ZooKeeper makes a zoo.cfg key it does not know the system property zookeeper.<key>.
		{"zoo.cfg", ztest.Options{ExtraConfig: map[string]string{"enforceQuota": "true"}}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			run := func(start func(ztest.Options) (*ztest.Server, error)) string {
				s, err := start(c.opts)
				if err != nil {
					t.Fatal(err)
				}
				defer s.Stop()
				return run(t, 2*time.Minute, systemPy, "testdata/kazoo_quota.py", s.Addr)
			}
			want, got := run(ztest.StartZooKeeper), run(ztest.StartZkraft)
			if !strings.Contains(want, "done") {
				t.Fatalf("reference run incomplete:\n%s", want)
			}
			compareLines(t, strings.Split(want, "\n"), strings.Split(got, "\n"))
			if c.enforce != strings.Contains(want, "QuotaExceededError") {
				t.Errorf("ZooKeeper's QuotaExceeded with enforceQuota=%v: %v", c.enforce, !c.enforce)
			}
			if t.Failed() || testing.Verbose() {
				t.Logf("zookeeper:\n%s", want)
			}
		})
	}
}
