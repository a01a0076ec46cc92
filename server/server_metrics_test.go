package server

import (
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// The metrics quorum feeds (fdatasyncs, snapshots) and the expiries count on a standalone
// server: a connection that sends no handshake within nio.sessionlessCnxnTimeout, a session
// that goes silent for its timeout, a snapshot taken; a standalone server never looks for
// a leader.
func TestServerMetricsCountExpiriesAndStorage(t *testing.T) {
	metricsPort := mustFreePort(t)
	s := startServer(t, func(c *Config) {
		c.TickTime = 50 * time.Millisecond
		c.SessionlessTimeout = 200 * time.Millisecond
		c.MetricsHost, c.MetricsPort = "127.0.0.1", metricsPort
	})
	addr := s.Addr().String()
	mute, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer mute.Close()
	a := dial(t, addr)
	a.nc.Write(jute.AppendFrame(nil, &jute.Connect{ConnectRequest: jute.ConnectRequest{TimeOut: 200, Passwd: make([]byte, 16)}}))
	var ca jute.Connected
	a.readFrame(&ca)
	if h := a.call(jute.OpCreate, &jute.CreateRequest{Path: "/n", Acl: openACL}, nil); h.Err != 0 {
		t.Fatalf("create: %d", h.Err)
	}
	if err := s.node.TakeSnapshot(); err != nil {
		t.Fatal(err)
	}
	a.nc.Close() // silent from now on: the session expires
	value := func(mntr, k string) int {
		n, err := strconv.Atoi(mntrLine(mntr, k))
		if err != nil {
			t.Fatalf("zk_%s: %v\n%s", k, err, mntr)
		}
		return n
	}
	var mntr string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		mntr = askFourLetter(t, addr, "mntr")
		if value(mntr, "stale_sessions_expired") == 1 && value(mntr, "sessionless_connections_expired") == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no expiry counted:\n%s", mntr)
		}
	}
	if n := value(mntr, "cnt_fsynctime"); n < 1 {
		t.Errorf("cnt_fsynctime %d after a write", n)
	}
	if n := value(mntr, "cnt_snapshottime"); n != 1 {
		t.Errorf("cnt_snapshottime %d after one snapshot", n)
	}
	if n := value(mntr, "looking_count") + value(mntr, "cnt_election_time"); n != 0 {
		t.Errorf("a standalone server counts looking or elections: %d", n)
	}
	// ZooKeeper's alerting example (zookeeperMonitor.md) watches these series of its
	// Prometheus provider: the summaries' sums and counts, and their quantiles.
	_, body := httpGet(t, fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort))
	for _, want := range []string{"# TYPE fsynctime summary", "# TYPE election_time summary", "election_time_count 0",
		"snapshottime_count 1", `readlatency{quantile="0.99"} `, "# TYPE stale_sessions_expired counter", "stale_sessions_expired 1"} {
		if !strings.Contains(body, "\n"+want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if !regexp.MustCompile(`(?m)^fsynctime_sum \d+$`).MatchString(body) || strings.Contains(body, "\navg_fsynctime") {
		t.Errorf("/metrics: fsynctime is not served as a summary:\n%s", body)
	}
	if m := value(mntr, "cnt_updatelatency"); m != 2 { // the expiry's closeSession is no request
		t.Errorf("cnt_updatelatency %d, want 2 (createSession, create)", m)
	}
}
