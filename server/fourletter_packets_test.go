package server

import (
	"regexp"
	"strconv"
	"testing"

	"github.com/zkraft/zkraft/server/ztest"
)

// ZooKeeper counts a four-letter word as one packet received and its answer as one
// packet sent per 8 KiB chunk it flushes, none for an empty answer (NIOServerCnxn's
// checkFourLetterWord and SendBufferWriter). zkraft counted none sent, so collectd's
// packets-sent stayed flat on zkraft while it polled mntr.
func TestFourLetterPackets(t *testing.T) {
	for _, c := range []struct{ n, want int }{{0, 0}, {1, 1}, {8191, 1}, {8192, 1}, {8193, 2}, {16315, 2}, {3 * 8192, 3}} {
		if got := fourLetterPackets(c.n); got != int64(c.want) {
			t.Errorf("an answer of %d bytes counts %d packets sent, want %d", c.n, got, c.want)
		}
	}
}

var receivedSent = regexp.MustCompile(`\nReceived: (\d+)\nSent: (\d+)\n`)

// The counts srvr reports after the same words on ZooKeeper 3.8 and zkraft: words with
// short answers (one packet each), an empty answer (hash, none) and srvr itself.
func TestFourLetterPacketsMatchZooKeeper(t *testing.T) {
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	words := []string{"ruok", "isro", "gtmk", "hash", "srvr", "conf", "hash", "ruok"}
	deltas := func(start func(ztest.Options) (*ztest.Server, error)) [2]int {
		s, err := start(ztest.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Stop()
		counts := func() [2]int {
			m := receivedSent.FindStringSubmatch(askFourLetter(t, s.Addr, "srvr"))
			if m == nil {
				t.Fatalf("%s: srvr has no Received and Sent lines", s.Name)
			}
			r, _ := strconv.Atoi(m[1])
			w, _ := strconv.Atoi(m[2])
			return [2]int{r, w}
		}
		before := counts()
		for _, w := range words {
			askFourLetter(t, s.Addr, w)
		}
		after := counts()
		return [2]int{after[0] - before[0], after[1] - before[1]}
	}
	zk, zr := deltas(ztest.StartZooKeeper), deltas(ztest.StartZkraft)
	// The later srvr counts the earlier one's answer and its own request.
	want := [2]int{len(words) + 1, len(words) - 2 + 1}
	if zk != want {
		t.Fatalf("ZooKeeper counted received/sent %v over %v, want %v: the rule this test holds zkraft to is wrong", zk, words, want)
	}
	if zr != zk {
		t.Fatalf("zkraft counted received/sent %v over %v, ZooKeeper %v", zr, words, zk)
	}
}
