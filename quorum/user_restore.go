package quorum

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/hashicorp/raft"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/persistence"
	"github.com/zkraft/zkraft/session"
)

// A state replaced while the cluster runs: ZooKeeper 3.9's restore admin command.
//
// ZooKeeper replaces one server's database in place and goes on from the snapshot's zxid,
// so its zxids can go back. Here the leader hands the state to raft as a user snapshot
// (raft.Restore): raft writes it to the leader's snapshot store, restores the leader's
// FSM from it, leaves its log empty with a hole at the snapshot's index, and every other
// member, whose log then no longer matches, gets the snapshot the way a member that fell
// behind does (FSM.Restore, which drops that member's client connections). The state is
// written with zxid = the index raft gives the snapshot, so zxids only go forward and
// "zxid is the Raft index" still holds on every member.
//
// raft takes max(its last index, meta.Index) + 1 for that index; meta.Index is the last
// index plus restoreIndexGap, which is more entries than the leader can append while the
// request waits for raft's loop, so the index is known before the state is written.

// restoreIndexGap is how far past the log's last index a restored state's zxid lies.
const restoreIndexGap = 1 << 16

// ErrRestoreNotLeader: a state is replaced only through the leader.
var ErrRestoreNotLeader = errors.New("this member does not lead; send the restore to the leader")

// RestoreState replaces every member's tree and sessions with st, except the
// /zookeeper/config node, which keeps this cluster's membership. It returns the zxid the
// state now has; st's nodes are used up (st.Nodes is nil after). The sessions keep
// their ids and timeouts; a session the cluster holds now keeps its password, any other
// gets ZooKeeper's (session.ZooKeeperPassword), and every one gets a full timeout on the
// leader. Writes in flight fail (raft.ErrAbortedByRestore) and every member's clients
// are disconnected, as after a snapshot install.
func (n *Node) RestoreState(st *persistence.ZKState, timeout time.Duration) (int64, error) {
	if !n.IsLeader() {
		return 0, ErrRestoreNotLeader
	}
	keepConfig(st, n.FSM)
	// st's nodes, the tree built of them and the state encoded are each about the size
	// of the tree: st is let go once the tree is built, the encoding goes to a file, and
	// between the steps the garbage goes back to the system (the tree's nodes live
	// outside the Go heap, so memory the heap keeps would not be reused for them). The
	// leader then holds about two trees at a time (the one it serves and the one raft
	// installs), not four or five.
	debug.FreeOSMemory()
	state, err := st.ToState(n.FSM.opts)
	if err != nil {
		return 0, err
	}
	st.Nodes = nil
	debug.FreeOSMemory()
	state.Sessions = keepPasswords(state.Sessions, n.FSM)
	last := n.raft.LastIndex()
	zxid := last + restoreIndexGap + 1
	f, size, err := writeStateFile(n.cfg.DataDir, int64(zxid), state)
	if err != nil {
		return 0, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	state = nil
	debug.FreeOSMemory()
	meta := &raft.SnapshotMeta{Version: raft.SnapshotVersionMax, Index: zxid - 1, Size: size}
	if err := n.raft.Restore(meta, f, timeout); err != nil {
		return 0, fmt.Errorf("restore: %w", err)
	}
	// raft numbered the snapshot as the state says, unless it changed how it numbers one
	// (no regular snapshot can follow this soon: the log holds one no-op since).
	if got := n.raft.Stats()["last_snapshot_index"]; got != strconv.FormatUint(zxid, 10) {
		return int64(zxid), fmt.Errorf("restore: the state has zxid 0x%x, raft gave its snapshot index %s", zxid, got)
	}
	return int64(zxid), nil
}

// writeStateFile writes state, with zxid, to a new file in dir and returns it open at its
// start, with its size; the caller closes it. The file is unlinked at once (where the
// system allows it), so a crash leaves nothing behind; the caller removes it too.
func writeStateFile(dir string, zxid int64, state *persistence.State) (*os.File, int64, error) {
	f, err := os.CreateTemp(dir, "restore-*.tmp")
	if err != nil {
		return nil, 0, fmt.Errorf("restore: %w", err)
	}
	os.Remove(f.Name())
	fail := func(err error) (*os.File, int64, error) {
		f.Close()
		os.Remove(f.Name())
		return nil, 0, fmt.Errorf("restore: writing the state: %w", err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	if err := persistence.WriteState(w, zxid, state.Tree, state.Sessions); err != nil {
		return fail(err)
	}
	if err := w.Flush(); err != nil {
		return fail(err)
	}
	size, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return fail(err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fail(err)
	}
	return f, size, nil
}

// keepPasswords gives every session of restored that fsm holds now the password it has
// there: a snapshot carries no passwords, and a client whose session survives the
// restore (a backup of this cluster, restored while the client runs) resumes it with
// the password zkraft gave it, as a ZooKeeper client resumes with the one ZooKeeper
// derives from the id.
func keepPasswords(restored *session.Table, fsm *FSM) *session.Table {
	out := session.NewTable()
	fsm.Read(func(_ *datatree.Tree, cur *session.Table) {
		for _, s := range restored.All() {
			if c, ok := cur.Get(s.ID); ok && c.Password != nil {
				s.Password = c.Password // Add copies it
			}
			out.Add(s)
		}
	})
	return out
}

// keepConfig puts the running cluster's /zookeeper/config (data, stat and ACL) into st in
// place of the snapshot's: the membership is raft's, not the backup's.
func keepConfig(st *persistence.ZKState, fsm *FSM) {
	var cur datatree.StoredNode
	fsm.Read(func(t *datatree.Tree, _ *session.Table) {
		data, s, code := t.Get(datatree.ConfigPath)
		acl, _, _ := t.ACL(datatree.ConfigPath)
		if code != jute.OK {
			return
		}
		cur = datatree.StoredNode{Path: datatree.ConfigPath, Data: bytes.Clone(data), ACL: acl,
			Czxid: s.Czxid, Mzxid: s.Mzxid, Ctime: s.Ctime, Mtime: s.Mtime, Pzxid: s.Pzxid,
			EphemeralOwner: s.EphemeralOwner, Version: s.Version, Cversion: s.Cversion, Aversion: s.Aversion}
	})
	if cur.Path == "" {
		return
	}
	for i := range st.Nodes {
		if st.Nodes[i].Path == datatree.ConfigPath {
			st.Nodes[i] = cur
			return
		}
	}
	// Only a state whose nodes ToState orders lacks it (ReadZooKeeperSnapshot adds it).
	st.Nodes = append(st.Nodes, cur)
}
