package server

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/server/ztest"
)

// trySession dials addr and asks for a session (sid 0: a new one), or returns nil and the
// connection's end when the server closed it without an answer.
func trySession(t *testing.T, addr string, sid int64, pw []byte) *rawClient {
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	c := &rawClient{t: t, nc: nc, br: bufio.NewReader(nc)}
	if pw == nil {
		pw = make([]byte, 16)
	}
	req := jute.Connect{ConnectRequest: jute.ConnectRequest{TimeOut: 10000, SessionId: sid, Passwd: pw}, HasReadOnly: true}
	if c.tryConnect(req) == nil {
		return nil
	}
	return c
}

// ended names how a request ended: its reply's error code, or the connection closed.
func ended(h jute.ReplyHeader, err error) string {
	if err != nil {
		return "connection closed"
	}
	return fmt.Sprintf("code %d", h.Err)
}

// largeRequestSteps sends requests below, above and far above largeRequestThreshold=1000
// with largeRequestMaxBytes=5000: a line per outcome, then mntr's counter.
func largeRequestSteps(t *testing.T, addr string) []string {
	var lines []string
	c := trySession(t, addr, 0, nil)
	if c == nil {
		t.Fatal("no session")
	}
	data := func(n int) []byte { return bytes.Repeat([]byte("x"), n) }
	lines = append(lines, "create of 900 bytes: "+ended(c.exchange(jute.OpCreate, &jute.CreateRequest{Path: "/big", Data: data(900), Acl: openACL}, nil)))
	lines = append(lines, "setData of 3000 bytes: "+ended(c.exchange(jute.OpSetData, &jute.SetDataRequest{Path: "/big", Data: data(3000), Version: -1}, nil)))
	lines = append(lines, "setData of 6000 bytes: "+ended(c.exchange(jute.OpSetData, &jute.SetDataRequest{Path: "/big", Data: data(6000), Version: -1}, nil)))
	e := trySession(t, addr, 0, nil)
	var st jute.GetDataResponse
	lines = append(lines, "getData: "+ended(e.exchange(jute.OpGetData, &jute.GetDataRequest{Path: "/big"}, &st)))
	lines = append(lines, fmt.Sprintf("data length %d", len(st.Data)))
	mntr := askFourLetter(t, addr, "mntr")
	lines = append(lines, "zk_large_requests_rejected "+mntrLine(mntr, "large_requests_rejected"))
	return lines
}

// A request longer than largeRequestThreshold holds its bytes until it is answered; one
// that would take the bytes held past largeRequestMaxBytes closes its connection, as in
// ZooKeeper 3.8 (ZooKeeperServer's checkRequestSize), and is counted in mntr. A
// ConnectRequest is checked too (ZooKeeper checks each frame's length as it reads it):
// with a bound smaller than one, no client connects.
func TestLargeRequestLimitMatchesZooKeeper(t *testing.T) {
	limits := func(threshold, max string) ztest.Options {
		return ztest.Options{Logf: t.Logf, ExtraConfig: map[string]string{"largeRequestThreshold": threshold, "largeRequestMaxBytes": max, "4lw.commands.whitelist": "*"}}
	}
	bothTranscripts(t, limits("1000", "5000"), largeRequestSteps)
	bothTranscripts(t, limits("10", "40"), func(t *testing.T, addr string) []string {
		c := trySession(t, addr, 0, nil)
		mntr := askFourLetter(t, addr, "mntr")
		return []string{fmt.Sprintf("session answered %v", c != nil), "zk_large_requests_rejected " + mntrLine(mntr, "large_requests_rejected")}
	})
}

// connThrottleSteps connects new and renewed sessions until the connection throttle's
// bucket of tokens, which never refills within the test, runs out: a line per outcome,
// then the four-letter words and mntr's figures.
func connThrottleSteps(t *testing.T, addr string) []string {
	var lines []string
	connect := func(what string, sid int64, pw []byte) *rawClient {
		c := trySession(t, addr, sid, pw)
		if c == nil {
			lines = append(lines, what+": closed without an answer")
		} else {
			lines = append(lines, what+": answered")
		}
		return c
	}
	first := connect("new session", 0, nil)
	if first == nil {
		t.Fatalf("the first session was refused:\n%s", strings.Join(lines, "\n"))
	}
	first.nc.Close()
	connect("the session renewed", first.sid, first.pw)
	connect("the session renewed again", first.sid, first.pw)
	connect("the session renewed a third time", first.sid, first.pw)
	connect("another new session", 0, nil)
	out, _ := ztest.FourLetter(addr, "ruok")
	lines = append(lines, fmt.Sprintf("ruok: %q", out))
	mntr := askFourLetter(t, addr, "mntr")
	for _, k := range []string{"connection_rejected", "connection_request_count", "connection_drop_probability",
		"avg_connection_token_deficit", "min_connection_token_deficit", "max_connection_token_deficit",
		"cnt_connection_token_deficit", "sum_connection_token_deficit"} {
		lines = append(lines, fmt.Sprintf("zk_%s %s", k, mntrLine(mntr, k)))
	}
	return lines
}

// ZooKeeper's connection throttle (BlueThrottle, 3.6+): each ConnectRequest takes a
// token from a bucket refilled over time, or its connection is closed unanswered and
// counted in zk_connection_rejected; with connection_throttle_weight_enabled a new
// session takes 3 and a renewed one 2 of a bucket three times the size: 3 tokens take
// one new session and two renewals, 9 weighed ones a new session and three renewals.
func TestConnectionThrottleMatchesZooKeeper(t *testing.T) {
	for _, weighed := range []string{"false", "true"} {
		t.Run("weight_enabled="+weighed, func(t *testing.T) {
			bothTranscripts(t, ztest.Options{Logf: t.Logf, ExtraConfig: map[string]string{"4lw.commands.whitelist": "*",
				"connection_throttle_tokens": "3", "connection_throttle_fill_time": "600000",
				"connection_throttle_weight_enabled": weighed}}, connThrottleSteps)
		})
	}
}
