package main

import (
	"bytes"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/zkraft/zkraft/server/ztest"
)

// --idle-sessions opens real sessions on both servers (each server counts them as alive
// connections) and prints the RSS each added, side by side with the ratio.
func TestIdleSessionsAreOpenAndMeasured(t *testing.T) {
	if _, err := exec.LookPath("java"); err != nil {
		skipOrFail(t, "java not found: ZooKeeper cannot run here")
	}
	cfg := shortRun(t, "zkraft", 0, []string{"get"}, 1)
	cfg.targets = []string{"zkraft", "zookeeper"}
	targets, errs := startTargets(cfg)
	defer stopTargets(cfg, targets)
	if len(errs) > 0 || len(targets) != 2 {
		skipOrFail(t, "a server did not start: %v", errs)
	}
	const n = 60
	for _, tg := range targets {
		conns, err := openIdleSessions(tg.members, n)
		if err != nil {
			t.Fatalf("%s: %v", tg.name, err)
		}
		out, err := ztest.FourLetter(tg.members[0], "mntr")
		before := sessionsInDump(t, tg.members[0])
		closeIdleSessions(cfg, tg.name, conns)
		// Closed, not left to expire: the session tracker lists none of them.
		if after := sessionsInDump(t, tg.members[0]); before < n || after != before-n {
			t.Errorf("%s: dump lists %d sessions with the idle ones open, %d after they closed", tg.name, before, after)
		}
		if err != nil {
			t.Fatalf("%s: mntr: %v", tg.name, err)
		}
		m := regexp.MustCompile(`zk_num_alive_connections\s+(\d+)`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("%s: no zk_num_alive_connections in mntr:\n%s", tg.name, out)
		}
		if alive, _ := strconv.Atoi(m[1]); alive < n {
			t.Errorf("%s: %d alive connections with %d idle sessions open", tg.name, alive, n)
		}
	}
	var buf bytes.Buffer
	measureIdleSessions(cfg, targets, 200, &buf)
	line := strings.TrimSpace(buf.String())
	t.Log(line)
	re := regexp.MustCompile(`^RSS KiB per idle session \(200 sessions\): zkraft -?[0-9.]+ \(RSS \d+ -> \d+ MiB\), zookeeper -?[0-9.]+ \(RSS \d+ -> \d+ MiB\)`)
	if !re.MatchString(line) {
		t.Errorf("line %q does not give both servers' figures", line)
	}
}

// sessionsInDump is the number of sessions the dump four-letter word counts ("Session
// Sets (sets)/(sessions)" on both servers).
func sessionsInDump(t *testing.T, addr string) int {
	t.Helper()
	out, err := ztest.FourLetter(addr, "dump")
	if err != nil {
		t.Fatalf("dump: %v", err)
	}
	m := regexp.MustCompile(`Session Sets \(\d+\)/\((\d+)\)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no session count in dump:\n%s", out)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}
