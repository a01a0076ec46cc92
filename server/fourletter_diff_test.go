package server

import (
	"regexp"
	"sort"
	"strings"
	"testing"

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
