// Package e2e drives zkraft with real applications that use ZooKeeper, next to Apache
// ZooKeeper 3.8 as the reference.
package e2e

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/server/ztest"
)

// TestClickHouse runs two ClickHouse 18.16 replicas of one shard against a 3-member
// zkraft cluster: a ReplicatedMergeTree table created on each replica and one created ON
// CLUSTER (distributed DDL), inserts on each replica seen on the other, a block inserted
// three times stored once, OPTIMIZE FINAL's merge replicated, system.zookeeper answered,
// and the zkraft leader killed with SIGKILL during the inserts: every insert is retried
// with the same block until ClickHouse acknowledges it, and in the end both replicas hold
// every acknowledged block exactly once (see settleOrphans for what an insert answered
// "Unknown status" may leave). An ALTER and a mutation run too, a quorum insert, and a
// client without ClickHouse's digest identity is refused its nodes.
//
// With ZKRAFT_E2E=full the same script runs, with more inserts, against a ZooKeeper 3.8
// ensemble too, and the contents (rows, system.zookeeper listings, ACL answers) must be
// the same. It prints one line of figures, "e2e clickhouse: ...". The ClickHouse logs'
// ZooKeeper warnings and errors and each member's are logged (go test -v); with
// ZKRAFT_E2E_KEEP=<dir> the ClickHouse trace logs are kept there.
//
// Without clickhouse-server the test skips, unless ZKRAFT_REQUIRE_CLIENTS=1 (make test).
func TestClickHouse(t *testing.T) {
	requireClickHouse(t)
	full := os.Getenv("ZKRAFT_E2E") == "full"
	plan := chPlan{blocksPerReplica: 9, rowsPerBlock: 100, sessionTimeout: 6 * time.Second}
	if full {
		plan.blocksPerReplica, plan.rowsPerBlock = 45, 1000
	}
	var outcomes []*chOutcome
	backends := []struct {
		name  string
		start func(int, ztest.Options) (*ztest.Cluster, error)
	}{{"zkraft", ztest.StartZkraftCluster}, {"zookeeper", ztest.StartZooKeeperEnsemble}}
	if !full {
		backends = backends[:1]
	}
	for _, b := range backends {
		ok := t.Run(b.name, func(t *testing.T) {
			c, err := b.start(3, ztest.Options{Logf: t.Logf})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(c.Stop)
			t.Cleanup(func() { reportMemberLogs(t, c) })
			outcomes = append(outcomes, runClickHouse(t, c, plan))
		})
		if !ok {
			return
		}
	}
	line := "e2e clickhouse:"
	for _, o := range outcomes {
		line += " " + o.figures()
	}
	if len(outcomes) == 2 {
		want, got := outcomes[1].contents, outcomes[0].contents
		if !reflect.DeepEqual(want, got) {
			t.Errorf("zkraft and ZooKeeper 3.8 give different contents\nzookeeper: %q\nzkraft:    %q", want, got)
		}
	}
	fmt.Println(line)
}

func requireClickHouse(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(clickHouseBinary); err == nil {
		return
	}
	if os.Getenv("ZKRAFT_REQUIRE_CLIENTS") == "1" {
		t.Fatalf("%s is not installed (run .ci/deps)", clickHouseBinary)
	}
	t.Skipf("%s is not installed (run .ci/deps, or make test)", clickHouseBinary)
}

// chPlan sizes a run: block b holds keys [b*rows, (b+1)*rows) with the value "b<b>".
// Blocks 0 and 1 check visibility, block 2 deduplication, block 0 is deleted again by a
// mutation, and the workload inserts blocks 3, 4, ... alternately on r1 and r2.
type chPlan struct {
	blocksPerReplica int
	rowsPerBlock     int
	sessionTimeout   time.Duration
}

const chFirstWorkloadBlock = 3

func (p chPlan) blocks() int { return chFirstWorkloadBlock + 2*p.blocksPerReplica }

// rows is how many rows the table holds in the end: every block but block 0.
func (p chPlan) rows() int { return (p.blocks() - 1) * p.rowsPerBlock }

// chOutcome is what a run found: contents must be the same for zkraft and ZooKeeper; the
// rest are figures.
type chOutcome struct {
	backend   string
	contents  []string
	acked     int
	failures  int // insert attempts ClickHouse refused or did not answer, retried
	unknown   int // of which answered "Unknown status, client must retry" (code 319)
	orphans   int // parts of those set aside when the table was attached again
	rows      [2]int
	reconnect [2]time.Duration // from the leader kill to each replica's next acknowledged insert
	onLeader  int              // ClickHouse sessions on the leader when it was killed (ClickHouse chooses its member)
	elapsed   time.Duration
}

func (o *chOutcome) figures() string {
	return fmt.Sprintf("[%s: %d inserts acknowledged (%d attempts retried, %d of them \"Unknown status\", %d orphan parts set aside), rows r1=%d r2=%d, %d of 2 sessions on the killed leader, first insert after the kill r1=%v r2=%v, run %v]",
		o.backend, o.acked, o.failures, o.unknown, o.orphans, o.rows[0], o.rows[1], o.onLeader, o.reconnect[0].Round(10*time.Millisecond),
		o.reconnect[1].Round(10*time.Millisecond), o.elapsed.Round(100*time.Millisecond))
}

// The table both replicas hold, created on each. zookeeper_session_expiration_check_period
// is how often a replica whose session ended looks for a new one (60 s by default).
const chCreateTable = `CREATE TABLE t (k UInt64, v String)
ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/t', '{replica}') ORDER BY k
SETTINGS replicated_deduplication_window = 1000, zookeeper_session_expiration_check_period = 1`

func runClickHouse(t *testing.T, c *ztest.Cluster, plan chPlan) *chOutcome {
	began := time.Now()
	o := &chOutcome{backend: c.Name}
	pair := startClickHousePair(t, strings.Split(c.ConnectString(), ","), plan.sessionTimeout)
	t.Cleanup(func() { reportClickHouseLogs(t, c.Name, pair) })
	for _, s := range pair {
		awaitRows(t, s, "SELECT count() > 0 FROM system.zookeeper WHERE path = '/'", "1", 60*time.Second)
	}
	o.contents = append(o.contents, onClusterDDL(t, pair)...)
	for _, s := range pair {
		s.must(t, chCreateTable)
	}
	o.contents = append(o.contents, visibilityAndDedup(t, pair, plan)...)
	o.contents = append(o.contents, alterAndMutate(t, pair, plan)...)
	w := runWorkload(t, c, pair, plan)
	o.acked, o.failures, o.reconnect, o.onLeader = w.acked, w.failures, w.reconnect(), w.onLeader
	o.unknown = w.unknownAnswers()
	o.orphans = settleOrphans(t, pair, plan, w)
	o.contents = append(o.contents, checkRows(t, pair, plan, "after the inserts")...)
	o.contents = append(o.contents, mergeFinal(t, pair)...)
	o.contents = append(o.contents, checkRows(t, pair, plan, "after the merge")...)
	for i, s := range pair {
		fmt.Sscan(s.must(t, "SELECT count() FROM t"), &o.rows[i])
	}
	o.contents = append(o.contents, zooKeeperListings(t, pair[0], plan)...)
	o.contents = append(o.contents, identityACL(t, c)...)
	o.elapsed = time.Since(began)
	t.Logf("%s: contents compared with the other backend:\n%s", c.Name, strings.Join(o.contents, "\n"))
	return o
}

// onClusterDDL creates a table with ON CLUSTER on r1, sees it on both and replicating a
// quorum insert, and drops it the same way; it returns the DDL queue and the tables path as
// system.zookeeper lists them.
func onClusterDDL(t *testing.T, pair [2]*chServer) []string {
	t.Helper()
	out := pair[0].must(t, `CREATE TABLE t_oc ON CLUSTER pair (k UInt64)
ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/t_oc', '{replica}') ORDER BY k`)
	// One row per host: host, port, status, error, hosts remaining, hosts active.
	hosts := strings.Split(out, "\n")
	for _, h := range hosts {
		if f := strings.Split(h, "\t"); len(f) < 3 || f[2] != "0" {
			t.Fatalf("CREATE ON CLUSTER: host answered %q, want status 0:\n%s", h, out)
		}
	}
	if len(hosts) != 2 {
		t.Fatalf("CREATE ON CLUSTER answered for %d hosts, want 2:\n%s", len(hosts), out)
	}
	for _, s := range pair {
		awaitRows(t, s, "SELECT count() FROM system.tables WHERE database = 'default' AND name = 't_oc'", "1", 30*time.Second)
	}
	// A quorum insert (tracked in ZooKeeper under quorum/) returns once both replicas
	// have the part. It goes here, not into t: the last part with a satisfied quorum is
	// never merged, and t's parts must merge into one.
	if _, err := pair[1].query("INSERT INTO t_oc VALUES (1), (2), (3)", map[string]string{"insert_quorum": "2"}); err != nil {
		t.Fatalf("r2: insert with insert_quorum=2: %v", err)
	}
	if got := pair[0].must(t, "SELECT sum(k) FROM t_oc"); got != "6" {
		t.Fatalf("r1 holds sum(k) = %s after r2's quorum insert, want 6", got)
	}
	pair[1].must(t, "DROP TABLE t_oc ON CLUSTER pair")
	for _, s := range pair {
		awaitRows(t, s, "SELECT count() FROM system.tables WHERE database = 'default' AND name = 't_oc'", "0", 30*time.Second)
	}
	return []string{
		"ddl queue: " + pair[1].must(t, "SELECT groupArray(name) FROM (SELECT name FROM system.zookeeper WHERE path = '/clickhouse/task_queue/ddl' ORDER BY name)"),
		"tables: " + pair[1].must(t, "SELECT groupArray(name) FROM (SELECT name FROM system.zookeeper WHERE path = '/clickhouse/tables/01' ORDER BY name)"),
	}
}

// visibilityAndDedup inserts block 0 on r1 and block 1 on r2 and sees each on the other,
// then inserts block 2 twice on r1 and once on r2 and finds it once on both.
func visibilityAndDedup(t *testing.T, pair [2]*chServer, plan chPlan) []string {
	t.Helper()
	pair[0].must(t, insertBlock(0, plan.rowsPerBlock))
	pair[1].must(t, insertBlock(1, plan.rowsPerBlock))
	for i, s := range pair {
		s.must(t, "SYSTEM SYNC REPLICA t")
		other := 1 - i
		awaitRows(t, s, fmt.Sprintf("SELECT count() FROM t WHERE v = 'b%d'", other), fmt.Sprint(plan.rowsPerBlock), 30*time.Second)
	}
	for _, s := range []*chServer{pair[0], pair[0], pair[1]} {
		s.must(t, insertBlock(2, plan.rowsPerBlock))
	}
	for _, s := range pair {
		s.must(t, "SYSTEM SYNC REPLICA t")
		if got := s.must(t, "SELECT count() FROM t WHERE v = 'b2'"); got != fmt.Sprint(plan.rowsPerBlock) {
			t.Fatalf("%s: block 2 inserted 3 times holds %s rows, want %d (one copy)", s.replica, got, plan.rowsPerBlock)
		}
	}
	return []string{"parts after dedup: " + pair[0].must(t, "SELECT count() FROM system.parts WHERE table = 't'")}
}

// insertBlock is block b's INSERT; the same block is the same bytes, so ClickHouse
// deduplicates a repeated one by its checksum in ZooKeeper.
func insertBlock(b, rows int) string {
	var q strings.Builder
	q.WriteString("INSERT INTO t (k, v) FORMAT TabSeparated\n")
	for k := b * rows; k < (b+1)*rows; k++ {
		fmt.Fprintf(&q, "%d\tb%d\n", k, b)
	}
	return q.String()
}

// awaitRows polls a query until it answers want, for at most limit.
func awaitRows(t *testing.T, s *chServer, sql, want string, limit time.Duration) {
	t.Helper()
	if got, err, ok := pollRows(s, sql, want, limit); !ok {
		t.Fatalf("%s: %s: got %q (%v) for %v, want %q", s.replica, firstLine(sql), got, err, limit, want)
	}
}

// pollRows runs sql every 200 ms until it answers want or limit has passed; it returns
// the last answer and whether it was want.
func pollRows(s *chServer, sql, want string, limit time.Duration) (string, error, bool) {
	deadline := time.Now().Add(limit)
	for {
		out, err := s.query(sql, nil)
		if got := strings.TrimSpace(out); err == nil && got == want {
			return got, nil, true
		} else if time.Now().After(deadline) {
			return got, err, false
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// chWorkload is the insert workload's record.
type chWorkload struct {
	mu        sync.Mutex
	acked     int
	failures  int
	errs      map[string]int
	unknown   [2]map[int]int // per replica, block -> "Unknown status" answers
	killedAt  time.Time
	afterKill [2]time.Time // each replica's first acknowledged insert after the kill
	onLeader  int          // ClickHouse sessions connected to the leader when it was killed
}

func (w *chWorkload) reconnect() [2]time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	var d [2]time.Duration
	for i, at := range w.afterKill {
		if !at.IsZero() {
			d[i] = at.Sub(w.killedAt)
		}
	}
	return d
}

// runWorkload inserts blocksPerReplica blocks on each replica concurrently, retrying each
// block until it is acknowledged. When each replica has a third of its blocks
// acknowledged, the leader is killed with SIGKILL; each replica's last block waits for
// the kill, so both insert after it. The killed member is restarted once both replicas
// have an insert acknowledged after the kill.
func runWorkload(t *testing.T, c *ztest.Cluster, pair [2]*chServer, plan chPlan) *chWorkload {
	t.Helper()
	w := &chWorkload{errs: map[string]int{}, unknown: [2]map[int]int{{}, {}}}
	killed := make(chan struct{})
	stop := make(chan struct{}) // ends the inserts when the test ends early
	defer close(stop)
	third := make(chan struct{}, 2)
	errc := make(chan error, 2)
	for r, s := range pair {
		go func() {
			errc <- w.insertAll(r, s, plan, third, killed, stop)
		}()
	}
	for n := 0; n < 2; n++ {
		select {
		case <-third:
		case err := <-errc:
			t.Fatalf("before the kill: %v", err)
		case <-time.After(2 * time.Minute):
			t.Fatal("the first third of the inserts took over 2 minutes")
		}
	}
	leader := c.Leader()
	if leader < 0 {
		t.Fatalf("%s has no leader", c.Name)
	}
	for i, m := range c.Members {
		if out, err := ztest.FourLetter(m.Addr, "cons"); err == nil {
			t.Logf("%s member %d cons before the kill:\n%s", c.Name, i+1, out)
			if i == leader {
				w.onLeader = strings.Count(out, ",sid=0x")
			}
		}
		if out, err := ztest.FourLetter(m.Addr, "wchs"); err == nil {
			t.Logf("%s member %d wchs before the kill:\n%s", c.Name, i+1, out)
		}
	}
	c.Members[leader].Kill()
	w.mu.Lock()
	w.killedAt = time.Now()
	w.mu.Unlock()
	close(killed)
	t.Logf("%s: killed the leader, member %d", c.Name, leader+1)
	restarted := false
	var failed []error
	for n := 0; n < 2; {
		select {
		case err := <-errc:
			n++
			if err != nil {
				failed = append(failed, err)
			}
		case <-time.After(time.Second):
		}
		if !restarted && w.bothAckedAfterKill() {
			restarted = true
			if err := c.Members[leader].Restart(false); err != nil {
				t.Fatal(err)
			}
		}
	}
	if !restarted {
		if err := c.Members[leader].Restart(false); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.AwaitServing(60 * time.Second); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: insert attempts refused, by error:\n%s", c.Name, formatCounts(w.errs))
	if len(failed) > 0 {
		t.Fatal(errors.Join(failed...))
	}
	return w
}

func (w *chWorkload) unknownAnswers() int {
	n := 0
	for _, m := range w.unknown {
		for _, c := range m {
			n += c
		}
	}
	return n
}

func (w *chWorkload) bothAckedAfterKill() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return !w.afterKill[0].IsZero() && !w.afterKill[1].IsZero()
}

// insertAll inserts replica r's blocks, each retried for at most 90 s.
func (w *chWorkload) insertAll(r int, s *chServer, plan chPlan, third chan<- struct{}, killed, stop <-chan struct{}) error {
	for i := 0; i < plan.blocksPerReplica; i++ {
		if i == plan.blocksPerReplica/3 {
			third <- struct{}{}
		}
		if i == plan.blocksPerReplica-1 {
			select {
			case <-killed:
			case <-stop:
				return errors.New("stopped")
			case <-time.After(3 * time.Minute):
				return errors.New("the leader was not killed within 3 minutes")
			}
		}
		b := chFirstWorkloadBlock + 2*i + r
		deadline := time.Now().Add(90 * time.Second)
		for {
			started := time.Now()
			_, err := s.query(insertBlock(b, plan.rowsPerBlock), nil)
			w.record(r, b, started, err)
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s: block %d not acknowledged within 90 s: %v", s.replica, b, err)
			}
			select {
			case <-stop:
				return errors.New("stopped")
			case <-time.After(250 * time.Millisecond):
			}
		}
	}
	return nil
}

// record counts an insert attempt started at started. The first one acknowledged that
// started after the kill gives the replica's reconnect time.
func (w *chWorkload) record(r, b int, started time.Time, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err == nil {
		w.acked++
		if !w.killedAt.IsZero() && started.After(w.killedAt) && w.afterKill[r].IsZero() {
			w.afterKill[r] = time.Now()
		}
		return
	}
	w.failures++
	w.errs[errorKind(err)]++
	if strings.Contains(err.Error(), "Code: 319,") {
		w.unknown[r][b]++
	}
}

// errorKind shortens ClickHouse's error to its code and first words.
func errorKind(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, "Code: "); i >= 0 {
		msg = msg[i:]
	}
	msg = chNumbers.ReplaceAllString(msg, "N")
	if len(msg) > 140 {
		msg = msg[:140]
	}
	return msg
}

// settleOrphans waits until both replicas hold every block, then accounts for the
// copies an insert answered "Unknown status" (code 319) can leave: ClickHouse keeps the
// part it wrote when the connection was lost during the commit, and when the commit did
// not happen in ZooKeeper that part stays beside the retried block's, on that replica
// only, until ClickHouse checks it minutes later or the table is reattached. So a block
// may be doubled only on a replica that got code 319 for it, at most once per such
// answer; such a replica's table is detached and attached again, which sets the parts
// ZooKeeper does not know aside (detached/ignored_*). It returns how many were.
func settleOrphans(t *testing.T, pair [2]*chServer, plan chPlan, w *chWorkload) int {
	t.Helper()
	set := 0
	for r, s := range pair {
		s.must(t, "SYSTEM SYNC REPLICA t")
		awaitRows(t, s, "SELECT uniqExact(k) FROM t", fmt.Sprint(plan.rows()), 60*time.Second)
		out := s.must(t, fmt.Sprintf("SELECT intDiv(k, %d) AS b, count() FROM t GROUP BY b HAVING count() != %d ORDER BY b",
			plan.rowsPerBlock, plan.rowsPerBlock))
		if out == "" {
			continue
		}
		for _, line := range strings.Split(out, "\n") {
			var b, rows int
			fmt.Sscan(line, &b, &rows)
			copies := rows / plan.rowsPerBlock
			if rows%plan.rowsPerBlock != 0 || copies-1 > w.unknown[r][b] {
				t.Fatalf("%s holds block %d %d times (%d rows) and got %d \"Unknown status\" answers for it",
					s.replica, b, copies, rows, w.unknown[r][b])
			}
		}
		t.Logf("%s: blocks held more than once after \"Unknown status\" answers (block, rows): %q", s.replica, out)
		before := s.detachedParts(t)
		s.must(t, "DETACH TABLE t")
		s.must(t, "ATTACH TABLE t")
		awaitRows(t, s, "SELECT is_readonly FROM system.replicas WHERE table = 't'", "0", 60*time.Second)
		set += s.detachedParts(t) - before
	}
	return set
}

// checkRows waits until both replicas hold every block once, then compares them.
func checkRows(t *testing.T, pair [2]*chServer, plan chPlan, when string) []string {
	t.Helper()
	n := plan.rows()
	want := fmt.Sprintf("%d\t%d\t%d\t%d\t0", n, n, plan.rowsPerBlock, plan.blocks()*plan.rowsPerBlock-1)
	const digest = `SELECT count(), uniqExact(k), min(k), max(k),
countIf(v != concat('b', toString(intDiv(k, %d))) OR extra != 7) FROM t`
	var sums []string
	for _, s := range pair {
		s.must(t, "SYSTEM SYNC REPLICA t")
		awaitRows(t, s, fmt.Sprintf(digest, plan.rowsPerBlock), want, 60*time.Second)
		sums = append(sums, s.must(t, "SELECT sum(cityHash64(k, v)) FROM t"))
	}
	if sums[0] != sums[1] {
		t.Fatalf("%s: the replicas differ: r1 %s, r2 %s", when, sums[0], sums[1])
	}
	return []string{when + ": " + want + " " + sums[0]}
}

// mergeFinal runs OPTIMIZE TABLE t FINAL on r2 and waits until both replicas hold the
// same single part, the merge replicated through the log in ZooKeeper.
func mergeFinal(t *testing.T, pair [2]*chServer) []string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, err := pair[1].query("OPTIMIZE TABLE t FINAL", map[string]string{"optimize_throw_if_noop": "1"})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Logf("ZooKeeper state:\n%s", lockState(t, pair[0]))
			t.Fatalf("OPTIMIZE TABLE t FINAL: %v", err)
		}
		time.Sleep(time.Second)
	}
	const parts = "SELECT groupArray(name) FROM (SELECT name FROM system.parts WHERE table = 't' AND active ORDER BY name)"
	var names [2]string
	for i, s := range pair {
		s.must(t, "SYSTEM SYNC REPLICA t")
		deadline := time.Now().Add(60 * time.Second)
		for {
			names[i] = s.must(t, parts)
			if strings.Count(names[i], ",") == 0 && names[i] != "[]" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: active parts after OPTIMIZE FINAL: %s, want one", s.replica, names[i])
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	if names[0] != names[1] {
		t.Fatalf("after OPTIMIZE FINAL r1 holds %s and r2 %s", names[0], names[1])
	}
	return []string{"parts after merge: 1"}
}

// alterAndMutate adds a column on r1 and deletes block 0 on r2 (a mutation, numbered by
// a sequential node) and waits until both replicas have done both. It runs before the
// leader is killed: after its ZooKeeper session ended, a ClickHouse 18.16 replica no
// longer applies ALTERs (its alter thread keeps the dead session in its node cache; seen
// with ZooKeeper 3.8 and zkraft alike) until the table is attached again.
func alterAndMutate(t *testing.T, pair [2]*chServer, plan chPlan) []string {
	t.Helper()
	pair[0].must(t, "ALTER TABLE t ADD COLUMN extra UInt8 DEFAULT 7")
	pair[1].must(t, "ALTER TABLE t DELETE WHERE k < "+fmt.Sprint(plan.rowsPerBlock))
	want := fmt.Sprintf("%d\t%d\t%d", 2*plan.rowsPerBlock, plan.rowsPerBlock, 7*2*plan.rowsPerBlock)
	for _, s := range pair {
		awaitRows(t, s, "SELECT count(), min(k), sum(extra) FROM t", want, 60*time.Second)
		awaitRows(t, s, "SELECT count(), countIf(is_done) FROM system.mutations WHERE table = 't'", "1\t1", 60*time.Second)
	}
	return []string{"after alter and delete: " + want}
}

// lockState lists the block numbers still held and their lock holders, for a failure
// message: a block number whose holder (an ephemeral node) exists blocks every merge
// across it.
func lockState(t *testing.T, s *chServer) string {
	var b strings.Builder
	for _, q := range []string{
		"SELECT name, value, ephemeralOwner FROM system.zookeeper WHERE path = '/clickhouse/tables/01/t/temp'",
		"SELECT name, value FROM system.zookeeper WHERE path = '/clickhouse/tables/01/t/block_numbers/all'",
		"SELECT name, value, ephemeralOwner FROM system.zookeeper WHERE path = '/clickhouse/tables/01/t/leader_election'",
		"SELECT name, active FROM system.parts WHERE table = 't'",
		"SELECT * FROM system.replication_queue FORMAT Vertical",
	} {
		out, err := s.query(q, nil)
		fmt.Fprintf(&b, "%s:\n%s%v\n", q, out, err)
	}
	return b.String()
}

// zooKeeperListings asks system.zookeeper for the table's nodes, its replicas, its
// deduplication blocks and a replica's nodes.
func zooKeeperListings(t *testing.T, s *chServer, plan chPlan) []string {
	t.Helper()
	list := func(path string) string {
		return s.must(t, fmt.Sprintf("SELECT groupArray(name) FROM (SELECT name FROM system.zookeeper WHERE path = '%s' ORDER BY name)", path))
	}
	// Every block inserted has its checksum under blocks/ (the window is 1000), block 0
	// too: the mutation that deleted its rows does not forget that it was inserted.
	checks := map[string]string{
		"SELECT count() FROM system.zookeeper WHERE path = '/clickhouse/tables/01/t/blocks'":                                      fmt.Sprint(plan.blocks()),
		"SELECT groupArray(name) FROM system.zookeeper WHERE path = '/clickhouse/tables/01/t/replicas/r2' AND name = 'is_active'": "['is_active']",
	}
	// A replica whose connection was closed (its member lost the leader) starts a new
	// session; the old session's election node goes only when the server expires that
	// session, a session timeout after the new leader took over, on ZooKeeper as on zkraft.
	const electionCount = "SELECT count() FROM system.zookeeper WHERE path = '/clickhouse/tables/01/t/leader_election'"
	waited := time.Now()
	if got, err, ok := pollRows(s, electionCount, "2", 2*plan.sessionTimeout+20*time.Second); !ok {
		t.Errorf("%s: %q (%v) for %v, want 2\n%s", electionCount, got, err, time.Since(waited).Round(time.Second), lockState(t, s))
	} else if d := time.Since(waited); d > time.Second {
		t.Logf("leader_election reached 2 nodes after another %v", d.Round(100*time.Millisecond))
	}
	for q, want := range checks {
		if got := s.must(t, q); got != want {
			t.Errorf("%s: %s, want %s", q, got, want)
		}
	}
	if got := list("/clickhouse/tables/01/t/replicas"); got != "['r1','r2']" {
		t.Errorf("replicas: %s, want ['r1','r2']", got)
	}
	return []string{
		"table: " + list("/clickhouse/tables/01/t"),
		"replicas: " + list("/clickhouse/tables/01/t/replicas"),
		"replica r1: " + list("/clickhouse/tables/01/t/replicas/r1"),
		"blocks: " + s.must(t, "SELECT count() FROM system.zookeeper WHERE path = '/clickhouse/tables/01/t/blocks'"),
		"stats: " + s.must(t, `SELECT groupArray((name, version, dataLength, numChildren, ephemeralOwner != 0)) FROM (
SELECT * FROM system.zookeeper WHERE path = '/clickhouse/tables/01/t'
AND name IN ('columns', 'metadata', 'replicas', 'quorum', 'mutations', 'blocks', 'block_numbers',
'nonincrement_block_numbers', 'leader_election', 'temp') ORDER BY name)`),
		// Versions and counts here depend on timing (log_pointer, parts not yet cleaned
		// up) and on whether the table was attached again (columns, metadata).
		"r1 nodes: " + s.must(t, `SELECT groupArray((name, ephemeralOwner != 0)) FROM (
SELECT * FROM system.zookeeper WHERE path = '/clickhouse/tables/01/t/replicas/r1' ORDER BY name)`),
	}
}

// identityACL reads a node ClickHouse created as two other clients: ClickHouse has a
// digest identity, so its nodes carry the ACL auth::cdrwa, stored as
// digest:clickhouse:<hash>. A client with that identity reads the ACL and the data; one
// without is refused both (ZooKeeper asks READ or ADMIN for getACL). The answers go into
// the contents compared with ZooKeeper's.
func identityACL(t *testing.T, c *ztest.Cluster) []string {
	t.Helper()
	const path = "/clickhouse/tables/01/t/columns"
	var out []string
	for _, auth := range []bool{true, false} {
		conn, _, err := zk.Connect(strings.Split(c.ConnectString(), ","), 10*time.Second, zk.WithLogInfo(false))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if auth {
			if err := conn.AddAuth("digest", []byte("clickhouse:e2e-secret")); err != nil {
				t.Fatal(err)
			}
		}
		var acl []zk.ACL
		deadline := time.Now().Add(30 * time.Second)
		for {
			acl, _, err = conn.GetACL(path)
			if err == nil || errors.Is(err, zk.ErrNoAuth) || time.Now().After(deadline) {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		_, _, getErr := conn.Get(path)
		if auth {
			if want := zk.DigestACL(zk.PermAll, "clickhouse", "e2e-secret"); err != nil || !reflect.DeepEqual(acl, want) {
				t.Fatalf("getACL %s with ClickHouse's identity: %v (%v), want %v", path, acl, err, want)
			}
			if getErr != nil {
				t.Fatalf("get %s with ClickHouse's identity: %v", path, getErr)
			}
		} else if !errors.Is(getErr, zk.ErrNoAuth) {
			t.Fatalf("get %s without ClickHouse's identity: %v, want %v", path, getErr, zk.ErrNoAuth)
		}
		out = append(out, fmt.Sprintf("identity %v: getACL %v %v, get %v", auth, acl, err, getErr))
	}
	return out
}

// chProtocolTrouble matches what ClickHouse's ZooKeeper client says when an answer is not
// what the protocol promises (a malformed or unexpected response, an op refused as
// unimplemented or with bad arguments) and ZooKeeper's codes for a server's own faults.
// Connection loss, expired sessions and timeouts are expected around the kill.
var chProtocolTrouble = regexp.MustCompile(`(?i)marshalling error|unimplemented|bad arguments|api error|system error|` +
	`run time inconsistency|data inconsistency|invalid zhandle|response length|unknown xid|unexpected handshake|` +
	`unexpected zxid|unknown error`)

// reportClickHouseLogs logs each replica's ZooKeeper profile events and the warnings and
// errors its log holds about ZooKeeper, and fails the test on protocol trouble.
// With ZKRAFT_E2E_KEEP=<dir> the ClickHouse server logs (trace level) are copied there.
func reportClickHouseLogs(t *testing.T, backend string, pair [2]*chServer) {
	for _, s := range pair {
		if ev, err := s.query("SELECT event, value FROM system.events WHERE event LIKE 'ZooKeeper%' ORDER BY event", nil); err == nil {
			t.Logf("clickhouse %s ZooKeeper events:\n%s", s.replica, ev)
		}
		trouble := s.zooKeeperTrouble()
		t.Logf("clickhouse %s log, ZooKeeper warnings and errors:\n%s", s.replica, formatCounts(trouble))
		for msg := range trouble {
			if chProtocolTrouble.MatchString(msg) {
				t.Errorf("clickhouse %s found the coordination service's answers malformed or refused: %s", s.replica, msg)
			}
		}
		if keep := os.Getenv("ZKRAFT_E2E_KEEP"); keep != "" {
			b, _ := os.ReadFile(filepath.Join(s.dir, "server.log"))
			name := fmt.Sprintf("clickhouse-%s-%s-%d.log", backend, s.replica, s.tcp)
			if err := os.WriteFile(filepath.Join(keep, name), b, 0o644); err != nil {
				t.Log(err)
			}
		}
	}
}

// reportMemberLogs logs the warnings and errors each ensemble member logged, counted by
// message with digits blanked.
func reportMemberLogs(t *testing.T, c *ztest.Cluster) {
	for i, m := range c.Members {
		counts := map[string]int{}
		for _, line := range strings.Split(m.Log(), "\n") {
			var msg string
			if _, rest, ok := strings.Cut(line, " level="); ok && (strings.HasPrefix(rest, "WARN") || strings.HasPrefix(rest, "ERROR")) {
				msg = rest
			} else if strings.Contains(line, " WARN ") || strings.Contains(line, " ERROR ") {
				if _, rest, ok := strings.Cut(line, " - "); ok {
					msg = rest
				}
			}
			if msg == "" {
				continue
			}
			msg = chNumbers.ReplaceAllString(msg, "N")
			if len(msg) > 180 {
				msg = msg[:180]
			}
			counts[msg]++
		}
		t.Logf("%s member %d warnings and errors:\n%s", c.Name, i+1, formatCounts(counts))
	}
}

// TestClickHouseLogScan checks the log scan on lines in ClickHouse 18.16's format: a
// protocol error counts as protocol trouble, connection loss and ClickHouse's own
// leadership message do not; every Warning or Error about ZooKeeper, Coordination or an
// exception is counted, lines below Warning are not.
func TestClickHouseLogScan(t *testing.T) {
	s := &chServer{dir: t.TempDir()}
	log := `2026.11.23 08:04:07.014974 [ 22 ] {} <Error> void Coordination::ZooKeeper::receiveThread(): Code: 999, e.displayText() = Coordination::Exception: Marshalling error (Marshalling error), e.what() = Coordination::Exception
2026.11.23 08:04:07.028887 [ 7 ] {} <Error> default.t (StorageReplicatedMergeTree): queueTask(): Code: 999, e.displayText() = Coordination::Exception: Connection loss, e.what() = Coordination::Exception
2026.11.23 08:04:07.028887 [ 7 ] {} <Error> executeQuery: Code: 333, e.displayText() = DB::Exception: Leader was suddenly changed or logical error., e.what() = DB::Exception
2026.11.23 08:04:07.028887 [ 7 ] {} <Trace> ZooKeeper: initialized, hosts: 127.0.0.1:1
2026.11.23 08:04:07.028887 [ 7 ] {} <Error> HTTPHandler: Code: 62, e.displayText() = DB::Exception: Syntax error
`
	if err := os.WriteFile(filepath.Join(s.dir, "server.log"), []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	trouble := s.zooKeeperTrouble()
	if len(trouble) != 4 {
		t.Fatalf("scan counted %d kinds, want 4:\n%s", len(trouble), formatCounts(trouble))
	}
	var protocol []string
	for msg := range trouble {
		if chProtocolTrouble.MatchString(msg) {
			protocol = append(protocol, msg)
		}
	}
	if len(protocol) != 1 || !strings.Contains(protocol[0], "Marshalling error") {
		t.Fatalf("protocol trouble: %q, want the marshalling error only", protocol)
	}
}
