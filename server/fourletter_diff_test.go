package server

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
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

// shape keeps what a four-letter word's layout is made of (keys, headers, fixed text)
// and drops values: "Zxid: 0x1a" -> "Zxid:", "tickTime=2000" -> "tickTime=", a client
// line -> "<client>".
func shape(out string) []string {
	client := regexp.MustCompile(`^\s*(ip: )?/[0-9.:]+`)
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		switch {
		case client.MatchString(l):
			l = "<client>"
		case strings.Contains(l, "\t"):
			l = l[:strings.Index(l, "\t")] + "\t"
		case strings.Contains(l, "="):
			l = l[:strings.Index(l, "=")+1]
		case strings.Contains(l, ": "):
			l = l[:strings.Index(l, ": ")+1]
		}
		lines = append(lines, l)
	}
	return lines
}

func keys(out, sep string) map[string]bool {
	m := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		if i := strings.Index(l, sep); i > 0 {
			m[l[:i]] = true
		}
	}
	return m
}

// TestFourLetterWordsMatchZooKeeper asks both servers every four-letter word and
// compares layouts and key names (values differ by nature: ports, sizes, versions).
func TestFourLetterWordsMatchZooKeeper(t *testing.T) {
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	ask := func(start func(ztest.Options) (*ztest.Server, error)) map[string]string {
		s, err := start(ztest.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Stop()
		out := map[string]string{}
		for _, cmd := range []string{"ruok", "srvr", "stat", "conf", "cons", "envi", "mntr", "wchs", "wchc", "wchp", "dump", "isro", "dirs", "crst", "srst", "gtmk", "hash"} {
			if out[cmd], err = ztest.FourLetter(s.Addr, cmd); err != nil {
				t.Fatalf("%s: %v", cmd, err)
			}
		}
		// stmk takes the new mask as 8 more bytes and answers it; gtmk then reports it.
		if out["stmk"], err = ztest.FourLetter(s.Addr, "stmk\x00\x00\x00\x00\x00\x00\x01\x02"); err != nil {
			t.Fatalf("stmk: %v", err)
		}
		if out["gtmk after stmk"], err = ztest.FourLetter(s.Addr, "gtmk"); err != nil {
			t.Fatalf("gtmk: %v", err)
		}
		return out
	}
	zk, us := ask(ztest.StartZooKeeper), ask(ztest.StartZkraft)
	for _, cmd := range []string{"gtmk", "hash", "stmk", "gtmk after stmk"} {
		if zk[cmd] != us[cmd] {
			t.Errorf("%s: zkraft %q, zookeeper %q", cmd, us[cmd], zk[cmd])
		}
	}
	for _, cmd := range []string{"ruok", "srvr", "stat", "conf", "cons", "wchs", "wchc", "wchp", "isro", "dirs", "crst", "srst"} {
		if w, g := strings.Join(shape(zk[cmd]), "|"), strings.Join(shape(us[cmd]), "|"); w != g {
			t.Errorf("%s layout differs\nzookeeper: %q\nzkraft:    %q", cmd, zk[cmd], us[cmd])
		}
	}
	for _, section := range []string{"SessionTracker dump:", "ephemeral nodes dump:", "Connections dump:"} {
		if !strings.Contains(us["dump"], section+"\n") || !strings.Contains(zk["dump"], section+"\n") {
			t.Errorf("dump lacks %q\nzookeeper: %q\nzkraft: %q", section, zk["dump"], us["dump"])
		}
	}
	zkEnv, usEnv := keys(zk["envi"], "="), keys(us["envi"], "=")
	for _, k := range []string{"zookeeper.version", "host.name", "os.name", "os.arch", "user.dir", "os.memory.free", "os.memory.max", "os.memory.total"} {
		if !zkEnv[k] || !usEnv[k] {
			t.Errorf("envi key %s: zookeeper %v, zkraft %v", k, zkEnv[k], usEnv[k])
		}
	}
	// The process's facts have Java's names and values, in ZooKeeper's order.
	facts := func(envi string) []string {
		var out []string
		for _, l := range strings.Split(envi, "\n") {
			if k, _, _ := strings.Cut(l, "="); slices.Contains([]string{"os.name", "os.arch", "os.version", "user.name", "user.home", "user.dir"}, k) {
				out = append(out, l)
			}
		}
		return out
	}
	if zf, uf := facts(zk["envi"]), facts(us["envi"]); !slices.Equal(zf, uf) || len(uf) != 6 {
		t.Errorf("envi's process facts:\nzookeeper %q\nzkraft    %q", zf, uf)
	}
	if !regexp.MustCompile(`(?m)^zookeeper\.version=\d+\.\d+\.\d+-`).MatchString(us["envi"]) {
		t.Errorf("envi version line not in ZooKeeper's form: %q", us["envi"])
	}
	zkM, usM := keys(zk["mntr"], "\t"), keys(us["mntr"], "\t")
	var extra []string
	for k := range usM {
		if !zkM[k] {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	if len(extra) > 0 {
		t.Errorf("mntr keys ZooKeeper does not have: %v", extra)
	}
	for _, k := range []string{"zk_version", "zk_server_state", "zk_znode_count", "zk_watch_count", "zk_ephemerals_count",
		"zk_approximate_data_size", "zk_num_alive_connections", "zk_outstanding_requests", "zk_packets_received",
		"zk_packets_sent", "zk_avg_latency", "zk_min_latency", "zk_max_latency", "zk_open_file_descriptor_count",
		"zk_max_file_descriptor_count", "zk_global_sessions", "zk_uptime"} {
		if !usM[k] {
			t.Errorf("mntr lacks %s", k)
		}
	}
}

// ZooKeeper keeps data watches (getData, exists, on a missing node too) and child
// watches in two managers and puts a persistent or recursive watch in both: mntr's
// zk_watch_count (and the Prometheus gauge watch_count, the same function) is the sum
// of the two, while wchs, wchc, wchp and the AdminServer's watch_summary, watches and
// watches_by_path show the data manager only (DataTree.getWatchCount,
// dumpWatchesSummary, getWatchesSummary). Both servers get the same watches from two
// sessions (one with a child watch only) and must report the same. Debian's ZooKeeper
// has no Prometheus provider, so zkraft's /metrics is held to ZooKeeper's mntr.
func TestWatchCountsMatchZooKeeper(t *testing.T) {
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	report := func(start func(ztest.Options) (*ztest.Server, error)) map[string]string {
		port, metricsPort := mustFreePort(t), mustFreePort(t)
		s, err := start(ztest.Options{Logf: t.Logf, ExtraConfig: adminConfig(port, "metricsProvider.httpHost", "127.0.0.1", "metricsProvider.httpPort", fmt.Sprint(metricsPort))})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Stop()
		a, b := dial(t, s.Addr), dial(t, s.Addr)
		a.connect(0, nil)
		b.connect(0, nil)
		names := map[int64]string{a.sid: "A", b.sid: "B"}
		for _, step := range []struct {
			c   *rawClient
			op  int32
			req jute.Record
		}{
			{a, jute.OpCreate, &jute.CreateRequest{Path: "/w", Acl: openACL}},
			{a, jute.OpGetData, &jute.GetDataRequest{Path: "/w", Watch: true}},
			{a, jute.OpGetChildren, &jute.GetChildrenRequest{Path: "/w", Watch: true}},
			{a, jute.OpExists, &jute.ExistsRequest{Path: "/missing", Watch: true}},
			{a, jute.OpAddWatch, &jute.AddWatchRequest{Path: "/p", Mode: jute.AddWatchPersistent}},
			{a, jute.OpAddWatch, &jute.AddWatchRequest{Path: "/r", Mode: jute.AddWatchPersistentRecursive}},
			{b, jute.OpGetChildren, &jute.GetChildrenRequest{Path: "/w", Watch: true}},
		} {
			if h := step.c.call(step.op, step.req, nil); h.Err != 0 && h.Err != int32(jute.ErrNoNode) {
				t.Fatalf("%s: op %d: %d", s.Name, step.op, h.Err)
			}
		}
		out := map[string]string{}
		ask := func(cmd string) string {
			o, err := ztest.FourLetter(s.Addr, cmd)
			if err != nil {
				t.Fatalf("%s %s: %v", s.Name, cmd, err)
			}
			return o
		}
		out["mntr zk_watch_count"] = regexp.MustCompile(`zk_watch_count\t\d+`).FindString(ask("mntr"))
		if s.Name == "zkraft" {
			_, body := httpGet(t, fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort))
			out["prometheus watch_count"] = regexp.MustCompile(`(?m)^watch_count \d+`).FindString(body)
		} else {
			out["prometheus watch_count"] = strings.Replace(strings.TrimPrefix(out["mntr zk_watch_count"], "zk_"), "\t", " ", 1)
		}
		out["wchs"] = ask("wchs")
		out["wchc"] = strings.Join(watchLines(ask("wchc"), names), "|")
		out["wchp"] = strings.Join(watchLines(ask("wchp"), names), "|")
		for _, c := range []string{"watch_summary", "watches", "watches_by_path"} {
			_, body := httpGet(t, fmt.Sprintf("http://127.0.0.1:%d/commands/%s", port, c))
			d := json.NewDecoder(strings.NewReader(body))
			d.UseNumber()
			var m map[string]any
			if err := d.Decode(&m); err != nil {
				t.Fatalf("%s %s: %v\n%s", s.Name, c, err, body)
			}
			delete(m, "command")
			delete(m, "error")
			out[c] = sessionNames(canonical(m), names)
		}
		return out
	}
	zk, us := report(ztest.StartZooKeeper), report(ztest.StartZkraft)
	for _, k := range []string{"mntr zk_watch_count", "prometheus watch_count", "wchs", "wchc", "wchp", "watch_summary", "watches", "watches_by_path"} {
		if zk[k] != us[k] {
			t.Errorf("%s\nzookeeper: %q\nzkraft:    %q", k, zk[k], us[k])
		} else {
			t.Logf("%s: %q", k, us[k])
		}
	}
}

// canonical prints decoded JSON with object keys and array elements sorted (ZooKeeper
// lists hash-set order).
func canonical(v any) string {
	switch x := v.(type) {
	case map[string]any:
		var parts []string
		for k, e := range x {
			parts = append(parts, k+":"+canonical(e))
		}
		sort.Strings(parts)
		return "{" + strings.Join(parts, ",") + "}"
	case []any:
		var parts []string
		for _, e := range x {
			parts = append(parts, canonical(e))
		}
		sort.Strings(parts)
		return "[" + strings.Join(parts, ",") + "]"
	}
	return fmt.Sprint(v)
}

// watchLines names the sessions in a wchc or wchp dump and sorts each group's lines
// (ZooKeeper prints hash-set order).
func watchLines(out string, names map[int64]string) []string {
	var groups [][]string
	for _, l := range strings.Split(sessionNames(out, names), "\n") {
		switch {
		case l == "":
		case strings.HasPrefix(l, "\t") && len(groups) > 0:
			groups[len(groups)-1] = append(groups[len(groups)-1], l)
		default:
			groups = append(groups, []string{l})
		}
	}
	var lines []string
	for _, g := range groups {
		sort.Strings(g[1:])
		lines = append(lines, strings.Join(g, ","))
	}
	sort.Strings(lines)
	return lines
}

// sessionNames replaces session ids, in hex (0x...) or decimal, by the test's names.
func sessionNames(s string, names map[int64]string) string {
	for id, name := range names {
		s = strings.ReplaceAll(s, fmt.Sprintf("0x%x", id), name)
		s = strings.ReplaceAll(s, strconv.FormatInt(id, 10), name)
	}
	return s
}

// ZooKeeper's request figures as its 4lw print them: srvr's latency is whole ms with the
// average rounded to four decimals (so never above the maximum), and mntr's client
// response sizes are the last, smallest and largest reply (header and body, without the
// length prefix), which the same requests make equal on both servers; and a standalone
// server's session ids start with the same byte.
func TestRequestFiguresMatchZooKeeper(t *testing.T) {
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	latency := regexp.MustCompile(`(?m)^Latency min/avg/max: (\d+)/(\d+\.\d+)/(\d+)$`)
	figures := func(start func(ztest.Options) (*ztest.Server, error)) map[string]string {
		s, err := start(ztest.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Stop()
		before, err := ztest.FourLetter(s.Addr, "mntr")
		if err != nil {
			t.Fatal(err)
		}
		c := dial(t, s.Addr)
		c.connect(0, nil)
		if h := c.call(jute.OpCreate, &jute.CreateRequest{Path: "/f", Data: make([]byte, 100), Acl: openACL}, &jute.CreateResponse{}); h.Err != 0 {
			t.Fatalf("create: %d", h.Err)
		}
		for range 50 {
			if h := c.call(jute.OpGetData, &jute.GetDataRequest{Path: "/f"}, &jute.GetDataResponse{}); h.Err != 0 {
				t.Fatalf("getData: %d", h.Err)
			}
		}
		if h := c.call(jute.OpExists, &jute.ExistsRequest{Path: "/missing"}, nil); h.Err != int32(jute.ErrNoNode) {
			t.Fatalf("exists: %d", h.Err)
		}
		srvr, err := ztest.FourLetter(s.Addr, "srvr")
		if err != nil {
			t.Fatal(err)
		}
		m := latency.FindStringSubmatch(srvr)
		if m == nil {
			t.Fatalf("no latency line in %q", srvr)
		}
		avg, _ := strconv.ParseFloat(m[2], 64)
		most, _ := strconv.ParseFloat(m[3], 64)
		if decimals := len(m[2]) - strings.Index(m[2], ".") - 1; decimals > 4 || avg > most {
			t.Errorf("latency %s/%s/%s: want the average at most four decimals and at most the maximum", m[1], m[2], m[3])
		}
		after, err := ztest.FourLetter(s.Addr, "mntr")
		if err != nil {
			t.Fatal(err)
		}
		// A standalone server's session tracker puts its id, 1, in a session id's top byte.
		out := map[string]string{"session id's top byte": fmt.Sprint(c.sid >> 56)}
		for _, k := range []string{"zk_last_client_response_size", "zk_min_client_response_size", "zk_max_client_response_size"} {
			pick := regexp.MustCompile(`(?m)^` + k + `\t(-?\d+)$`)
			b, a := pick.FindStringSubmatch(before), pick.FindStringSubmatch(after)
			if b == nil || a == nil {
				t.Fatalf("mntr lacks %s", k)
			}
			out[k] = b[1] + " before, " + a[1] + " after"
		}
		return out
	}
	zk, us := figures(ztest.StartZooKeeper), figures(ztest.StartZkraft)
	for k, want := range zk {
		if us[k] != want {
			t.Errorf("%s: zookeeper %s, zkraft %s", k, want, us[k])
		} else {
			t.Logf("%s: %s", k, want)
		}
	}
}

// mntrLine is the value an mntr answer prints for key (without zk_), or "" when it has none.
func mntrLine(out, key string) string {
	m := regexp.MustCompile(`(?m)^zk_` + key + `\t(.*)$`).FindStringSubmatch(out)
	if m == nil {
		return ""
	}
	return m[1]
}

// srst resets what ZooKeeper's ServerStats.reset resets: latencies, packet counts, the
// client response sizes and every counter of its metrics provider (ServerMetrics.resetAll:
// zk_connection_rejected among them). Both servers refuse a connection over
// maxClientCnxns, then get srst; the counters mntr reports after it must be the same.
func TestStatResetMatchesZooKeeper(t *testing.T) {
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	counters := []string{"packets_received", "packets_sent", "avg_latency", "min_latency", "max_latency",
		"connection_rejected", "last_client_response_size", "min_client_response_size",
		"max_client_response_size", "throttled_ops", "stale_requests", "request_throttle_wait_count"}
	run := func(start func(ztest.Options) (*ztest.Server, error)) map[string]string {
		s, err := start(ztest.Options{Logf: t.Logf, ExtraConfig: map[string]string{"maxClientCnxns": "2"}})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Stop()
		a, b := dial(t, s.Addr), dial(t, s.Addr)
		a.connect(0, nil)
		if h := a.call(jute.OpCreate, &jute.CreateRequest{Path: "/s", Data: []byte("x"), Acl: openACL}, nil); h.Err != 0 {
			t.Fatalf("%s: create: %d", s.Name, h.Err)
		}
		// A third connection from the same address is refused: closed at once, or (seen
		// on ZooKeeper under load) reset before the dial returns.
		if third, err := net.DialTimeout("tcp", s.Addr, 5*time.Second); err == nil {
			third.SetReadDeadline(time.Now().Add(5 * time.Second))
			if n, err := third.Read(make([]byte, 1)); n != 0 || err == nil || isTimeout(err) {
				t.Fatalf("%s: a connection over maxClientCnxns stays open: %d %v", s.Name, n, err)
			}
			third.Close()
		}
		b.nc.Close()
		// Wait for b's connection to be gone, so a four-letter word's is not refused too
		// (each refused one counts).
		var before string
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			before, _ = ztest.FourLetter(s.Addr, "mntr")
			if mntrLine(before, "num_alive_connections") == "2" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: b's connection is not gone:\n%s", s.Name, before)
			}
		}
		if v := mntrLine(before, "connection_rejected"); v == "" || v == "0" {
			t.Fatalf("%s: zk_connection_rejected before srst: %q", s.Name, v)
		}
		if got := askFourLetter(t, s.Addr, "srst"); got != "Server stats reset.\n" {
			t.Fatalf("%s: srst: %q", s.Name, got)
		}
		after := askFourLetter(t, s.Addr, "mntr")
		out := map[string]string{}
		for _, k := range counters {
			out[k] = mntrLine(after, k)
		}
		return out
	}
	zk, us := run(ztest.StartZooKeeper), run(ztest.StartZkraft)
	for _, k := range counters {
		if zk[k] != us[k] {
			t.Errorf("zk_%s after srst: zkraft %q, zookeeper %q", k, us[k], zk[k])
		}
	}
}

// ZooKeeper checks the whitelist before it reads stmk's mask (NIOServerCnxn's
// checkFourLetterWord), so an stmk that is not whitelisted changes nothing: gtmk still
// answers the old mask.
func TestSetTraceMaskOutsideTheWhitelist(t *testing.T) {
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	run := func(start func(ztest.Options) (*ztest.Server, error)) [2]string {
		s, err := start(ztest.Options{Logf: t.Logf, ExtraConfig: map[string]string{"4lw.commands.whitelist": "gtmk, ruok"}})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Stop()
		return [2]string{askFourLetter(t, s.Addr, "stmk\x00\x00\x00\x00\x00\x00\x01\x02"), askFourLetter(t, s.Addr, "gtmk")}
	}
	zk, us := run(ztest.StartZooKeeper), run(ztest.StartZkraft)
	if want := [2]string{"stmk is not executed because it is not in the whitelist.\n", "306"}; zk != want {
		t.Fatalf("ZooKeeper answered stmk, gtmk %q, want %q: the rule this test holds zkraft to is wrong", zk, want)
	}
	if us != zk {
		t.Errorf("stmk outside the whitelist, then gtmk: zkraft %q, ZooKeeper %q", us, zk)
	}
}

// ZooKeeper reads stmk's mask with one read of what has arrived with the word
// (NIOServerCnxn.checkFourLetterWord); fewer than 8 bytes fail that read's getLong, and
// the worker closes the connection at once, unanswered, the mask unchanged. zkraft
// waited 5 s for the rest of the mask.
func TestShortTraceMaskMatchesZooKeeper(t *testing.T) {
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	run := func(start func(ztest.Options) (*ztest.Server, error)) []string {
		s, err := start(ztest.Options{Logf: t.Logf})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Stop()
		var out []string
		for _, word := range []string{"stmk", "stmk\x00\x00\x00\x01"} {
			nc, err := net.Dial("tcp", s.Addr)
			if err != nil {
				t.Fatal(err)
			}
			nc.SetDeadline(time.Now().Add(2 * time.Second))
			nc.Write([]byte(word))
			answer, err := io.ReadAll(nc)
			nc.Close()
			if err != nil {
				out = append(out, fmt.Sprintf("%q: no answer nor close within 2 s", word))
			} else {
				out = append(out, fmt.Sprintf("%q: %q, closed", word, answer))
			}
		}
		return append(out, "gtmk: "+askFourLetter(t, s.Addr, "gtmk"))
	}
	zk, us := run(ztest.StartZooKeeper), run(ztest.StartZkraft)
	if strings.Join(us, "\n") != strings.Join(zk, "\n") {
		t.Errorf("stmk with a short mask:\nzkraft    %q\nzookeeper %q", us, zk)
	}
}

// ZooKeeper's zk_auth_failed_count (ServerStats' authFailedCount) counts only failed
// authentication at the TLS handshake (NettyServerCnxnFactory's CertificateVerifier);
// an addauth that fails with AuthFailed does not count there. zkraft counted it.
func TestAuthFailedCountMatchesZooKeeper(t *testing.T) {
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	run := func(start func(ztest.Options) (*ztest.Server, error)) string {
		s, err := start(ztest.Options{Logf: t.Logf})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Stop()
		for _, scheme := range []string{"nosuch", "x509"} {
			c := dial(t, s.Addr)
			c.connect(0, nil)
			c.send(jute.OpAuth, &jute.AuthPacket{Scheme: scheme, Auth: []byte("x")})
			var h jute.ReplyHeader
			c.readFrame(&h)
			if jute.Code(h.Err) != jute.ErrAuthFailed {
				t.Fatalf("%s: addauth %s: %d, want AuthFailed", s.Name, scheme, h.Err)
			}
			c.nc.Close()
		}
		return mntrLine(askFourLetter(t, s.Addr, "mntr"), "auth_failed_count")
	}
	zk, us := run(ztest.StartZooKeeper), run(ztest.StartZkraft)
	if zk != "0" {
		t.Fatalf("ZooKeeper's zk_auth_failed_count after failed addauths is %q, want 0: the rule this test holds zkraft to is wrong", zk)
	}
	if us != zk {
		t.Errorf("zk_auth_failed_count after failed addauths: zkraft %q, ZooKeeper %q", us, zk)
	}
}

// withMemberWithoutQuorum starts a 3-member cluster with the AdminServer on adminPort
// (one member binds it, the others cannot), stops the two others than the one that bound
// it and runs f on that one once srvr says it does not serve.
func withMemberWithoutQuorum(t *testing.T, start func(int, ztest.Options) (*ztest.Cluster, error), adminPort int, f func(m *ztest.Server)) {
	c, err := start(3, ztest.Options{Logf: t.Logf, ExtraConfig: adminConfig(adminPort)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	_, body := httpGet(t, fmt.Sprintf("http://127.0.0.1:%d/commands/zabstate", adminPort))
	zab, _ := jsonKeys(t, body)
	myid, ok := zab["myid"].(float64)
	if !ok || myid < 1 || int(myid) > len(c.Members) {
		t.Fatalf("%s: zabstate names no member: %s", c.Name, body)
	}
	m := c.Members[int(myid)-1]
	for _, o := range c.Members {
		if o != m {
			o.Stop()
		}
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if out, _ := ztest.FourLetter(m.Addr, "srvr"); strings.Contains(out, "not currently serving") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: a member without its two peers still serves", c.Name)
		}
	}
	f(m)
}

// A ZooKeeper member that does not serve (no quorum) answers every four-letter word that
// needs its ZooKeeperServer with "This ZooKeeper instance is not currently serving
// requests" (isZKServerRunning in each command of org.apache.zookeeper.server.command):
// conf, dirs, crst, srst and hash too (hash without the newline); ruok, envi and gtmk
// answer, isro answers "null".
func TestFourLetterWordsWithoutQuorumMatchZooKeeper(t *testing.T) {
	t.Parallel()
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	words := []string{"ruok", "srvr", "stat", "conf", "cons", "mntr", "wchs", "wchc", "wchp", "dump", "isro", "dirs", "crst", "srst", "gtmk", "hash", "envi"}
	answers := func(start func(int, ztest.Options) (*ztest.Cluster, error)) map[string]string {
		out := map[string]string{}
		withMemberWithoutQuorum(t, start, mustFreePort(t), func(m *ztest.Server) {
			for _, w := range words {
				out[w] = askFourLetter(t, m.Addr, w)
			}
		})
		out["envi"] = strings.SplitAfter(out["envi"], "\n")[0] // the rest is the runtime's
		return out
	}
	zk, us := answers(ztest.StartZooKeeperEnsemble), answers(ztest.StartZkraftCluster)
	for _, w := range words {
		if zk[w] != us[w] {
			t.Errorf("%s without a quorum: zkraft %q, ZooKeeper %q", w, us[w], zk[w])
		}
	}
}

// A quorum member's conf adds its quorum settings to a standalone server's
// (QuorumZooKeeperServer.dumpConf): serverId is its myid, then initLimit, syncLimit,
// electionAlg, its election and quorum ports, its peerType and the membership as
// /zookeeper/config holds it. Ports and data dirs are replaced by names before the
// members' answers are compared with a 3.8 ensemble's.
func TestClusterConfMatchesZooKeeper(t *testing.T) {
	t.Parallel()
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	answers := func(start func(int, ztest.Options) (*ztest.Cluster, error)) []string {
		c, err := start(3, ztest.Options{Logf: t.Logf})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Stop()
		var out []string
		for _, m := range c.Members {
			out = append(out, confNames(askFourLetter(t, m.Addr, "conf")))
		}
		return out
	}
	zk, us := answers(ztest.StartZooKeeperEnsemble), answers(ztest.StartZkraftCluster)
	for i := range zk {
		if zk[i] != us[i] {
			t.Errorf("conf of member %d:\nzkraft:\n%s\nZooKeeper:\n%s", i+1, us[i], zk[i])
		}
	}
}

// confNames replaces the ports and data dirs in a conf answer by names: a member's ports
// by the id of the server line that has them (from the membership conf prints, else from
// the member's own quorum and election ports, as member "self").
func confNames(conf string) string {
	ports := map[string]string{}
	for _, s := range regexp.MustCompile(`(?m)^server\.(\d+)=[0-9.]+:(\d+):(\d+):participant$`).FindAllStringSubmatch(conf, -1) {
		ports[s[2]], ports[s[3]] = "<quorum"+s[1]+">", "<election"+s[1]+">"
	}
	for _, s := range regexp.MustCompile(`(?m)^(quorum|election)Port=(\d+)$`).FindAllStringSubmatch(conf, -1) {
		if ports[s[2]] == "" {
			ports[s[2]] = "<" + s[1] + "self>"
		}
	}
	for port, name := range ports {
		conf = regexp.MustCompile(`\b`+port+`\b`).ReplaceAllString(conf, name)
	}
	return regexp.MustCompile(`(?m)^(clientPort|dataDir|dataDirSize|dataLogDir|dataLogSize)=.*$`).ReplaceAllString(conf, "$1=<$1>")
}

// A member in read-only mode (readonlymode.enabled, without its quorum) is ZooKeeper's
// ReadOnlyZooKeeperServer, no quorum server: its conf has the quorum settings but no
// membership, and its mntr no peer_state and no quorum_size (QuorumZooKeeperServer's).
func TestReadOnlyMemberFourLetterWordsMatchZooKeeper(t *testing.T) {
	t.Parallel()
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	answers := func(start func(int, ztest.Options) (*ztest.Cluster, error)) map[string]string {
		c, err := start(3, ztest.Options{Logf: t.Logf, JVMFlags: []string{"-Dreadonlymode.enabled=true"}})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Stop()
		c.Members[1].Stop()
		c.Members[2].Stop()
		m := c.Members[0]
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			if out, _ := ztest.FourLetter(m.Addr, "isro"); out == "ro" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the member left alone is not read-only", c.Name)
			}
		}
		mntr := askFourLetter(t, m.Addr, "mntr")
		out := map[string]string{"conf": confNames(askFourLetter(t, m.Addr, "conf"))}
		for _, k := range []string{"server_state", "peer_state", "quorum_size", "learners", "synced_followers"} {
			out["mntr "+k] = mntrLine(mntr, k)
		}
		return out
	}
	zk, us := answers(ztest.StartZooKeeperEnsemble), answers(ztest.StartZkraftCluster)
	for k, want := range zk {
		if us[k] != want {
			t.Errorf("%s of a read-only member:\nzkraft:\n%s\nZooKeeper:\n%s", k, us[k], want)
		}
	}
}

// A quorum member's mntr, leader's and followers', has the values ZooKeeper 3.8's has:
// its state and peer state, zk_quorum_size (every quorum member prints it), the leader's
// learner counts, and the tree's figures. Members are compared by role.
// syncedLeaderOf waits for a leader of the 3-member cluster c with two synced followers
// and returns its index: the followers' first heartbeats may still be on their way, and
// on a loaded machine no member may say it leads for a moment (Leader is -1), or another
// one may lead by the next reading.
func syncedLeaderOf(t *testing.T, c *ztest.Cluster) int {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if l := c.Leader(); l >= 0 && mntrLine(askFourLetter(t, c.Members[l].Addr, "mntr"), "synced_followers") == "2" {
			return l
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: no leader with two synced followers", c.Name)
		}
	}
}

func TestClusterMntrMatchesZooKeeper(t *testing.T) {
	t.Parallel()
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	keys := []string{"server_state", "peer_state", "quorum_size", "learners", "synced_followers",
		"synced_non_voting_followers", "synced_observers", "pending_syncs", "znode_count", "ephemerals_count",
		"approximate_data_size", "global_sessions", "watch_count", "last_proposal_size", "min_proposal_size", "max_proposal_size"}
	answers := func(start func(int, ztest.Options) (*ztest.Cluster, error)) []string {
		c, err := start(3, ztest.Options{Logf: t.Logf})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Stop()
		syncedLeaderOf(t, c)
		var out []string
		for i, m := range c.Members {
			mntr := askFourLetter(t, m.Addr, "mntr")
			// Each member was without a leader at its start and waited through an
			// election (more than one if the first leader did not last).
			looked, _ := strconv.Atoi(mntrLine(mntr, "looking_count"))
			elections, _ := strconv.Atoi(mntrLine(mntr, "cnt_election_time"))
			if looked < 1 || elections < 1 || elections > looked {
				t.Errorf("%s member %d: looking_count %d, cnt_election_time %d", c.Name, i, looked, elections)
			}
			var vals []string
			for _, k := range keys {
				if v := mntrLine(mntr, k); v != "" {
					vals = append(vals, k+"="+v)
				}
			}
			out = append(out, strings.Join(vals, " "))
		}
		sort.Strings(out)
		return out
	}
	zk, us := answers(ztest.StartZooKeeperEnsemble), answers(ztest.StartZkraftCluster)
	for i := range zk {
		if zk[i] != us[i] {
			t.Errorf("mntr:\nzkraft    %s\nZooKeeper %s", us[i], zk[i])
		}
	}
}

// ZooKeeper reads 4lw.commands.whitelist and the AdminServer's admin.* keys as the Java
// system properties zookeeper.<key> (its zoo.cfg parser sets them), so they can be given
// as -D in SERVER_JVMFLAGS or JVMFLAGS, as the Administrator's Guide documents; zoo.cfg
// wins over -D. Both servers get the whitelist and the admin port only as -D.
func TestFourLetterAndAdminSystemProperties(t *testing.T) {
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	run := func(start func(ztest.Options) (*ztest.Server, error)) []string {
		port := mustFreePort(t)
		s, err := start(ztest.Options{Logf: t.Logf, DropConfig: []string{"4lw.commands.whitelist"},
			ExtraConfig: map[string]string{"admin.enableServer": "true"},
			JVMFlags: []string{"-Dzookeeper.4lw.commands.whitelist=ruok,conf", "-Dzookeeper.admin.serverAddress=127.0.0.1",
				fmt.Sprintf("-Dzookeeper.admin.serverPort=%d", port)}})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Stop()
		out := []string{askFourLetter(t, s.Addr, "ruok"), strings.SplitAfter(askFourLetter(t, s.Addr, "conf"), "\n")[0],
			askFourLetter(t, s.Addr, "dump")}
		c := http.Client{Timeout: 5 * time.Second}
		resp, err := c.Get(fmt.Sprintf("http://127.0.0.1:%d/commands/ruok", port))
		if err != nil {
			return append(out, "admin port: "+err.Error())
		}
		resp.Body.Close()
		return append(out, fmt.Sprintf("admin port: %d", resp.StatusCode))
	}
	zk, us := run(ztest.StartZooKeeper), run(ztest.StartZkraft)
	for _, o := range [][]string{zk, us} {
		o[1] = regexp.MustCompile(`\d+`).ReplaceAllString(o[1], "N") // conf's first line: clientPort=<port>
	}
	if zk[3] != "admin port: 200" || zk[1] != "clientPort=N\n" {
		t.Fatalf("ZooKeeper did not take the -D properties: %q", zk)
	}
	for i := range zk {
		if zk[i] != us[i] {
			t.Errorf("zkraft %q, ZooKeeper %q", us[i], zk[i])
		}
	}
}
