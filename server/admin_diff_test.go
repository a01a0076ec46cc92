package server

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/server/ztest"
)

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func jsonKeys(t *testing.T, body string) (map[string]any, []string) {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, body)
	}
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return m, keys
}

// The AdminServer answers ZooKeeper 3.8's commands with the same JSON shapes (the same
// keys; nested ones too for stats), and monitor's keys are a subset of ZooKeeper's.
func TestAdminServerMatchesZooKeeper(t *testing.T) {
	t.Parallel()
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	answers := func(start func(ztest.Options) (*ztest.Server, error)) map[string]string {
		port, err := ztest.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		s, err := start(ztest.Options{Logf: t.Logf, ExtraConfig: adminConfig(port)})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Stop()
		out := map[string]string{}
		for _, c := range adminDiffCommands {
			code, body := httpGet(t, fmt.Sprintf("http://127.0.0.1:%d/commands/%s", port, c))
			if code != http.StatusOK {
				t.Fatalf("%s /commands/%s: %d %s", s.Name, c, code, body)
			}
			out[c] = body
		}
		return out
	}
	zk, us := answers(ztest.StartZooKeeper), answers(ztest.StartZkraft)
	for _, c := range adminDiffCommands {
		zm, zkeys := jsonKeys(t, zk[c])
		um, ukeys := jsonKeys(t, us[c])
		switch c {
		case "monitor", "mntr":
			have := map[string]bool{}
			for _, k := range zkeys {
				have[k] = true
			}
			for _, k := range ukeys {
				if !have[k] {
					t.Errorf("monitor: zkraft key %q is not ZooKeeper's", k)
				}
			}
			for _, k := range []string{"znode_count", "watch_count", "outstanding_requests", "avg_latency", "packets_sent", "num_alive_connections", "ephemerals_count", "approximate_data_size", "server_state"} {
				if _, ok := um[k]; !ok {
					t.Errorf("monitor lacks %s", k)
				}
			}
		case "environment", "envi":
			for _, k := range []string{"zookeeper.version", "host.name", "os.name", "os.arch", "user.dir", "command", "error"} {
				if _, ok := um[k]; !ok {
					t.Errorf("environment lacks %s", k)
				}
			}
		default:
			if strings.Join(zkeys, ",") != strings.Join(ukeys, ",") {
				t.Errorf("%s: keys %v, ZooKeeper's %v", c, ukeys, zkeys)
			}
		}
		if c == "stats" {
			_, zs := jsonKeys(t, mustJSON(t, zm["server_stats"]))
			_, us := jsonKeys(t, mustJSON(t, um["server_stats"]))
			if strings.Join(zs, ",") != strings.Join(us, ",") {
				t.Errorf("stats.server_stats: keys %v, ZooKeeper's %v", us, zs)
			}
		}
		if um["command"] != zm["command"] || um["error"] != zm["error"] {
			t.Errorf("%s: command %v, error %v, ZooKeeper's %v, %v", c, um["command"], um["error"], zm["command"], zm["error"])
		}
	}
}

// The commands compared; leader is left out (a standalone ZooKeeper answers it with an
// error and no other keys, as zkraft does).
var adminDiffCommands = []string{"ruok", "stats", "server_stats", "monitor", "configuration", "connections",
	"environment", "is_read_only", "dump", "watch_summary", "watches", "watches_by_path", "dirs",
	"voting_view", "observers", "last_snapshot", "initial_configuration", "zabstate", "srvr", "mntr", "conf", "cons", "wchs",
	"observer_connection_stat_reset", "orst"}

func mustJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Probes and metrics: /healthz and /ready on a member, /ready failing on a member without
// a leader; /metrics with ZooKeeper's metric names and Raft's.
func TestReadinessAndMetrics(t *testing.T) {
	tc := newTestClusterWith(t, 3, func(c *Config) {
		c.AdminEnabled, c.AdminHost, c.AdminPort = true, "127.0.0.1", mustFreePort(t)
		c.MetricsHost, c.MetricsPort = "127.0.0.1", mustFreePort(t)
	})
	l := tc.leader()
	admin := fmt.Sprintf("http://127.0.0.1:%d", tc.cfgs[l].AdminPort)
	if code, body := httpGet(t, admin+"/healthz"); code != 200 {
		t.Fatalf("healthz: %d %s", code, body)
	}
	if code, body := httpGet(t, admin+"/ready"); code != 200 {
		t.Fatalf("ready on the leader: %d %s", code, body)
	}
	metrics := fmt.Sprintf("http://127.0.0.1:%d/metrics", tc.cfgs[l].MetricsPort)
	code, body := httpGet(t, metrics)
	// The followers' first heartbeats may still be on their way.
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(body, "\nsynced_followers 2\n") && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		code, body = httpGet(t, metrics)
	}
	for _, want := range []string{"\nznode_count ", "\nwatch_count ", "\noutstanding_requests ", "\navg_latency ", "\npackets_sent ",
		"\nnum_alive_connections ", "\nephemerals_count ", "\napproximate_data_size ", "\nquorum_size 3\n", "\nsynced_followers 2\n",
		"\nraft_term ", "\nraft_commit_index ", "\nraft_applied_index ", "\nraft_last_snapshot_index ", "# TYPE znode_count gauge"} {
		if code != 200 || !strings.Contains("\n"+body, want) {
			t.Fatalf("metrics lack %q:\n%s", want, body)
		}
	}
	// A member cut off from the others is not ready.
	f := tc.follower()
	tc.net.Isolate(fmt.Sprint(f + 1))
	defer tc.net.Heal()
	fadmin := fmt.Sprintf("http://127.0.0.1:%d", tc.cfgs[f].AdminPort)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if code, _ := httpGet(t, fadmin+"/ready"); code == http.StatusServiceUnavailable {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("an isolated member stays ready")
		}
	}
	if code, _ := httpGet(t, fadmin+"/healthz"); code != 200 {
		t.Fatal("an isolated member is not live")
	}
}

func mustFreePort(t *testing.T) int {
	p, err := ztest.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// On a 3-member cluster the cluster commands have ZooKeeper's keys, nested ones included.
// (Every member is given the same admin port; one binds it, the others log that they
// could not, as ZooKeeper's do.)
func TestAdminServerClusterCommandsMatchZooKeeper(t *testing.T) {
	t.Parallel()
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	answers := func(start func(int, ztest.Options) (*ztest.Cluster, error)) map[string]map[string]any {
		port := mustFreePort(t)
		c, err := start(3, ztest.Options{Logf: t.Logf, ExtraConfig: adminConfig(port)})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Stop()
		out := map[string]map[string]any{}
		for _, cmd := range []string{"leader", "voting_view", "observers", "zabstate"} {
			code, body := httpGet(t, fmt.Sprintf("http://127.0.0.1:%d/commands/%s", port, cmd))
			if code != http.StatusOK {
				t.Fatalf("%s %s: %d %s", c.Name, cmd, code, body)
			}
			out[cmd], _ = jsonKeys(t, body)
		}
		return out
	}
	zk, us := answers(ztest.StartZooKeeperEnsemble), answers(ztest.StartZkraftCluster)
	var compare func(where string, z, u map[string]any)
	compare = func(where string, z, u map[string]any) {
		_, zk := jsonKeys(t, mustJSON(t, z))
		_, uk := jsonKeys(t, mustJSON(t, u))
		if strings.Join(zk, ",") != strings.Join(uk, ",") {
			t.Errorf("%s: keys %v, ZooKeeper's %v", where, uk, zk)
			return
		}
		for k, zv := range z {
			if zm, ok := zv.(map[string]any); ok {
				if um, ok := u[k].(map[string]any); ok {
					compare(where+"."+k, zm, um)
				} else {
					t.Errorf("%s.%s: %T, ZooKeeper's an object", where, k, u[k])
				}
			}
		}
	}
	for cmd := range zk {
		compare(cmd, zk[cmd], us[cmd])
	}
}

// A ZooKeeper 3.8 member that does not serve answers every AdminServer command with 200
// (Commands.runCommand; 3.9 keeps it "to keep the current behavior"), an unknown one too:
// the commands that need the server (all but environment, get/set_trace_mask, monitor,
// system_properties and zabstate) with the error "This ZooKeeper instance is not
// currently serving requests" and no other key, and zabstate with voting false and an
// empty zabstate. (monitor is left out: 3.8 fails it with a NullPointerException, 500;
// zkraft answers it as the commands that need the server, docs/compatibility.md.)
func TestAdminServerWithoutQuorumMatchesZooKeeper(t *testing.T) {
	t.Parallel()
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	commands := []string{"ruok", "stats", "server_stats", "configuration", "connections", "environment",
		"is_read_only", "dump", "watch_summary", "watches", "watches_by_path", "dirs", "leader", "voting_view",
		"observers", "last_snapshot", "initial_configuration", "zabstate", "hash", "stat_reset",
		"connection_stat_reset", "srvr", "conf", "nosuch"}
	answers := func(start func(int, ztest.Options) (*ztest.Cluster, error)) map[string]string {
		out := map[string]string{}
		port := mustFreePort(t)
		withMemberWithoutQuorum(t, start, port, func(*ztest.Server) {
			for _, c := range commands {
				code, body := httpGet(t, fmt.Sprintf("http://127.0.0.1:%d/commands/%s", port, c))
				m, keys := jsonKeys(t, body)
				if c == "environment" {
					keys = nil // the runtime's
				}
				out[c] = fmt.Sprintf("%d command=%v error=%v keys=%v", code, m["command"], m["error"], keys)
				if c == "zabstate" {
					out[c] += " " + canonical(m)
				}
			}
		})
		return out
	}
	zk, us := answers(ztest.StartZooKeeperEnsemble), answers(ztest.StartZkraftCluster)
	for _, c := range commands {
		if zk[c] != us[c] {
			t.Errorf("/commands/%s without a quorum:\nzkraft    %s\nZooKeeper %s", c, us[c], zk[c])
		}
	}
}

// envi and the AdminServer's environment are the same list (ZooKeeper's Environment.list)
// rendered twice: the same keys, and in JSON every value the string envi prints.
func TestAdminEnvironmentIsEnvi(t *testing.T) {
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	check := func(start func(ztest.Options) (*ztest.Server, error)) []string {
		s, port := startAdmin(t, start, ztest.Options{})
		defer s.Stop()
		envi := map[string]string{}
		for _, l := range strings.Split(strings.TrimSuffix(askFourLetter(t, s.Addr, "envi"), "\n"), "\n")[1:] {
			k, v, _ := strings.Cut(l, "=")
			envi[k] = v
		}
		_, body := httpGet(t, fmt.Sprintf("http://127.0.0.1:%d/commands/environment", port))
		m, _ := jsonKeys(t, body)
		delete(m, "command")
		delete(m, "error")
		var problems []string
		for k, v := range m {
			str, ok := v.(string)
			switch {
			case !ok:
				problems = append(problems, fmt.Sprintf("%s is %T %v, not a string", k, v, v))
			case envi[k] == "":
				problems = append(problems, k+" is not in envi")
			case !strings.HasPrefix(k, "os.memory.") && k != "host.name" && envi[k] != str:
				// (The memory figures move, and ZooKeeper looks its host name up each time.)
				problems = append(problems, fmt.Sprintf("%s is %q, envi's %q", k, str, envi[k]))
			}
		}
		for k := range envi {
			if _, ok := m[k]; !ok {
				problems = append(problems, "envi's "+k+" is not in environment")
			}
		}
		sort.Strings(problems)
		return problems
	}
	if zk := check(ztest.StartZooKeeper); len(zk) > 0 {
		t.Fatalf("ZooKeeper's environment is not its envi: %v: the rule this test holds zkraft to is wrong", zk)
	}
	if us := check(ztest.StartZkraft); len(us) > 0 {
		t.Errorf("zkraft's environment is not its envi: %v", us)
	}
}

// The AdminServer's connection info is ServerCnxn.getConnectionInfo's: in connections
// the full one, with the session id and the time it was established as numbers (ms since
// the epoch); in stats the brief one (address, interest ops, queue and packet counts).
// Both servers list one session's connection; keys, JSON types and the session id must
// match.
func TestAdminConnectionInfoMatchesZooKeeper(t *testing.T) {
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	run := func(start func(ztest.Options) (*ztest.Server, error)) map[string]string {
		s, port := startAdmin(t, start, ztest.Options{})
		defer s.Stop()
		c := dial(t, s.Addr)
		c.connect(0, nil)
		if h := c.call(jute.OpGetData, &jute.GetDataRequest{Path: "/"}, nil); h.Err != 0 {
			t.Fatalf("%s: getData: %d", s.Name, h.Err)
		}
		out := map[string]string{}
		for _, cmd := range []string{"connections", "stats"} {
			_, body := httpGet(t, fmt.Sprintf("http://127.0.0.1:%d/commands/%s", port, cmd))
			d := json.NewDecoder(strings.NewReader(body))
			d.UseNumber()
			var m map[string]any
			if err := d.Decode(&m); err != nil {
				t.Fatalf("%s %s: %v\n%s", s.Name, cmd, err, body)
			}
			conns, _ := m["connections"].([]any)
			if len(conns) != 1 {
				t.Fatalf("%s %s: want one connection: %s", s.Name, cmd, body)
			}
			var fields []string
			for k, v := range conns[0].(map[string]any) {
				switch v.(type) {
				case string:
					fields = append(fields, k+":string")
				case json.Number:
					fields = append(fields, k+":number")
				default:
					fields = append(fields, fmt.Sprintf("%s:%T", k, v))
				}
				if k == "session_id" {
					out[cmd+" session_id is the session's"] = fmt.Sprint(fmt.Sprint(v) == strconv.FormatInt(c.sid, 10))
				}
			}
			sort.Strings(fields)
			out[cmd] = strings.Join(fields, " ")
		}
		return out
	}
	zk, us := run(ztest.StartZooKeeper), run(ztest.StartZkraft)
	for k, want := range zk {
		if us[k] != want {
			t.Errorf("%s:\nzkraft    %s\nZooKeeper %s", k, us[k], want)
		}
	}
}

// A quorum member knows its own client address, though its server line names none: the
// AdminServer's voting_view and zabstate show it for the member that answers (host:port
// of its clientPortAddress and clientPort), and "" for the others.
func TestAdminOwnClientAddressMatchesZooKeeper(t *testing.T) {
	t.Parallel()
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	answers := func(start func(int, ztest.Options) (*ztest.Cluster, error)) string {
		port := mustFreePort(t)
		c, err := start(3, ztest.Options{Logf: t.Logf, ExtraConfig: adminConfig(port)})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Stop()
		_, body := httpGet(t, fmt.Sprintf("http://127.0.0.1:%d/commands/zabstate", port))
		zab, _ := jsonKeys(t, body)
		myid, _ := zab["myid"].(float64)
		if myid < 1 || int(myid) > len(c.Members) {
			t.Fatalf("%s: zabstate names no member: %s", c.Name, body)
		}
		own := c.Members[int(myid)-1].Addr
		name := func(addr any) string {
			if addr == own {
				return "own"
			}
			return fmt.Sprintf("%q", addr)
		}
		out := []string{"zabstate " + name(zab["client_address"])}
		_, body = httpGet(t, fmt.Sprintf("http://127.0.0.1:%d/commands/voting_view", port))
		view, _ := jsonKeys(t, body)
		members, _ := view["current_config"].(map[string]any)
		for id := 1; id <= len(c.Members); id++ {
			m, _ := members[fmt.Sprint(id)].(map[string]any)
			who := "other"
			if id == int(myid) {
				who = "self"
			}
			out = append(out, who+" "+name(m["client_address"]))
		}
		sort.Strings(out)
		return strings.Join(out, ", ")
	}
	zk, us := answers(ztest.StartZooKeeperEnsemble), answers(ztest.StartZkraftCluster)
	if us != zk {
		t.Errorf("client addresses: zkraft %s, ZooKeeper %s", us, zk)
	}
}

// The AdminServer's last_snapshot is ZooKeeper's LastSnapshotCommand: the zxid of the
// newest snapshot and when its file was written (FileSnap's lastModified, in seconds).
// zkraft answered the time of the question. With snapCount 10 and 40 writes both servers
// take a snapshot; asked again 2 s later, with nothing written meanwhile, the answer is
// the same and at least 2 s old.
func TestAdminLastSnapshotMatchesZooKeeper(t *testing.T) {
	t.Parallel()
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	type lastSnapshot struct {
		Zxid      string
		Timestamp int64
	}
	run := func(start func(ztest.Options) (*ztest.Server, error)) string {
		port := mustFreePort(t)
		s, err := start(ztest.Options{Logf: t.Logf, ExtraConfig: adminConfig(port, "snapCount", "10")})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Stop()
		ask := func() lastSnapshot {
			_, body := httpGet(t, fmt.Sprintf("http://127.0.0.1:%d/commands/last_snapshot", port))
			var ls lastSnapshot
			if err := json.Unmarshal([]byte(body), &ls); err != nil {
				t.Fatalf("%s: %v\n%s", s.Name, err, body)
			}
			return ls
		}
		initial := ask()
		c := dial(t, s.Addr)
		c.connect(0, nil)
		defer c.nc.Close()
		for i := 0; i < 40; i++ {
			if h := c.call(jute.OpCreate, &jute.CreateRequest{Path: fmt.Sprintf("/n%d", i), Acl: openACL}, nil); h.Err != 0 {
				t.Fatalf("%s: create: %d", s.Name, h.Err)
			}
		}
		first := ask()
		for deadline := time.Now().Add(20 * time.Second); first.Zxid == initial.Zxid && time.Now().Before(deadline); {
			time.Sleep(100 * time.Millisecond)
			first = ask()
		}
		// snapCount 10 may take more than one snapshot of the 40 writes, and a loaded
		// machine's ZooKeeper finished one in the background after the first answer
		// changed (seen under CPU burners): wait until two answers a second apart agree
		// (the parallel tests beside this one starve its snapshot thread for a while).
		first = settled(time.Second, 15*time.Second, ask)
		time.Sleep(2100 * time.Millisecond)
		again := ask()
		return fmt.Sprintf("a snapshot after the writes: %v, the same answer 2 s later: %v, at least 2 s old then: %v",
			first.Zxid != initial.Zxid, again == first, time.Now().Unix()-again.Timestamp >= 2)
	}
	zk, us := run(ztest.StartZooKeeper), run(ztest.StartZkraft)
	if want := "a snapshot after the writes: true, the same answer 2 s later: true, at least 2 s old then: true"; zk != want {
		t.Fatalf("ZooKeeper: %s: the rule this test holds zkraft to is wrong", zk)
	}
	if us != zk {
		t.Errorf("last_snapshot: zkraft %s\nZooKeeper %s", us, zk)
	}
}

// admin.commandURL moves the commands (JettyAdminServer serves them at <commandURL>/*):
// they answer there and no longer at /commands.
func TestAdminCommandURLMatchesZooKeeper(t *testing.T) {
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	run := func(start func(ztest.Options) (*ztest.Server, error)) []string {
		port := mustFreePort(t)
		s, err := start(ztest.Options{Logf: t.Logf, ExtraConfig: adminConfig(port, "admin.commandURL", "/zk")})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Stop()
		var out []string
		for _, path := range []string{"/zk/ruok", "/zk/srvr", "/commands/ruok"} {
			code, body := httpGet(t, fmt.Sprintf("http://127.0.0.1:%d%s", port, path))
			line := fmt.Sprintf("%s %d", path, code)
			if code == http.StatusOK {
				m, _ := jsonKeys(t, body)
				line += fmt.Sprintf(" command=%v error=%v", m["command"], m["error"])
			}
			out = append(out, line)
		}
		return out
	}
	zk, us := run(ztest.StartZooKeeper), run(ztest.StartZkraft)
	if strings.Join(zk, "|") != strings.Join(us, "|") {
		t.Errorf("admin.commandURL=/zk:\nzkraft    %q\nZooKeeper %q", us, zk)
	}
}

// startAdmin starts a server with start and opts, its AdminServer on a free port of
// 127.0.0.1 (adminConfig), and returns it and that port; the caller stops it.
func startAdmin(t *testing.T, start func(ztest.Options) (*ztest.Server, error), opts ztest.Options) (*ztest.Server, int) {
	t.Helper()
	port := mustFreePort(t)
	opts.Logf, opts.ExtraConfig = t.Logf, adminConfig(port)
	s, err := start(opts)
	if err != nil {
		t.Fatal(err)
	}
	return s, port
}

// adminConfig is the zoo.cfg of a server whose AdminServer listens on 127.0.0.1:port, with
// the extra keys and values given in pairs.
func adminConfig(port int, kv ...string) map[string]string {
	cfg := map[string]string{"admin.enableServer": "true", "admin.serverPort": fmt.Sprint(port), "admin.serverAddress": "127.0.0.1"}
	for i := 0; i+1 < len(kv); i += 2 {
		cfg[kv[i]] = kv[i+1]
	}
	return cfg
}

// get_trace_mask and set_trace_mask answer as ZooKeeper 3.8's, share their mask with the
// four-letter words gtmk and stmk, and the command list at /commands (and /commands/)
// names the same commands (zkraft adds 3.9's restore and snapshot), with no Content-Type;
// /commands//stat asks for a command named "/stat".
func TestAdminTraceMaskMatchesZooKeeper(t *testing.T) {
	t.Parallel()
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	steps := []string{"gtmk", "set_trace_mask", "stmk?traceMask=abc", "stmk?traceMask=", "stmk?traceMask=-1",
		"get_trace_mask", "4lw gtmk", "set_trace_mask?traceMask=%2B255", "4lw gtmk", "stmk?traceMask=+1", "stmk?traceMask=306"}
	run := func(start func(ztest.Options) (*ztest.Server, error)) ([]string, []string) {
		s, port := startAdmin(t, start, ztest.Options{})
		defer s.Stop()
		var out []string
		for _, step := range steps {
			if word, ok := strings.CutPrefix(step, "4lw "); ok {
				out = append(out, step+": "+askFourLetter(t, s.Addr, word))
				continue
			}
			code, body := httpGet(t, fmt.Sprintf("http://127.0.0.1:%d/commands/%s", port, step))
			m, keys := jsonKeys(t, body)
			out = append(out, fmt.Sprintf("%s: %d %v command=%v error=%v tracemask=%v", step, code, keys, m["command"], m["error"], m["tracemask"]))
		}
		_, hdr, listBody := adminGet(t, fmt.Sprintf("http://127.0.0.1:%d/commands", port), "")
		list := string(listBody)
		out = append(out, "/commands Content-Type: "+hdr.Get("Content-Type"))
		// With a trailing slash, the same list; a doubled slash names a command "/stat".
		if _, slash := httpGet(t, fmt.Sprintf("http://127.0.0.1:%d/commands/", port)); slash != list {
			out = append(out, "/commands/ differs from /commands: "+slash)
		}
		code, body := httpGet(t, fmt.Sprintf("http://127.0.0.1:%d/commands//stat", port))
		m, _ := jsonKeys(t, body)
		out = append(out, fmt.Sprintf("/commands//stat: %d command=%v error=%v", code, m["command"], m["error"]))
		var names []string
		for _, line := range strings.Split(list, "\n") {
			if name, ok := strings.CutPrefix(line, `<a href="/commands/`); ok {
				names = append(names, name[:strings.IndexByte(name, '"')])
			}
		}
		return out, names
	}
	zk, zkNames := run(ztest.StartZooKeeper)
	us, usNames := run(ztest.StartZkraft)
	for i := range zk {
		if zk[i] != us[i] {
			t.Errorf("zkraft    %s\nZooKeeper %s", us[i], zk[i])
		}
	}
	// The mask set over HTTP is the 4lw's, on zkraft as on ZooKeeper.
	if !slices.Contains(us, "4lw gtmk: 255") {
		t.Errorf("gtmk never answered 255 after set_trace_mask?traceMask=%%2B255: %q", us)
	}
	want := append(slices.Clone(zkNames), "restore", "snapshot")
	slices.Sort(want)
	if !slices.Equal(usNames, want) || len(usNames) < 25 {
		t.Errorf("/commands lists\n%q\nwant (ZooKeeper's, with 3.9's restore and snapshot)\n%q", usNames, want)
	}
}

// system_properties lists the -D properties the server was started with, read or not,
// and the process's facts under Java's names with the JVM's values (ZooKeeper's list has
// the rest of its JVM's as well).
func TestAdminSystemPropertiesMatchZooKeeper(t *testing.T) {
	t.Parallel()
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	keys := []string{"zkraft.test.probe", "zkraft.test.bare", "file.separator", "path.separator", "line.separator",
		"os.name", "os.arch", "os.version", "user.dir", "user.home", "user.name"}
	if os.Getenv("SERVER_JVMFLAGS") != "" {
		t.Skip("SERVER_JVMFLAGS is set: zkraft would list its properties, ZooKeeper would not get them")
	}
	run := func(start func(ztest.Options) (*ztest.Server, error)) map[string]any {
		s, port := startAdmin(t, start, ztest.Options{JVMFlags: []string{"-Dzkraft.test.probe=a=b", "-Dzkraft.test.bare", "-Dzookeeper.ssl.keyStore.password=hush"}})
		defer s.Stop()
		code, body := httpGet(t, fmt.Sprintf("http://127.0.0.1:%d/commands/sysp", port))
		m, _ := jsonKeys(t, body)
		if code != http.StatusOK || m["command"] != "system_properties" || m["error"] != nil {
			t.Fatalf("%s sysp: %d %s", s.Name, code, body)
		}
		return m
	}
	zk, us := run(ztest.StartZooKeeper), run(ztest.StartZkraft)
	for _, k := range keys {
		if zk[k] != us[k] {
			t.Errorf("%s: zkraft %q, ZooKeeper %q", k, us[k], zk[k])
		}
	}
	if us["zkraft.test.probe"] != "a=b" || us["zkraft.test.bare"] != "" || us["os.name"] == nil {
		t.Errorf("zkraft's properties: %v", us)
	}
	// A password is hidden (ZooKeeper shows it).
	if us["zookeeper.ssl.keyStore.password"] != "********" || zk["zookeeper.ssl.keyStore.password"] != "hush" {
		t.Errorf("the key store's password: zkraft %q, ZooKeeper %q", us["zookeeper.ssl.keyStore.password"], zk["zookeeper.ssl.keyStore.password"])
	}
}

// The AdminServer's answers are written as ZooKeeper's Jackson writes them: the same
// lines (`"key" : value`, the same nesting and empty forms, no newline at the end), the
// answer's own keys in the same order, "command" and "error" last (in the order
// ZooKeeper gives them when the command set the error itself). Values are masked; their
// types and figures are compared by TestAdminServerMatchesZooKeeper. Nested objects are
// compared as sets of lines: 3.8.0 writes server_stats' fields in an order that varies
// between its runs (Java's reflection).
func TestAdminJSONTextMatchesZooKeeper(t *testing.T) {
	t.Parallel()
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	cmds := []string{"ruok", "stats", "srvr", "conf", "cons", "wchs", "isro", "gtmk", "dirs", "lsnp", "voting_view", "obsr",
		"nope", "set_trace_mask", "stmk?traceMask=x", "leader"}
	scalar := regexp.MustCompile(`" : ("(?:[^"\\]|\\.)*"|-?[0-9][0-9.E-]*|true|false|null)`)
	// shape is the answer's own keys in order, then its lines sorted, without commas.
	shape := func(body string) string {
		lines := strings.Split(scalar.ReplaceAllString(body, `" : V`), "\n")
		var top []string
		for i, l := range lines {
			lines[i] = strings.TrimSuffix(l, ",")
			if k, ok := strings.CutPrefix(lines[i], "  \""); ok {
				top = append(top, k[:strings.IndexByte(k, '"')])
			}
		}
		slices.Sort(lines)
		return strings.Join(top, " ") + "\n" + strings.Join(lines, "\n")
	}
	run := func(start func(ztest.Options) (*ztest.Server, error)) []string {
		s, port := startAdmin(t, start, ztest.Options{})
		defer s.Stop()
		var out []string
		for _, c := range cmds {
			_, body := httpGet(t, fmt.Sprintf("http://127.0.0.1:%d/commands/%s", port, c))
			out = append(out, body)
		}
		return out
	}
	zk, us := run(ztest.StartZooKeeper), run(ztest.StartZkraft)
	for i, c := range cmds {
		if shape(zk[i]) != shape(us[i]) {
			t.Errorf("%s:\nzkraft\n%s\nZooKeeper\n%s", c, us[i], zk[i])
		}
	}
	if want := "{\n  \"command\" : V,\n  \"error\" : V\n}"; scalar.ReplaceAllString(us[0], `" : V`) != want ||
		!strings.Contains(us[1], "\n  \"server_stats\" : {\n") {
		t.Errorf("ruok and stats on zkraft:\n%q\n%s", us[0], us[1])
	}
}
