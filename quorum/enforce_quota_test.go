package quorum

import (
	"testing"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/jute"
)

// zookeeper.enforceQuota is replicated: the entry that sets it passes through the log
// encoding, changes how later writes are judged, and survives a snapshot.
func TestEnforceQuotaEntry(t *testing.T) {
	const s = 0x100
	quota := func(path, data string) *Entry {
		return &Entry{Session: s, Op: jute.OpCreate, Time: 1001, Req: &jute.CreateRequest{Path: path, Data: []byte(data), Acl: open}}
	}
	f := NewFSM(datatree.Options{})
	rs := applyAll(t, f, []*Entry{
		{Session: s, Op: jute.OpCreateSession, Time: 1000, Req: &SessionRequest{Timeout: 4000, Password: make([]byte, 16)}},
		quota("/q", ""), quota("/zookeeper/quota/q", ""),
		quota("/zookeeper/quota/q/zookeeper_limits", "count=-1,bytes=-1=;countHardLimit=1"),
		quota("/zookeeper/quota/q/zookeeper_stats", "count=0,bytes=0"),
		quota("/q/a", ""), // over the hard count, not enforced yet
		{Op: OpSetEnforceQuota, Time: 1002, Req: &EnforceQuotaRequest{On: true}},
		quota("/q/b", ""),
	})
	if rs[5].Err != jute.OK || rs[6].Err != jute.OK || rs[7].Err != jute.ErrQuotaExceeded {
		t.Fatalf("results %v %v %v", rs[5].Err, rs[6].Err, rs[7].Err)
	}
	g := NewFSM(datatree.Options{})
	if err := g.Restore(snapshotReader(snapshotOf(t, f))); err != nil {
		t.Fatal(err)
	}
	if !g.EnforceQuota() {
		t.Fatal("restored FSM lost enforceQuota")
	}
	da, _ := digest(f)
	if db, _ := digest(g); da != db {
		t.Fatal("restored state differs")
	}
	if r := applyAll(t, g, []*Entry{quota("/q/c", "")}); r[0].Err != jute.ErrQuotaExceeded {
		t.Fatalf("restored FSM: %v", r[0].Err)
	}
}
