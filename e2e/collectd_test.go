package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/server/ztest"
)

const (
	collectd          = "/usr/sbin/collectd"
	collectdPluginDir = "/usr/lib/collectd"
	collectdTypesDB   = "/usr/share/collectd/types.db"
)

// collectdConfig is collectd with its zookeeper plugin polling one server every second
// and the csv plugin writing each value to a file named for it; the logfile plugin
// keeps collectd's log out of syslog.
const collectdConfig = `Hostname "e2e"
FQDNLookup false
Interval 1
BaseDir "{{dir}}"
PIDFile "{{dir}}/collectd.pid"
PluginDir "` + collectdPluginDir + `"
TypesDB "` + collectdTypesDB + `"
LoadPlugin logfile
<Plugin logfile>
  LogLevel info
  File "{{dir}}/collectd.log"
  Timestamp true
</Plugin>
LoadPlugin zookeeper
<Plugin zookeeper>
  Host "127.0.0.1"
  Port "{{port}}"
</Plugin>
LoadPlugin csv
<Plugin csv>
  DataDir "{{dir}}/csv"
  StoreRates false
</Plugin>
`

// collectdValues runs collectd against addr until every value it writes has polls
// readings (at most polls+15 s) and returns the last reading of each, by value
// name (the csv file's name without its date: "zookeeper/gauge-znode", ...).
func collectdValues(t *testing.T, addr string, polls int) (map[string]float64, error) {
	dir := t.TempDir()
	_, port, _ := strings.Cut(addr, ":")
	conf := strings.NewReplacer("{{dir}}", dir, "{{port}}", port).Replace(collectdConfig)
	if err := os.WriteFile(filepath.Join(dir, "collectd.conf"), []byte(conf), 0o644); err != nil {
		return nil, err
	}
	p, err := StartProcess(dir, collectd, "-f", "-C", filepath.Join(dir, "collectd.conf"))
	if err != nil {
		return nil, err
	}
	defer p.Stop(5 * time.Second)
	var values map[string]float64
	var readings map[string]int
	deadline := time.Now().Add(time.Duration(polls+15) * time.Second)
	for ; time.Now().Before(deadline) && p.Running(); time.Sleep(500 * time.Millisecond) {
		if values, readings, err = readCollectdCSV(filepath.Join(dir, "csv", "e2e")); err != nil {
			return nil, err
		}
		enough := len(readings) > 0
		for _, n := range readings {
			enough = enough && n >= polls
		}
		if enough {
			break
		}
	}
	p.Stop(5 * time.Second)
	log, _ := os.ReadFile(filepath.Join(dir, "collectd.log"))
	logs := func() string { return string(log) + strings.Join(p.Output(), "\n") }
	if len(values) == 0 {
		return nil, fmt.Errorf("collectd against %s wrote no values:\n%s", addr, logs())
	}
	for name, n := range readings {
		if n < polls {
			return nil, fmt.Errorf("collectd against %s: %s has %d readings, want %d:\n%s", addr, name, n, polls, logs())
		}
	}
	if regexp.MustCompile(`(?i)\berror\b|zookeeper: `).Match(log) {
		return nil, fmt.Errorf("collectd against %s logged errors:\n%s", addr, logs())
	}
	return values, nil
}

// readCollectdCSV reads the csv plugin's files: the last value of each and how many
// readings it has.
func readCollectdCSV(host string) (map[string]float64, map[string]int, error) {
	values, readings := map[string]float64{}, map[string]int{}
	files, _ := filepath.Glob(filepath.Join(host, "*", "*"))
	dated := regexp.MustCompile(`-\d{4}-\d\d-\d\d$`)
	for _, f := range files {
		name := filepath.Base(filepath.Dir(f)) + "/" + dated.ReplaceAllString(filepath.Base(f), "")
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, nil, err
		}
		lines := strings.Split(string(b), "\n")
		for _, l := range lines[:len(lines)-1] { // the last is one collectd is still writing
			epoch, v, ok := strings.Cut(l, ",")
			if !ok || epoch == "epoch" {
				continue
			}
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %q: %v", f, l, err)
			}
			values[name] = x
			readings[name]++
		}
	}
	return values, readings, nil
}

// collectdSame are the values a fresh server that only collectd talks to must report
// alike on ZooKeeper 3.8 and zkraft: the same tree, collectd's own connection, no
// requests (so no latency), nothing outstanding, and on a leader two synced followers
// and no proposal yet (-1). The others are counted differently by nature (open file
// handles of a JVM, packets that include the harness's own four-letter words) and are
// only checked to be there and positive.
var collectdSame = []string{
	"zookeeper/gauge-znode", "zookeeper/gauge-ephemerals", "zookeeper/gauge-watch",
	"zookeeper/bytes-approximate_data_size", "zookeeper/current_connections", "zookeeper/requests-outstanding",
	"zookeeper/latency-min", "zookeeper/latency-avg", "zookeeper/latency-max", "zookeeper/count-quorum",
	"zookeeper/count-synced_followers", "zookeeper/count-pending_syncs",
	"zookeeper/bytes-last_proposal", "zookeeper/bytes-min_proposal", "zookeeper/bytes-max_proposal",
}

var collectdPositive = []string{
	"zookeeper/packets-received", "zookeeper/packets-sent", "zookeeper/file_handles-open", "zookeeper/file_handles-max",
}

// TestCollectdZooKeeperPlugin runs collectd's zookeeper plugin (Debian's collectd-core)
// against ZooKeeper 3.8 and zkraft, each allowing only the four-letter words it needs
// (mntr for collectd, srvr for the harness), standalone and the leader and a follower
// of a 3-member ensemble: collectd must write values of the same names for both, the
// same values where a fresh server's are fixed (collectdSame), and positive ones where
// they only grow. The full form polls longer.
func TestCollectdZooKeeperPlugin(t *testing.T) {
	Require(t, "collectd (collectd-core)", Executable(collectd))
	_, err := os.Stat(filepath.Join(collectdPluginDir, "zookeeper.so"))
	Require(t, "collectd's zookeeper plugin (collectd-core)", err)
	Require(t, "ZooKeeper 3.8", ZooKeeperPresent())
	polls := 3
	if Full() {
		polls = 10
	}
	opts := ztest.Options{ExtraConfig: map[string]string{"4lw.commands.whitelist": "mntr,srvr"}}
	for _, n := range []int{1, 3} {
		name := "standalone"
		if n > 1 {
			name = fmt.Sprintf("%d_members", n)
		}
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			pair := StartPair(t, n, opts)
			roles := []string{"standalone"}
			if n > 1 {
				roles = []string{"leader", "follower"}
			}
			addr := func(c *ztest.Cluster, role string) string {
				if role == "follower" {
					return Followers(t, c)[0]
				}
				return LeaderAddr(t, c)
			}
			// Every collectd at once: each waits for its own readings.
			type run struct {
				values map[string]float64
				err    error
			}
			runs := map[string]chan run{}
			for _, role := range roles {
				for _, c := range []*ztest.Cluster{pair.ZooKeeper, pair.Zkraft} {
					ch := make(chan run, 1)
					runs[c.Name+" "+role] = ch
					go func(a string) {
						v, err := collectdValues(t, a, polls)
						ch <- run{v, err}
					}(addr(c, role))
				}
			}
			got := map[string]map[string]float64{}
			for k, ch := range runs {
				r := <-ch
				if r.err != nil {
					t.Errorf("%s: %v", k, r.err)
				}
				got[k] = r.values
			}
			if t.Failed() {
				t.FailNow()
			}
			for _, role := range roles {
				zk, zr := got["zookeeper "+role], got["zkraft "+role]
				if !slices.Equal(valueNames(zk), valueNames(zr)) {
					t.Fatalf("%s: collectd's values differ\n%s", role, Diff("zookeeper", valueNames(zk), "zkraft", valueNames(zr)))
				}
				equal := 0
				for _, k := range collectdSame {
					if _, ok := zk[k]; !ok {
						continue // a leader's only
					}
					if zk[k] != zr[k] {
						t.Errorf("%s: %s is %v on zkraft, %v on ZooKeeper", role, k, zr[k], zk[k])
					}
					equal++
				}
				for _, k := range collectdPositive {
					if zk[k] <= 0 || zr[k] <= 0 {
						t.Errorf("%s: %s is %v on zkraft, %v on ZooKeeper; want both positive", role, k, zr[k], zk[k])
					}
				}
				if t.Failed() {
					t.Logf("%s values\nzookeeper: %v\nzkraft:    %v", role, zk, zr)
				}
				label := name
				if role != name {
					label += " " + role
				}
				t.Logf("e2e collectd %s: %d values of the same names on ZooKeeper 3.8 and zkraft after %d polls, %d of them equal, zk/zkraft packets-sent %v/%v (%v): %s",
					label, len(zr), polls, equal, zk["zookeeper/packets-sent"], zr["zookeeper/packets-sent"],
					time.Since(start).Round(100*time.Millisecond), strings.Join(valueNames(zr), " "))
			}
		})
	}
}

func valueNames(m map[string]float64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, strings.TrimPrefix(k, "zookeeper/"))
	}
	slices.Sort(out)
	return out
}
