package server

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/server/ztest"
)

// maxCnxnsSteps opens sessions on a server with maxCnxns=2, one more than it takes, a
// four-letter word, then closes one session and connects again: a line per outcome. A
// place is taken again only once the server has seen a connection close (its own
// four-letter connections too), so sessions 1, 2 and 4 are tried until one is answered.
func maxCnxnsSteps(t *testing.T, addr string) []string {
	var lines []string
	try := func() (*rawClient, *jute.Connected) {
		nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			return nil, nil
		}
		t.Cleanup(func() { nc.Close() })
		nc.SetDeadline(time.Now().Add(10 * time.Second))
		c := &rawClient{t: t, nc: nc, br: bufio.NewReader(nc)}
		req := jute.Connect{ConnectRequest: jute.ConnectRequest{TimeOut: 10000, Passwd: make([]byte, 16)}, HasReadOnly: true}
		return c, c.tryConnect(req)
	}
	connect := func(what string, retry bool) *rawClient {
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			c, resp := try()
			if resp != nil {
				lines = append(lines, fmt.Sprintf("%s: session, timeout %d", what, resp.TimeOut))
				return c
			}
			if !retry || time.Now().After(deadline) {
				lines = append(lines, what+": closed without an answer")
				return nil
			}
		}
	}
	first := connect("session 1", true)
	connect("session 2", true)
	connect("session 3", false)
	// The closed connection reads as an error or as EOF, whichever the server's close and
	// the timing make it (ZooKeeper resets the socket): only what was answered counts.
	out, _ := ztest.FourLetter(addr, "srvr")
	lines = append(lines, fmt.Sprintf("srvr: %q", out))
	if first != nil {
		first.nc.Close()
	}
	connect("session 4, after one closed", true)
	return lines
}

// maxCnxns limits all client connections together, as ZooKeeper 3.8's: a connection past
// the limit is closed at once, before its ConnectRequest is answered and before a
// four-letter word is, and a place freed by a closed connection is taken again.
func TestMaxCnxnsMatchesZooKeeper(t *testing.T) {
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	servers := startBoth(t, func(string) ztest.Options {
		return ztest.Options{Logf: t.Logf, ExtraConfig: map[string]string{"maxCnxns": "2", "4lw.commands.whitelist": "*"}}
	})
	want := maxCnxnsSteps(t, servers["zookeeper"].Addr)
	t.Logf("zookeeper:\n%s", strings.Join(want, "\n"))
	if !strings.Contains(want[2], "closed") {
		t.Fatalf("ZooKeeper took a third connection:\n%s", strings.Join(want, "\n"))
	}
	compareLines(t, want, maxCnxnsSteps(t, servers["zkraft"].Addr))
}
