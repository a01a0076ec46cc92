package server

import (
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/server/ztest"
)

// TestConsMatchesZooKeeper follows one session through requests and compares its cons
// line with ZooKeeper 3.8's after each: the fields a session's line carries (sid to
// maxlat), the last operation's name and cxid, and the packet counts (the ConnectRequest
// is a packet received); times, zxids, latencies and the queue only by their form. A connection
// without a session (the four-letter word's own) shows no session fields.
func TestConsMatchesZooKeeper(t *testing.T) {
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	run := func(start func(ztest.Options) (*ztest.Server, error)) []string {
		s, err := start(ztest.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Stop()
		// A long session timeout: no ping falls between the steps.
		c, events, err := zk.Connect([]string{s.Addr}, 30*time.Second, zk.WithLogInfo(false))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		for deadline := time.After(20 * time.Second); c.State() != zk.StateHasSession; {
			select {
			case <-events:
			case <-deadline:
				t.Fatalf("%s: no session", s.Name)
			}
		}
		acl := zk.WorldACL(zk.PermAll)
		steps := []func(){
			func() {},
			func() { c.Create("/c", []byte("x"), 0, acl) },
			func() { c.Create("/c", []byte("x"), 0, acl) }, // NodeExists
			func() { c.Multi(&zk.CreateRequest{Path: "/c", Acl: acl}) },
			func() { c.Get("/c") },
			func() { c.Exists("/nope") },
			func() { c.Children("/") },
			func() { c.Delete("/nope", -1) }, // NoNode
			func() { ztest.FourLetter(s.Addr, "crst") },
			func() { c.Get("/c") },
		}
		var lines []string
		for _, step := range steps {
			step()
			// Both count a reply sent once it is written, which may be just after the
			// client has it: ask again (at most 2 s) until the session's line has as
			// many packets sent as received.
			var out string
			for try := 0; try < 40; try++ {
				if out, err = ztest.FourLetter(s.Addr, "cons"); err != nil {
					t.Fatalf("%s: cons: %v", s.Name, err)
				}
				if m := consCounts.FindStringSubmatch(out); m != nil && m[1] == m[2] {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			lines = append(lines, consShape(out))
		}
		return lines
	}
	compareLines(t, run(ztest.StartZooKeeper), run(ztest.StartZkraft))
}

var (
	consCounts = regexp.MustCompile(`recved=(\d+),sent=(\d+),sid=`)
	consAddr   = regexp.MustCompile(`^\s*/[0-9.:]+\[[0-9a-f]+\]`)
	consVaries = regexp.MustCompile(`(queued|sid|est|lzxid|lresp|llat|minlat|avglat|maxlat)=(0x)?[0-9a-f]+`)
)

// consShape keeps a cons answer's lines, sorted (ZooKeeper lists connections in hash
// order), without the client address and the interest ops (ZooKeeper's change while it
// processes), and with the values that differ from run to run (queued too: ZooKeeper
// counts a request out after its reply is sent) replaced by their names.
func consShape(out string) string {
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		l = consAddr.ReplaceAllString(l, "")
		lines = append(lines, consVaries.ReplaceAllString(l, "$1=<$1>"))
	}
	sort.Strings(lines)
	return strings.Join(lines, " | ")
}
