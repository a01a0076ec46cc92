package persistence

import (
	"bytes"
	"encoding/binary"
	"hash/adler32"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/jute"
)

func zktACL(perms int32, scheme, id string) jute.ACL {
	return jute.ACL{Perms: perms, Id: jute.Id{Scheme: scheme, Id: id}}
}

var (
	zktOpen   = []jute.ACL{zktACL(jute.PermAll, "world", "anyone")}
	zktSecret = []jute.ACL{
		zktACL(jute.PermAll, "digest", datatree.DigestID("alice:pw")),
		zktACL(jute.PermRead, "ip", "127.0.0.1"),
		zktACL(jute.PermRead|jute.PermWrite, "ip", "10.0.0.0/8"),
	}
)

const zktTTLOwner = int64(-0x0100000000000000) | 60000

// zktState is a hand-built database in pre-order, sessions sorted.
func zktState() *ZKState {
	return &ZKState{
		Nodes: []ZKNode{
			{Path: "/", Data: []byte{}, ACL: zktOpen, Pzxid: 0x7, Cversion: 1},
			{Path: "/app", Data: []byte("hello"), ACL: zktSecret, Czxid: 2, Mzxid: 9, Ctime: 1000, Mtime: 2000, Pzxid: 8, Version: 3, Cversion: 7, Aversion: 1},
			{Path: "/app/box", Data: []byte("c"), ACL: zktOpen, Czxid: 5, Mzxid: 5, Ctime: 1100, Mtime: 1100, Pzxid: 6, EphemeralOwner: math.MinInt64, Cversion: 1},
			{Path: "/app/box/x", Data: []byte("x"), ACL: zktOpen, Czxid: 6, Mzxid: 6, Ctime: 1200, Mtime: 1200, Pzxid: 6},
			{Path: "/app/empty", Data: []byte{}, ACL: zktOpen, Czxid: 3, Mzxid: 3, Ctime: 1001, Mtime: 1001, Pzxid: 3},
			{Path: "/app/eph", Data: []byte("e"), ACL: zktSecret, Czxid: 7, Mzxid: 7, Ctime: 1300, Mtime: 1300, Pzxid: 7, EphemeralOwner: 0x1234},
			{Path: "/app/null", Data: nil, ACL: zktOpen, Czxid: 4, Mzxid: 4, Ctime: 1002, Mtime: 1002, Pzxid: 4},
			{Path: "/app/ttl", Data: []byte("t"), ACL: []jute.ACL{zktACL(jute.PermRead|jute.PermWrite, "world", "anyone")}, Czxid: 8, Mzxid: 8, Ctime: 1400, Mtime: 1400, Pzxid: 8, EphemeralOwner: zktTTLOwner},
			{Path: "/zookeeper", Data: []byte{}, ACL: zktOpen},
			{Path: "/zookeeper/config", Data: []byte{}, ACL: []jute.ACL{zktACL(jute.PermRead, "world", "anyone")}, Aversion: -1},
			{Path: "/zookeeper/quota", Data: []byte{}, ACL: zktOpen},
		},
		Sessions: []ZKSession{{ID: 0x1234, Timeout: 4000}, {ID: 0x7000000000000001, Timeout: 30000}},
		LastZxid: 0x20,
	}
}

func zktEqual(t *testing.T, what string, got, want *ZKState) {
	t.Helper()
	if len(got.Nodes) != len(want.Nodes) {
		t.Errorf("%s: %d nodes, want %d", what, len(got.Nodes), len(want.Nodes))
	}
	for i := 0; i < min(len(got.Nodes), len(want.Nodes)); i++ {
		g, w := got.Nodes[i], want.Nodes[i]
		if (g.Data == nil) != (w.Data == nil) {
			t.Errorf("%s: %s: data nil %v, want %v", what, w.Path, g.Data == nil, w.Data == nil)
		}
		g.Data, w.Data = nil, nil
		if len(g.ACL) == 0 && len(w.ACL) == 0 {
			g.ACL, w.ACL = nil, nil
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s: node %d:\n got %+v\nwant %+v", what, i, g, w)
		}
		if !bytes.Equal(got.Nodes[i].Data, want.Nodes[i].Data) {
			t.Errorf("%s: %s: data %q, want %q", what, w.Path, got.Nodes[i].Data, want.Nodes[i].Data)
		}
	}
	if !reflect.DeepEqual(got.Sessions, want.Sessions) {
		t.Errorf("%s: sessions %+v, want %+v", what, got.Sessions, want.Sessions)
	}
	if got.LastZxid != want.LastZxid {
		t.Errorf("%s: LastZxid %#x, want %#x", what, got.LastZxid, want.LastZxid)
	}
}

func zktSnapshotBytes(t *testing.T, st *ZKState) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := WriteZooKeeperSnapshot(&b, st); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestZooKeeperSnapshotRoundTrip(t *testing.T) {
	st := zktState()
	// Sessions and nodes in any order on input.
	in := *st
	in.Sessions = []ZKSession{st.Sessions[1], st.Sessions[0]}
	in.Nodes = append([]ZKNode(nil), st.Nodes...)
	in.Nodes[1], in.Nodes[6] = in.Nodes[6], in.Nodes[1]
	b := zktSnapshotBytes(t, &in)

	// ZooKeeper's own validity check: the file ends with int 1 and '/'.
	if tail := b[len(b)-5:]; binary.BigEndian.Uint32(tail) != 1 || tail[4] != '/' {
		t.Fatalf("snapshot tail %x", tail)
	}
	// 3.9's last section: the last zxid, then a seal over every byte before it.
	const sealLen = 8 + 4 + 1
	if z := int64(binary.BigEndian.Uint64(b[len(b)-sealLen-8:])); z != st.LastZxid {
		t.Fatalf("last zxid section %#x, want %#x", z, st.LastZxid)
	}
	if sum := binary.BigEndian.Uint64(b[len(b)-sealLen:]); sum != uint64(adler32.Checksum(b[:len(b)-sealLen])) {
		t.Fatalf("last zxid seal %#x", sum)
	}
	if _, err := parseZKSnapshot(append(b[:len(b)-sealLen:len(b)-sealLen], make([]byte, sealLen)...)); err == nil {
		t.Fatal("a last zxid section with a bad seal was read")
	}
	tr, err := parseZKSnapshot(b)
	if err != nil {
		t.Fatal(err)
	}
	zktEqual(t, "parsed", tr.state(st.LastZxid), st)

	dir := filepath.Join(t.TempDir(), "version-2")
	os.MkdirAll(dir, 0o755)
	if err := os.WriteFile(filepath.Join(dir, SnapshotFileName(st.LastZxid)), b, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadZooKeeper(filepath.Dir(dir), "")
	if err != nil {
		t.Fatal(err)
	}
	zktEqual(t, "ReadZooKeeper", got, st)

	// Without the last zxid section (3.6-3.8), and without the digest section too (a 3.5
	// snapshot), it reads the same. The digest section is long zxid, int version, long
	// digest and a seal.
	for what, cut := range map[string]int{"no last zxid": 8 + sealLen, "no digest": 8 + sealLen + 20 + sealLen} {
		if tr, err := parseZKSnapshot(b[:len(b)-cut]); err != nil {
			t.Fatalf("%s: %v", what, err)
		} else {
			zktEqual(t, what, tr.state(st.LastZxid), st)
		}
	}

	// A snapshot as the restore admin command receives it, without a file name: the zxid
	// comes from the last zxid section, 0 without one.
	got, err = ReadZooKeeperSnapshot(b)
	if err != nil || got.LastZxid != st.LastZxid {
		t.Fatalf("ReadZooKeeperSnapshot: zxid %#x, %v; want %#x", got.LastZxid, err, st.LastZxid)
	}
	zktEqual(t, "ReadZooKeeperSnapshot", got, st)
	if got, err := ReadZooKeeperSnapshot(b[:len(b)-8-sealLen]); err != nil || got.LastZxid != 0 {
		t.Fatalf("ReadZooKeeperSnapshot without the last zxid section: %v, %v", got, err)
	}
}

func TestZooKeeperSnapshotAddsSystemNodes(t *testing.T) {
	st := &ZKState{Nodes: []ZKNode{{Path: "/", Data: []byte{}, ACL: zktOpen}, {Path: "/a", Data: []byte("a"), ACL: zktOpen, Czxid: 1}}}
	tr, err := parseZKSnapshot(zktSnapshotBytes(t, st))
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, n := range tr.ordered() {
		paths = append(paths, n.Path)
	}
	if want := "/ /a /zookeeper /zookeeper/config /zookeeper/quota"; strings.Join(paths, " ") != want {
		t.Fatalf("paths %v, want %s", paths, want)
	}
	cfg := tr.nodes["/zookeeper/config"]
	if cfg.Aversion != -1 || len(cfg.ACL) != 1 || cfg.ACL[0].Perms != jute.PermRead {
		t.Fatalf("config node %+v", cfg)
	}

	// A node without its parent is refused.
	bad := &ZKState{Nodes: []ZKNode{{Path: "/a/b"}}}
	if err := WriteZooKeeperSnapshot(&bytes.Buffer{}, bad); err == nil {
		t.Fatal("orphan written")
	}
}

func TestToStateAndBack(t *testing.T) {
	st := zktState()
	state, err := st.ToState(datatree.Options{ExtendedTypes: true})
	if err != nil {
		t.Fatal(err)
	}
	tree := state.Tree
	if got, want := tree.NodeCount(), len(st.Nodes)+1; got != want { // the root counts twice
		t.Fatalf("NodeCount %d, want %d", got, want)
	}
	data, s, code := tree.Get("/app/null")
	if code != jute.OK || data != nil || s.Czxid != 4 {
		t.Fatalf("/app/null: %q %+v %v", data, s, code)
	}
	data, _, _ = tree.Get("/app/empty")
	if data == nil || len(data) != 0 {
		t.Fatalf("/app/empty data %v", data)
	}
	data, s, _ = tree.Get("/app")
	want := jute.Stat{Czxid: 2, Mzxid: 9, Ctime: 1000, Mtime: 2000, Version: 3, Cversion: 7*2 - 5, Aversion: 1,
		DataLength: 5, NumChildren: 5, Pzxid: 8}
	if string(data) != "hello" || s != want {
		t.Fatalf("/app: %q %+v, want %+v", data, s, want)
	}
	if s, _ := tree.Stat("/app/eph"); s.EphemeralOwner != 0x1234 {
		t.Fatalf("/app/eph owner %#x", s.EphemeralOwner)
	}
	if s, _ := tree.Stat("/app/box"); s.EphemeralOwner != 0 || s.NumChildren != 1 {
		t.Fatalf("/app/box %+v", s)
	}
	if acl, _, _ := tree.ACL("/app"); !reflect.DeepEqual(acl, zktSecret) {
		t.Fatalf("/app ACL %v", acl)
	}
	if eph := tree.Ephemerals(0x1234, "/"); !reflect.DeepEqual(eph, []string{"/app/eph"}) {
		t.Fatalf("ephemerals %v", eph)
	}
	if state.Zxid != st.LastZxid || state.Sessions.Len() != len(st.Sessions) {
		t.Fatalf("zxid %#x, %d sessions", state.Zxid, state.Sessions.Len())
	}
	// Back to ZooKeeper's form: the same state.
	zktEqual(t, "ZKStateOf", ZKStateOf(state), st)

	// Missing system nodes get datatree.New's values: an empty state is a fresh tree.
	fresh, err := (&ZKState{}).ToState(datatree.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if fresh.Tree.Digest() != datatree.New(datatree.Options{}).Digest() {
		t.Fatal("system nodes differ from datatree.New")
	}
}

func TestReadZooKeeperCorruptSnapshot(t *testing.T) {
	st := zktState()
	dir := t.TempDir()
	b := zktSnapshotBytes(t, st)
	i := bytes.Index(b, []byte("hello"))
	b[i] ^= 0x20
	name := filepath.Join(dir, SnapshotFileName(st.LastZxid))
	os.WriteFile(name, b, 0o644)
	_, err := ReadZooKeeper(dir, "")
	if err == nil || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "checksum") {
		t.Fatalf("err %v, want a checksum error naming %s", err, name)
	}

	// An older valid snapshot is used instead, as ZooKeeper does.
	older := *st
	older.LastZxid = 0x10
	os.WriteFile(filepath.Join(dir, SnapshotFileName(older.LastZxid)), zktSnapshotBytes(t, &older), 0o644)
	got, err := ReadZooKeeper(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	zktEqual(t, "fallback", got, &older)

	if _, err := ReadZooKeeper(t.TempDir(), ""); err == nil {
		t.Fatal("empty dir read")
	}
}

// zktLog builds a transaction log by hand.
type zktLog struct {
	e jute.Encoder
}

func newZKTLog() *zktLog {
	l := &zktLog{}
	l.e.Int(zkLogMagic)
	l.e.Int(2)
	l.e.Long(-1)
	return l
}

func (l *zktLog) add(client int64, zxid int64, typ int32, body func(e *jute.Encoder)) {
	var t jute.Encoder
	t.Long(client)
	t.Int(1)
	t.Long(zxid)
	t.Long(1000 + zxid)
	t.Int(typ)
	body(&t)
	t.Int(2) // a TxnDigest, as 3.6+ appends
	t.Long(12345)
	l.e.Long(int64(adler32.Checksum(t.Buf)))
	l.e.Buffer(t.Buf)
	l.e.Buf = append(l.e.Buf, 'B')
}

func zktACLs(e *jute.Encoder, acl []jute.ACL) {
	e.Int(int32(len(acl)))
	for i := range acl {
		acl[i].Encode(e)
	}
}

func zktCreate(path, data string, eph bool, parentCV int32) func(*jute.Encoder) {
	return func(e *jute.Encoder) {
		e.String(path)
		e.Buffer([]byte(data))
		zktACLs(e, zktOpen)
		e.Bool(eph)
		e.Int(parentCV)
	}
}

func TestReadZooKeeperReplaysLog(t *testing.T) {
	dir := t.TempDir()
	base := &ZKState{}
	os.WriteFile(filepath.Join(dir, "snapshot.0"), zktSnapshotBytes(t, base), 0o644)

	const sess, sess2 = int64(0x100), int64(0x200)
	l := newZKTLog()
	l.add(sess, 1, jute.OpCreateSession, func(e *jute.Encoder) { e.Int(5000) })
	l.add(sess2, 2, jute.OpCreateSession, func(e *jute.Encoder) { e.Int(6000) })
	l.add(sess, 3, jute.OpCreate, zktCreate("/a", "a", false, 1))
	l.add(sess, 4, jute.OpCreate2, zktCreate("/a/e", "e", true, 1))
	l.add(sess2, 5, jute.OpCreate, zktCreate("/a/e2", "e2", true, 2))
	l.add(sess, 6, jute.OpSetData, func(e *jute.Encoder) { e.String("/a"); e.Buffer(nil); e.Int(1) })
	l.add(sess, 7, jute.OpSetACL, func(e *jute.Encoder) { e.String("/a"); zktACLs(e, zktSecret); e.Int(1) })
	l.add(sess, 8, jute.OpCreateContainer, func(e *jute.Encoder) {
		e.String("/c")
		e.Buffer(nil)
		zktACLs(e, zktOpen)
		e.Int(2)
	})
	l.add(sess, 9, jute.OpCreateTTL, func(e *jute.Encoder) {
		e.String("/t")
		e.Buffer([]byte("t"))
		zktACLs(e, zktOpen)
		e.Int(3)
		e.Long(60000)
	})
	// A multi: create /m, delete /t, check; then a failed multi that changes nothing.
	sub := func(typ int32, body func(*jute.Encoder)) func(*jute.Encoder) {
		return func(e *jute.Encoder) {
			var s jute.Encoder
			body(&s)
			e.Int(typ)
			e.Buffer(s.Buf)
		}
	}
	l.add(sess, 10, jute.OpMulti, func(e *jute.Encoder) {
		e.Int(3)
		sub(jute.OpCreate, zktCreate("/m", "m", false, 4))(e)
		sub(jute.OpDelete, func(s *jute.Encoder) { s.String("/t") })(e)
		sub(jute.OpCheck, func(s *jute.Encoder) { s.String("/a"); s.Int(1) })(e)
	})
	l.add(sess, 11, jute.OpMulti, func(e *jute.Encoder) {
		e.Int(2)
		sub(jute.OpError, func(s *jute.Encoder) { s.Int(0) })(e)
		sub(jute.OpError, func(s *jute.Encoder) { s.Int(int32(jute.ErrBadVersion)) })(e)
	})
	l.add(sess, 12, jute.OpError, func(e *jute.Encoder) { e.Int(int32(jute.ErrNoNode)) })
	// sess2 closes: its ephemeral goes, and /a's pzxid moves.
	l.add(sess2, 13, jute.OpCloseSession, func(e *jute.Encoder) { e.Int(1); e.String("/a/e2") })
	good := len(l.e.Buf)
	l.add(sess, 14, jute.OpDelete, func(e *jute.Encoder) { e.String("/m") })
	// The last record is cut short (a crash mid-write), then preallocated zeros.
	logBytes := append([]byte(nil), l.e.Buf[:len(l.e.Buf)-1]...)
	logBytes = append(logBytes, 0) // 'B' missing: a partial record
	logBytes = append(logBytes, make([]byte, 4096)...)
	logName := filepath.Join(dir, "log.1")
	os.WriteFile(logName, logBytes, 0o644)

	st, err := ReadZooKeeper(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if st.LastZxid != 13 {
		t.Errorf("LastZxid %d, want 13", st.LastZxid)
	}
	if want := []ZKSession{{ID: sess, Timeout: 5000}}; !reflect.DeepEqual(st.Sessions, want) {
		t.Errorf("sessions %+v, want %+v", st.Sessions, want)
	}
	nodes := map[string]ZKNode{}
	var paths []string
	for _, n := range st.Nodes {
		nodes[n.Path] = n
		paths = append(paths, n.Path)
	}
	if want := "/ /a /a/e /c /m /zookeeper /zookeeper/config /zookeeper/quota"; strings.Join(paths, " ") != want {
		t.Fatalf("paths %v, want %s", paths, want)
	}
	a := nodes["/a"]
	if a.Data != nil || a.Version != 1 || a.Mzxid != 6 || a.Mtime != 1006 || a.Czxid != 3 || a.Ctime != 1003 ||
		a.Cversion != 2 || a.Pzxid != 13 || a.Aversion != 1 || !reflect.DeepEqual(a.ACL, zktSecret) {
		t.Errorf("/a %+v", a)
	}
	if e := nodes["/a/e"]; e.EphemeralOwner != sess || string(e.Data) != "e" {
		t.Errorf("/a/e %+v", e)
	}
	if c := nodes["/c"]; c.EphemeralOwner != math.MinInt64 || c.Data != nil {
		t.Errorf("/c %+v", c)
	}
	// The root: /a, /c, /t, /m created (cversion 4), /t deleted at zxid 10.
	if r := nodes["/"]; r.Cversion != 4 || r.Pzxid != 10 {
		t.Errorf("/ %+v", r)
	}

	// A checksum error in a complete record is an error naming the log.
	bad := append([]byte(nil), l.e.Buf[:good]...)
	bad[good-3] ^= 0xff
	os.WriteFile(logName, bad, 0o644)
	if _, err := ReadZooKeeper(dir, ""); err == nil || !strings.Contains(err.Error(), logName) {
		t.Fatalf("err %v, want an error naming %s", err, logName)
	}
}

func TestZxidFromName(t *testing.T) {
	for name, want := range map[string]int64{"snapshot.0": 0, "snapshot.1a2b": 0x1a2b, "snapshot.ff.gz": 0xff, "snapshot.": -1, "snapshot.x": -1, "snapshots.1": -1, "log.1": -1} {
		got, ok := zkZxidFromName(name, "snapshot")
		if !ok {
			got = -1
		}
		if got != want {
			t.Errorf("%s: %d, want %d", name, got, want)
		}
	}
}

// Transaction logs without a snapshot are refused, as ZooKeeper 3.8 refuses to start on
// them ("No snapshot found, but there are log entries. Something is broken!"): a tree
// rebuilt from the logs alone lacks whatever the purged logs held. A log that holds no
// transaction (a fresh server's) is no reason to refuse.
func TestReadZooKeeperRefusesLogsWithoutSnapshot(t *testing.T) {
	dir := t.TempDir()
	empty := newZKTLog()
	os.WriteFile(filepath.Join(dir, "log.1"), append(empty.e.Buf, make([]byte, 512)...), 0o644)
	st, err := ReadZooKeeper(dir, "")
	if err != nil || st.LastZxid != 0 {
		t.Fatalf("a log without transactions: %+v, %v", st, err)
	}
	l := newZKTLog()
	l.add(0x100, 0x105, jute.OpCreateSession, func(e *jute.Encoder) { e.Int(5000) })
	l.add(0x100, 0x106, jute.OpCreate, zktCreate("/app/b", "b", false, 9)) // /app was created in a purged log
	os.WriteFile(filepath.Join(dir, "log.105"), l.e.Buf, 0o644)
	_, err = ReadZooKeeper(dir, "")
	if err == nil || !strings.Contains(err.Error(), "no snapshot") || !strings.Contains(err.Error(), "zookeeper.snapshot.trust.empty") {
		t.Fatalf("logs without a snapshot: err %v, want a refusal that says how to go on", err)
	}
}

// KillDeadSessions drops the ephemerals of sessions the state does not hold, as
// ZooKeeper's load does, raises their parents' pzxid to the state's zxid, and leaves a
// live session's ephemeral, a TTL node, a container and a node with children.
func TestKillDeadSessions(t *testing.T) {
	st := &ZKState{LastZxid: 9, Sessions: []ZKSession{{ID: 7, Timeout: 4000}}, Nodes: []ZKNode{
		{Path: "/", ACL: zktOpen, Pzxid: 3},
		{Path: "/a", ACL: zktOpen, Pzxid: 11},
		{Path: "/a/dead", ACL: zktOpen, EphemeralOwner: 8},
		{Path: "/a/live", ACL: zktOpen, EphemeralOwner: 7},
		{Path: "/b", ACL: zktOpen, EphemeralOwner: 8},
		{Path: "/b/child", ACL: zktOpen},
		{Path: "/container", ACL: zktOpen, EphemeralOwner: math.MinInt64},
		{Path: "/ttl", ACL: zktOpen, EphemeralOwner: zkExtendedMask | 1000},
		{Path: "/ttl353", ACL: zktOpen, EphemeralOwner: math.MinInt64 | 1000},
	}}
	if n := st.KillDeadSessions(datatree.Options{ExtendedTypes: true, Emulate353TTL: true}); n != 1 {
		t.Fatalf("killed %d, want 1 (/a/dead)", n)
	}
	var paths []string
	for _, n := range st.Nodes {
		paths = append(paths, n.Path)
	}
	if got := strings.Join(paths, " "); got != "/ /a /a/live /b /b/child /container /ttl /ttl353" {
		t.Fatalf("left %s", got)
	}
	if st.Nodes[1].Pzxid != 11 || st.Nodes[0].Pzxid != 3 {
		t.Fatalf("pzxids %d %d: /a's is higher than the state's zxid and stays, the root had no deletion", st.Nodes[1].Pzxid, st.Nodes[0].Pzxid)
	}
	// Without the emulation a 3.5.3 TTL node is a session's ephemeral, and that session is gone.
	if n := st.KillDeadSessions(datatree.Options{ExtendedTypes: true}); n != 1 || st.Nodes[0].Pzxid != 9 {
		t.Fatalf("killed %d, root pzxid %d; want /ttl353 gone and the root's pzxid 9", n, st.Nodes[0].Pzxid)
	}
}
