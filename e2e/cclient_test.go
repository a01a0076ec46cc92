package e2e

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/server/ztest"
)

const (
	cliMt   = "/usr/lib/zookeeper/bin/cli_mt"
	loadGen = "/usr/lib/zookeeper/bin/load_gen"
)

// cliStep is one line typed into session who's cli_mt (0 is A, 1 is B).
type cliStep struct {
	who int
	cmd string
}

// cliScript is what the two cli_mt sessions type. cli_mt sets a watch with every get,
// ls, ls2 and exists (wexists with a watcher of its own), creates with data "new" and an
// open ACL, and sets and deletes at any version.
var cliScript = []cliStep{
	{0, "create /e2e"},
	{0, "create /e2e/a"},
	{0, "create2 /e2e/b"},
	{0, "get /e2e/a"},
	{0, "set /e2e/a hello"}, // fires the get's watch
	{0, "get /e2e/a"},
	{0, "ls /e2e"},
	{0, "ls2 /e2e"},
	{0, "exists /e2e/a"},
	{0, "exists /e2e/missing"}, // NoNode, and an exist watch
	{0, "create /e2e/missing"}, // fires it and the ls watch
	{0, "wexists /e2e/w"},
	{0, "create /e2e/w"},
	{0, "delete /e2e/w"},
	{0, "create /e2e/a"},      // NodeExists
	{0, "delete /e2e"},        // NotEmpty
	{0, "get /e2e/nope"},      // NoNode
	{0, "set /e2e/nope x"},    // NoNode
	{0, "delete /e2e/nope"},   // NoNode
	{0, "create /nope/child"}, // NoNode (parent)
	{0, "create2 +e /e2e/eph"},
	{0, "create /e2e/eph/child"}, // NoChildrenForEphemerals
	{0, "create +s /e2e/seq-"},
	{0, "create +s /e2e/seq-"}, // the parent's cversion numbers them
	{0, "create2 +es /e2e/eseq-"},
	{0, "create +c /e2e/cont"},
	{0, "create +t=60000 /e2e/ttl"},
	{0, "create +t=99999999999999 /e2e/ttl2"}, // over the TTL limit: refused by the client
	{0, "create +st=60000 /e2e/ttlseq-"},
	{0, "sync /e2e"},
	{0, "sync /e2e/nonexistent"},
	{0, "addauth digest user:pw"}, // accepted: the session goes on
	{0, "create /e2e/afterauth"},
	{0, "get /"},
	{0, "ls2 /"},
	{0, "ls /zookeeper"},
	{0, "get /zookeeper"},
	{0, "get /zookeeper/quota"},
	{0, "get /zookeeper/config"},
	{0, "config"},
	{0, "set /zookeeper/config x"},         // NoAuth
	{0, "create /zookeeper/x"},             // allowed, and fires the ls watch on /zookeeper
	{0, "delete /zookeeper/quota"},         // BadArguments
	{0, "delete /zookeeper"},               // BadArguments
	{0, "delete /"},                        // BadArguments
	{0, "create /"},                        // NodeExists
	{0, "reconfig -add 4=127.0.0.1:1:2;3"}, // ReconfigDisabled
	// The second session changes what the first watches.
	{0, "get /e2e/b"},
	{0, "ls /e2e"},
	{1, "set /e2e/a other"},
	{1, "delete /e2e/b"}, // data watch, then child watch, in A
	{0, "get /e2e/a"},
	{1, "create2 +e /e2e/beph"},
	{0, "exists /e2e/beph"},
	{0, "ls /e2e"},
	{1, "delete /e2e/eph"}, // another session's ephemeral
	{1, "quit"},            // B's ephemeral goes with its session
	{0, "ls2 /e2e"},
	{0, "addauth nosuchscheme x"}, // AuthFailed: the server closes the session
}

var (
	cliMarker     = regexp.MustCompile(`^\tname = /$`)
	cliConnected  = regexp.MustCompile(`^Got a new session id: (0x[0-9a-f]+)$`)
	cliQuit       = regexp.MustCompile(`^Quitting\.\.\.$`)
	cliAuthFailed = regexp.MustCompile(`^Authentication failure\. Shutting down\.\.\.$`)
)

// cliTranscript runs cliScript with two cli_mt sessions, on addrs[0] and addrs[1]. After each step,
// both sessions sync "/" (the acting one first, the other once the first has its answer)
// and their output is read up to that sync's answer: cli_mt answers asynchronously, and
// a session's answers come in the order of its requests, so everything the step caused
// (its answer and the watch events in either session) is then printed, in order.
// A session that does not get that far in time is an error, with the transcript so far;
// both programs are stopped when it returns.
func cliTranscript(t *testing.T, addrs []string) ([]string, error) {
	var ps [2]*Process
	defer func() {
		for _, p := range ps {
			if p != nil {
				p.Stop(time.Second)
			}
		}
	}()
	var out []string
	for i := range ps {
		addr := addrs[i%len(addrs)] // on an ensemble, each session on its own follower
		ps[i] = Start(t, t.TempDir(), cliMt, "-h", addr)
		got, err := ps[i].Until(cliConnected, 20*time.Second)
		if err != nil {
			return nil, fmt.Errorf("cli_mt did not connect to %s: %v\n%s", addr, err, strings.Join(got, "\n"))
		}
		out = append(out, prefix(i, got)...)
	}
	open := [2]bool{true, true}
	for _, s := range cliScript {
		out = append(out, fmt.Sprintf("%c> %s", 'A'+s.who, s.cmd))
		ps[s.who].Send(s.cmd)
		// The acting session first: the other's sync then follows the step's change.
		for _, i := range []int{s.who, 1 - s.who} {
			p := ps[i]
			if !open[i] {
				continue
			}
			until := cliMarker
			switch {
			case i == s.who && s.cmd == "quit":
				until, open[i] = cliQuit, false
			case i == s.who && strings.HasPrefix(s.cmd, "addauth nosuch"):
				until, open[i] = cliAuthFailed, false
			default:
				p.Send("sync /")
			}
			got, err := p.Until(until, 10*time.Second)
			out = append(out, prefix(i, got)...)
			if err != nil {
				return nil, fmt.Errorf("%s: %v\n%s", s.cmd, err, strings.Join(out, "\n"))
			}
			switch {
			case open[i]:
			case s.cmd == "quit":
				// The session closes (its ephemerals go) before cli_mt exits.
				if err := p.Wait(10 * time.Second); err != nil {
					t.Errorf("cli_mt %c on %s after %q: %v", 'A'+i, addrs[i%len(addrs)], s.cmd, err)
				}
				out = append(out, prefix(i, p.Rest())...)
			default:
				// After an auth failure cli_mt is done; what it prints while it stops
				// (on an ensemble of either it may not stop until killed) is not
				// compared.
				p.Stop(time.Second)
			}
		}
	}
	return out, nil
}

func prefix(who int, lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = fmt.Sprintf("%c| %s", 'A'+who, l)
	}
	return out
}

var (
	cliLog     = regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+:\d+\(0x[0-9a-f]+\):ZOO_.*$`)
	cliTime    = regexp.MustCompile(`^[A-Z]\| time = -?\d+ msec$`)
	cliSession = regexp.MustCompile(`^([A-Z])\| Got a new session id: 0x([0-9a-f]+)$`)
	cliStamp   = regexp.MustCompile(`^([A-Z]\| \t[cm]time ?= ?)(.*)$`)
	cliZxid    = regexp.MustCompile(`^([A-Z]\| \t[cm]zxid=)([0-9a-f]+)$`)
	cliOwner   = regexp.MustCompile(`^([A-Z]\| \tephemeralOwner = )([0-9a-f]+)$`)
	cliPort    = regexp.MustCompile(`127\.0\.0\.1:\d+(:\d+)?`)
)

// normalizeCli takes out of a transcript what differs between two correct servers:
// the C client's own log lines (they hold times and ports), blank lines, latencies, session ids
// (named by the session that got them), times (kept when zero), zxids and member
// addresses (numbered in the order they first appear, so equal ones stay equal and
// different ones different).
func normalizeCli(lines []string) []string {
	sessions := map[string]string{}
	zxids := map[string]string{"0": "0"}
	ports := map[string]string{}
	var out []string
	for _, l := range lines {
		// The C client logs from its own thread: a log line may land inside a line
		// cli_mt is printing in pieces.
		l = cliLog.ReplaceAllString(l, "")
		if cliTime.MatchString(l) || strings.TrimSpace(l[3:]) == "" {
			continue
		}
		if m := cliSession.FindStringSubmatch(l); m != nil {
			sessions[m[2]] = "<session " + m[1] + ">"
			l = m[1] + "| Got a new session id: " + sessions[m[2]]
		} else if m := cliStamp.FindStringSubmatch(l); m != nil && !strings.HasSuffix(m[2], " 1970") {
			l = m[1] + "<time>"
		} else if m := cliZxid.FindStringSubmatch(l); m != nil {
			if _, ok := zxids[m[2]]; !ok {
				zxids[m[2]] = fmt.Sprintf("<zxid %d>", len(zxids))
			}
			l = m[1] + zxids[m[2]]
		} else if m := cliOwner.FindStringSubmatch(l); m != nil && sessions[m[2]] != "" {
			l = m[1] + sessions[m[2]]
		}
		// /zookeeper/config of an ensemble lists each member's peer and election ports.
		l = cliPort.ReplaceAllStringFunc(l, func(a string) string {
			if _, ok := ports[a]; !ok {
				ports[a] = fmt.Sprintf("<address %d>", len(ports)+1)
			}
			return ports[a]
		})
		out = append(out, l)
	}
	sortChildren(out)
	return out
}

var cliChild = regexp.MustCompile(`^[A-Z]\| \t[^=]*$`)

// sortChildren sorts each run of child names ls and ls2 print: ZooKeeper lists them in
// its hash set's order, zkraft in name order, and no client may rely on either.
func sortChildren(lines []string) {
	for i := 0; i < len(lines); {
		j := i
		for j < len(lines) && cliChild.MatchString(lines[j]) {
			j++
		}
		if j > i {
			sort.Strings(lines[i:j])
			i = j
		} else {
			i++
		}
	}
}

// cliExercises are what the reference transcript must show, so that two empty or
// truncated transcripts cannot pass as equal.
var cliExercises = []string{
	"rc = -101", "rc = -102", "rc = -108", "rc = -110", "rc = -111", "rc = -123", "rc = -8",
	"Error -101 for /e2e/missing", "name = /e2e/seq-0000000006", "name = /e2e/ttlseq-0000000010",
	"ephemeralOwner = <session A>", "ephemeralOwner = <session B>", "version=2\taversion=0",
	"Watcher CHANGED_EVENT", "Watcher CREATED_EVENT", "Watcher DELETED_EVENT", "Watcher CHILD_EVENT",
	"Watcher SESSION_EVENT state = AUTH_FAILED_STATE", "B| Quitting...",
}

// TestCClient drives ZooKeeper's C client programs (Debian's zookeeper-bin) against
// ZooKeeper 3.8 and zkraft: cli_mt's transcript must be the same on both, and load_gen
// must pass its own checks on both; its throughput is reported side by side. The quick
// form runs standalone servers; ZKRAFT_E2E=full adds 3-member ensembles (the clients
// on followers) and longer load_gen runs.
func TestCClient(t *testing.T) {
	Require(t, "cli_mt (zookeeper-bin)", Executable(cliMt))
	Require(t, "load_gen (zookeeper-bin)", Executable(loadGen))
	Require(t, "ZooKeeper 3.8", ZooKeeperPresent())
	sizes := []int{1}
	children, runFor := 500, 3*time.Second
	if Full() {
		sizes = []int{1, 3}
		children, runFor = 2000, 15*time.Second
	}
	for _, n := range sizes {
		name := "standalone"
		if n > 1 {
			name = fmt.Sprintf("%d members", n)
		}
		t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) {
			pair := StartPair(t, n, ztest.Options{})
			t.Run("cli_mt", func(t *testing.T) { testCliMt(t, name, pair) })
			t.Run("load_gen", func(t *testing.T) { testLoadGen(t, name, pair, children, runFor) })
		})
	}
}

func testCliMt(t *testing.T, name string, pair Pair) {
	start := time.Now()
	ref, err := cliTranscript(t, Followers(t, pair.ZooKeeper))
	if err != nil {
		// The reference's stall is not zkraft's to answer for (seen once: a sync on a
		// ZooKeeper follower unanswered for 10 s under -race): the steps run once more,
		// on a fresh ZooKeeper, as the script assumes an empty tree.
		t.Logf("cli_mt on ZooKeeper 3.8: %v; running it again on a fresh %s", err, name)
		ref, err = cliTranscript(t, Followers(t, StartZooKeeper(t, len(pair.ZooKeeper.Members), ztest.Options{})))
		if err != nil {
			t.Fatalf("cli_mt on ZooKeeper 3.8, twice: %v", err)
		}
	}
	out, err := cliTranscript(t, Followers(t, pair.Zkraft))
	if err != nil {
		t.Fatalf("cli_mt on zkraft: %v", err)
	}
	want, got := normalizeCli(ref), normalizeCli(out)
	all := strings.Join(want, "\n")
	for _, e := range cliExercises {
		if !strings.Contains(all, e) {
			t.Errorf("the ZooKeeper transcript lacks %q", e)
		}
	}
	if !slices.Equal(want, got) {
		t.Fatalf("cli_mt transcripts differ\n%s", Diff("zookeeper", want, "zkraft", got))
	}
	t.Logf("e2e cclient cli_mt %s: %d steps in 2 sessions, %d transcript lines equal on ZooKeeper 3.8 and zkraft (%v)",
		name, len(cliScript), len(got), time.Since(start).Round(100*time.Millisecond))
}

// loadGenPhases are the lines load_gen logs as it starts each phase of a cycle; every
// phase sends one request per child.
var loadGenPhases = []string{"Creating children", "Starting the write cycle", "Starting the read cycle", "Starting the delete cycle"}

var loadGenPhase = regexp.MustCompile(`^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}):\d+\(0x[0-9a-f]+\):ZOO_INFO@main@\d+: (` +
	strings.Join(loadGenPhases, "|") + `) for path `)

// loadGenRun is what one load_gen run did: completed cycles and the time spent in each
// phase over them.
type loadGenRun struct {
	children int
	cycles   int
	phase    [4]time.Duration // create, set, get, delete
}

func (r loadGenRun) total() time.Duration {
	var d time.Duration
	for _, p := range r.phase {
		d += p
	}
	return d
}

// opsPerSec is the rate of all four phases together, or of phase i alone.
func (r loadGenRun) opsPerSec(i int) float64 {
	d, ops := r.total(), 4*r.children*r.cycles
	if i >= 0 {
		d, ops = r.phase[i], r.children*r.cycles
	}
	if d <= 0 {
		return 0
	}
	return float64(ops) / d.Seconds()
}

// parseLoadGen reads the phase lines of load_gen's log. The first cycle warms up (a
// JVM's first thousands of requests are slow) and is left out; a cycle counts once the
// next one has started, so one cut short by the end of the run is left out too.
func parseLoadGen(lines []string, children int) (loadGenRun, error) {
	r := loadGenRun{children: children}
	var marks []time.Time
	var kinds []int
	for _, l := range lines {
		m := loadGenPhase.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		at, err := time.ParseInLocation("2006-01-02 15:04:05,000", m[1], time.Local)
		if err != nil {
			return r, err
		}
		marks, kinds = append(marks, at), append(kinds, slices.Index(loadGenPhases, m[2]))
	}
	for i, k := range kinds {
		if k != i%4 {
			return r, fmt.Errorf("load_gen's phase %d is %q, want %q", i, loadGenPhases[k], loadGenPhases[i%4])
		}
	}
	r.cycles = max(len(marks)-5, 0) / 4
	for i := 4; i < 4+4*r.cycles; i++ {
		r.phase[i%4] += marks[i+1].Sub(marks[i])
	}
	return r, nil
}

// loadGenCycles is how many cycles after the warm-up one a run measures at least; a
// run lasts runFor, longer if it has not done that many yet, at most loadGenLimit.
const (
	loadGenCycles = 2
	loadGenLimit  = 2 * time.Minute
)

// runLoadGen runs load_gen on addr and checks what load_gen checks itself: every
// request answered without error (it logs ZOO_ERROR otherwise), every read returns what
// the write cycle wrote (it exits otherwise), and it keeps cycling. Then load_gen's
// clean mode deletes what is left. The error says what went wrong, with load_gen's last
// lines.
func runLoadGen(t *testing.T, addr, root string, children int, runFor time.Duration) (loadGenRun, error) {
	p := Start(t, t.TempDir(), loadGen, addr, root, fmt.Sprint(children))
	start := time.Now()
	var r loadGenRun
	var err error
	for p.Running() && time.Since(start) < loadGenLimit {
		time.Sleep(200 * time.Millisecond)
		if r, err = parseLoadGen(p.Output(), children); err != nil || time.Since(start) >= runFor && r.cycles >= loadGenCycles {
			break
		}
	}
	exited := !p.Running()
	p.Stop(5 * time.Second)
	out := p.Output()
	log := func() string { return strings.Join(out[max(0, len(out)-40):], "\n") }
	if exited {
		return r, fmt.Errorf("load_gen on %s exited on its own:\n%s", addr, log())
	}
	for _, l := range out {
		if strings.Contains(l, ":ZOO_ERROR@") {
			return r, fmt.Errorf("load_gen on %s: %s\n%s", addr, l, log())
		}
	}
	if err != nil {
		return r, fmt.Errorf("load_gen on %s: %v\n%s", addr, err, log())
	}
	if r.cycles < loadGenCycles {
		return r, fmt.Errorf("load_gen on %s completed %d cycles after its first in %v:\n%s", addr, r.cycles, loadGenLimit, log())
	}
	clean, err := runClean(t.TempDir(), addr, root)
	if err != nil && (strings.Contains(clean, "zk retcode=-7") || strings.Contains(clean, "rc=-101") || strings.Contains(clean, "rc=-111")) {
		// A request unanswered for two thirds of the session timeout: under a loaded
		// machine's stalls both servers do this now and then (ZooKeeper's follower too,
		// seen in stressed runs). Or NoNode (NotEmpty): the stopped load_gen's last
		// pipelined deletes (creates), read by the server before the connection closed,
		// are applied as on ZooKeeper, and one took a node clean had just listed (added
		// one after clean listed, seen in a stressed run). Clean is idempotent; a
		// second failure fails the test. The pause lets what was in flight finish, so
		// the second run does not race it.
		t.Logf("load_gen %s %s clean timed out once, running it again:\n%s", addr, root, clean)
		time.Sleep(2 * time.Second)
		clean, err = runClean(t.TempDir(), addr, root)
	}
	if err != nil {
		return r, fmt.Errorf("load_gen %s %s clean: %v\n%s", addr, root, err, clean)
	}
	return r, nil
}

// runClean runs load_gen's clean mode on addr: it deletes root and everything under it,
// one synchronous request at a time.
func runClean(dir, addr, root string) (string, error) {
	out, err := Run(time.Minute, dir, loadGen, addr, root, "clean")
	if err == nil && !strings.Contains(out, "Successfully deleted a subtree starting at "+root) {
		err = errors.New("no success line")
	}
	return out, err
}

func testLoadGen(t *testing.T, name string, pair Pair, children int, runFor time.Duration) {
	zk, err := runLoadGen(t, Followers(t, pair.ZooKeeper)[0], "/loadgen", children, runFor)
	if err != nil {
		// As for cli_mt: the reference's stall is not zkraft's to answer for (seen once
		// under CI-like load: a ZooKeeper follower left a delete of load_gen's
		// unanswered until the C client timed it out, ZOO_ERROR errno 110). It runs once
		// more on a fresh ZooKeeper; zkraft gets no second chance.
		t.Logf("load_gen on ZooKeeper 3.8: %v; running it again on a fresh ZooKeeper (%s)", err, name)
		fresh := StartZooKeeper(t, len(pair.ZooKeeper.Members), ztest.Options{})
		if zk, err = runLoadGen(t, Followers(t, fresh)[0], "/loadgen", children, runFor); err != nil {
			t.Fatalf("ZooKeeper 3.8, twice: %v", err)
		}
	}
	zr, err := runLoadGen(t, Followers(t, pair.Zkraft)[0], "/loadgen", children, runFor)
	if err != nil {
		t.Fatal(err)
	}
	phases := make([]string, 4)
	for i, p := range []string{"create", "set", "get", "delete"} {
		phases[i] = fmt.Sprintf("%s %.0f/%.0f", p, zr.opsPerSec(i), zk.opsPerSec(i))
	}
	t.Logf("e2e cclient load_gen %s: %d children, zkraft %.0f ops/s (%d cycles), zookeeper %.0f ops/s (%d cycles), zkraft/zookeeper %.2fx; per phase zkraft/zookeeper ops/s: %s",
		name, children, zr.opsPerSec(-1), zr.cycles, zk.opsPerSec(-1), zk.cycles, zr.opsPerSec(-1)/zk.opsPerSec(-1), strings.Join(phases, ", "))
}
