package quorum

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// A node snapshots once the commands since its last snapshot reach SnapshotBytes, however
// few they are (ZooKeeper's snapSizeLimitInKb), and counts from nought again after it.
func TestSnapshotWhenTheLogReachesItsSize(t *testing.T) {
	cfg := DefaultConfig(t.TempDir())
	cfg.SnapshotThreshold = 1 << 40 // never by count
	cfg.SnapshotBytes = 64 << 10
	n, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if err := n.WaitLeader(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	propose(t, n, &Entry{Session: 7, Op: jute.OpCreateSession, Req: &SessionRequest{Timeout: 30000, Password: make([]byte, 16)}})
	data := bytes.Repeat([]byte("x"), 8<<10)
	create := func(i int) {
		t.Helper()
		if r := propose(t, n, &Entry{Session: 7, Op: jute.OpCreate, Req: &jute.CreateRequest{Path: fmt.Sprintf("/n%d", i), Data: data, Acl: open}}); r.Err != jute.OK {
			t.Fatalf("create %d: %v", i, r.Err)
		}
	}
	for i := range 4 { // 32 KiB: under the limit
		create(i)
	}
	time.Sleep(200 * time.Millisecond)
	if _, _, ok := n.LastSnapshot(); ok {
		t.Fatal("a snapshot before the log reached its size")
	}
	for i := 4; i < 9; i++ { // past 64 KiB
		create(i)
	}
	var first int64
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		zxid, _, ok := n.LastSnapshot()
		if ok {
			first = zxid
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no snapshot after the log passed SnapshotBytes")
		}
	}
	// The count starts again: a few more entries take no snapshot.
	create(9)
	time.Sleep(200 * time.Millisecond)
	if zxid, _, _ := n.LastSnapshot(); zxid != first {
		t.Fatalf("another snapshot (at %d, the first at %d) after 8 KiB more", zxid, first)
	}
}
