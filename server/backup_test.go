package server

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/persistence"
	"github.com/zkraft/zkraft/quorum"
)

// copyDir copies a stopped member's data dir (a backup, as docs/operations.md says).
func copyDir(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.Walk(from, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if fi.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, fi.Mode())
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A backup taken from a follower (stopped for the copy, while the cluster serves)
// restores a new 3-member cluster holding exactly what the follower held.
func TestBackupOfAMemberRestoresANewCluster(t *testing.T) {
	old := newTestCluster(t, 3)
	// The writes go through a client that follows a leader change, as an application
	// does: with the follower stopped for the copy, a loaded machine (CI) may see the
	// leader step down, and it drops its clients then, as ZooKeeper's does.
	zc := zkSession(t, 10*time.Second, old.addr(0), old.addr(1), old.addr(2))
	write := func(p string) {
		t.Helper()
		err := retryLoss(t, func() error { _, err := zc.Create(p, []byte(p), 0, zk.WorldACL(zk.PermAll)); return err })
		if err != nil && err != zk.ErrNodeExists { // a retried create that was applied
			t.Fatalf("create %s: %v", p, err)
		}
	}
	for i := 0; i < 40; i++ {
		write(fmt.Sprintf("/b%02d", i))
	}
	old.converge()
	f := old.follower()
	if err := old.servers[f].Snapshot(); err != nil {
		t.Fatal(err)
	}
	write("/after-the-member-snapshot") // in the backup through its log
	old.converge()
	old.stop(f)
	backup := t.TempDir()
	copyDir(t, old.cfgs[f].DataDir, backup)
	old.start(f)
	write("/after-the-backup")

	restored := newTestClusterSeeded(t, 3, nil, func(cfg Config) {
		st, err := quorum.LoadOffline(persistence.StoreDir(backup), datatree.Options{ExtendedTypes: true})
		if err != nil {
			t.Fatal(err)
		}
		qc := quorum.DefaultConfig(persistence.StoreDir(cfg.DataDir))
		qc.Peers = cfg.Servers
		if err := quorum.Seed(qc, st); err != nil {
			t.Fatal(err)
		}
	})
	restored.converge()
	r := dial(t, restored.addr(restored.follower()))
	r.connect(0, nil)
	if _, ok := exists(t, r, "/after-the-member-snapshot"); !ok {
		t.Fatal("a write in the backup's log is missing")
	}
	if _, ok := exists(t, r, "/after-the-backup"); ok {
		t.Fatal("a write made after the backup appeared")
	}
	if _, ok := exists(t, r, "/b39"); !ok {
		t.Fatal("/b39 missing")
	}
	if h := r.call(jute.OpCreate, &jute.CreateRequest{Path: "/on-the-new-cluster", Acl: openACL}, nil); h.Err != 0 {
		t.Fatalf("create on the new cluster: %d", h.Err)
	}
	restored.converge()
	// The members were configured from their own config, not the old cluster's.
	m, _ := awaitConfig(t, r) // the new leader proposes it when it leads
	if len(m.Peers) != 3 || m.Peers[0].RaftAddr != restored.cfgs[0].Servers[0].RaftAddr {
		t.Fatalf("restored cluster's membership: %+v", m)
	}
}
