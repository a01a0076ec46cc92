package persistence

import (
	"bufio"
	"bytes"
	"cmp"
	"compress/gzip"
	"errors"
	"fmt"
	"hash"
	"hash/adler32"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"

	"github.com/zkraft/zkraft/jute"
)

// FileHeader magics ("ZKSN", "ZKLG") and version (FileSnap, FileTxnLog).
const (
	zkSnapMagic  int32 = 0x5A4B534E
	zkLogMagic   int32 = 0x5A4B4C47
	zkVersion    int32 = 2
	zkDBID       int64 = -1
	zkOpenACLRef int64 = -1 // ReferenceCountedACLCache.OPEN_UNSAFE_ACL_ID
	// zkDigestVersion is DigestCalculator.DIGEST_VERSION in 3.6–3.9.
	zkDigestVersion int32 = 2
)

// readZKSnapshotFile reads one snapshot file; errors name the file.
func readZKSnapshotFile(path string) (*zkTree, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	switch {
	case strings.HasSuffix(path, ".gz"):
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err == nil {
			b, err = io.ReadAll(zr)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: gzip: %w", path, err)
		}
	case strings.HasSuffix(path, ".snappy"):
		return nil, fmt.Errorf("%s: snappy-compressed snapshots are not supported", path)
	}
	t, err := parseZKSnapshot(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// zkSnapDecoder is a jute.Decoder over the whole snapshot that knows its offset, so the
// seals can be checked against the Adler-32 of the bytes before them.
type zkSnapDecoder struct {
	*jute.Decoder
	b []byte
}

func (d *zkSnapDecoder) off() int { return len(d.b) - d.Remaining() }

func (d *zkSnapDecoder) fail(format string, args ...any) error {
	return fmt.Errorf("at byte %d: "+format, append([]any{d.off()}, args...)...)
}

// seal checks a seal: the Adler-32 of every byte before it and the string "/".
func (d *zkSnapDecoder) seal() error {
	want := int64(adler32.Checksum(d.b[:d.off()]))
	got := d.Long()
	slash := d.String()
	if d.Err != nil {
		return d.fail("checksum missing: %v", d.Err)
	}
	if got != want {
		return fmt.Errorf("checksum mismatch: stored %#x, computed %#x", got, want)
	}
	if slash != "/" {
		return d.fail("checksum not followed by \"/\"")
	}
	return nil
}

// parseZKSnapshot reads a ZooKeeper snapshot (FileSnap.deserialize).
func parseZKSnapshot(b []byte) (*zkTree, error) {
	d := &zkSnapDecoder{Decoder: jute.NewDecoder(b), b: b}
	magic, version := d.Int(), d.Int()
	d.Long() // dbid
	if d.Err != nil {
		return nil, errors.New("truncated file header")
	}
	if magic != zkSnapMagic {
		return nil, fmt.Errorf("bad magic %#08x, want %#08x (\"ZKSN\")", uint32(magic), uint32(zkSnapMagic))
	}
	if version != zkVersion {
		return nil, fmt.Errorf("snapshot version %d, want %d", version, zkVersion)
	}
	t := newZKTree()
	nsess := d.VectorLen(12)
	for i := 0; i < nsess && d.Err == nil; i++ {
		id := d.Long()
		t.sessions[id] = d.Int()
	}
	if d.Err != nil {
		return nil, d.fail("sessions: %v", d.Err)
	}
	nacl := d.VectorLen(12)
	acls := map[int64][]jute.ACL{}
	for i := 0; i < nacl && d.Err == nil; i++ {
		id := d.Long()
		k := d.VectorLen(12)
		if d.Err == nil && k < 0 {
			return nil, d.fail("ACL list %d is null", id)
		}
		list := make([]jute.ACL, k)
		for j := range list {
			list[j].Decode(d.Decoder)
		}
		acls[id] = list
	}
	if d.Err != nil {
		return nil, d.fail("ACL cache: %v", d.Err)
	}
	for {
		path := d.String()
		if d.Err != nil {
			return nil, d.fail("node path: %v", d.Err)
		}
		if path == "/" {
			break
		}
		n := &ZKNode{Path: path, Data: d.Buffer()}
		ref := d.Long()
		n.Czxid, n.Mzxid, n.Ctime, n.Mtime = d.Long(), d.Long(), d.Long(), d.Long()
		n.Version, n.Cversion, n.Aversion = d.Int(), d.Int(), d.Int()
		n.EphemeralOwner, n.Pzxid = d.Long(), d.Long()
		if d.Err != nil {
			return nil, d.fail("node %q: %v", path, d.Err)
		}
		if ref == zkOpenACLRef {
			n.ACL = zkCloneACL(zkOpenACL)
		} else if n.ACL = acls[ref]; n.ACL == nil {
			return nil, d.fail("node %q: ACL id %d is not in the ACL cache", path, ref)
		}
		if path == "" {
			if t.nodes["/"] != nil {
				return nil, d.fail("second root")
			}
			n.Path = "/"
		} else if t.nodes["/"] == nil {
			return nil, d.fail("node %q before the root", path)
		}
		if err := t.add(n); err != nil {
			return nil, d.fail("%v", err)
		}
	}
	if t.nodes["/"] == nil {
		return nil, errors.New("no root node")
	}
	if err := d.seal(); err != nil {
		return nil, err
	}
	// Optional ZxidDigest (3.6+) and its seal; absent in older snapshots.
	if d.Remaining() > 0 {
		d.Long() // zxid
		if v := d.Int(); v < 2 {
			_ = d.String()
		} else {
			d.Long()
		}
		if d.Err == nil {
			if err := d.seal(); err != nil {
				return nil, fmt.Errorf("digest section: %w", err)
			}
		}
	}
	// Optional last processed zxid (3.9+) and its seal. The file's name says the zxid
	// ZooKeeper starts from, as this reader takes it; a stream without a name (the
	// restore admin command's) takes it from here.
	if d.Err == nil && d.Remaining() > 0 {
		zxid := d.Long()
		if d.Err == nil {
			if err := d.seal(); err != nil {
				return nil, fmt.Errorf("last zxid section: %w", err)
			}
			t.lastZxid = zxid
		}
	}
	return t, nil
}

// ReadZooKeeperSnapshot reads one ZooKeeper snapshot from its bytes, as ZooKeeper 3.9's
// restore admin command receives it (not compressed): its nodes in pre-order with the
// system nodes a tree has added if missing, its sessions, and as LastZxid the zxid of its
// last-processed-zxid section (3.9), 0 without one. Every seal is checked. The nodes
// keep no reference to b.
func ReadZooKeeperSnapshot(b []byte) (*ZKState, error) {
	t, err := parseZKSnapshot(b)
	if err != nil {
		return nil, err
	}
	b = nil
	// The parsed tree and the list made of it are each about the size of the file: a
	// caller that keeps no reference to b (the restore command's) gets its memory back
	// before the list is made.
	runtime.GC()
	t.addSystemNodes()
	st := t.state(t.lastZxid)
	st.preordered = true
	return st, nil
}

// writeZKSnapshot writes nodes (pre-order, root first) and sessions in ZooKeeper's
// snapshot format (zkSnapshotWriter).
func writeZKSnapshot(w io.Writer, nodes []ZKNode, sessions []ZKSession, lastZxid int64) error {
	index, lists := zkACLNumbering(nodes)
	z, err := newZKSnapshotWriter(w, sessions, lists)
	if err != nil {
		return err
	}
	for i := range nodes {
		if err := z.Node(&nodes[i], index[i]); err != nil {
			return err
		}
	}
	return z.Close(lastZxid)
}

// A zkSnapshotWriter writes a ZooKeeper snapshot a node at a time: the sessions and the
// ACL cache, the nodes (pre-order, root first), then an empty digest section as 3.8
// writes by default, and lastZxid and its seal, as 3.9 does with
// zookeeper.serializeLastProcessedZxid.enabled (its default): 3.9's restore command reads
// the snapshot's zxid from there, 3.5-3.8 stop reading after the digest's seal, and the
// file still ends with a seal, as their check of a snapshot's last bytes wants.
type zkSnapshotWriter struct {
	bw  *bufio.Writer
	sum hash.Hash32
	out io.Writer
	e   jute.Encoder
}

// newZKSnapshotWriter writes the header, sessions and ACL cache (acls: the lists the
// nodes' ACL indexes point into) to w.
func newZKSnapshotWriter(w io.Writer, sessions []ZKSession, acls [][]jute.ACL) (*zkSnapshotWriter, error) {
	z := &zkSnapshotWriter{bw: bufio.NewWriterSize(w, 1<<16), sum: adler32.New()}
	z.out = io.MultiWriter(z.bw, z.sum)
	e := &z.e
	e.Int(zkSnapMagic)
	e.Int(zkVersion)
	e.Long(zkDBID)
	sorted := append([]ZKSession(nil), sessions...)
	slices.SortFunc(sorted, func(a, b ZKSession) int { return cmp.Compare(a.ID, b.ID) })
	e.Int(int32(len(sorted)))
	for _, s := range sorted {
		e.Long(s.ID)
		e.Int(s.Timeout)
	}
	// ACL cache ids start at 1 (ReferenceCountedACLCache.incrementIndex).
	e.Int(int32(len(acls)))
	for i, l := range acls {
		e.Long(int64(i + 1))
		e.Int(int32(len(l)))
		for j := range l {
			l[j].Encode(e)
		}
	}
	return z, z.flush()
}

func (z *zkSnapshotWriter) flush() error {
	_, err := z.out.Write(z.e.Buf)
	z.e.Buf = z.e.Buf[:0]
	return err
}

func (z *zkSnapshotWriter) seal() error {
	if err := z.flush(); err != nil {
		return err
	}
	z.e.Long(int64(z.sum.Sum32()))
	z.e.String("/")
	return z.flush()
}

// Node writes one node, whose ACL is the list at index acl of the writer's ACL cache;
// n.ACL is not read.
func (z *zkSnapshotWriter) Node(n *ZKNode, acl int) error {
	e := &z.e
	path := n.Path
	if path == "/" {
		path = "" // DataTree.serializeNode starts from ""
	}
	e.String(path)
	e.Buffer(n.Data)
	e.Long(int64(acl + 1))
	e.Long(n.Czxid)
	e.Long(n.Mzxid)
	e.Long(n.Ctime)
	e.Long(n.Mtime)
	e.Int(n.Version)
	e.Int(n.Cversion)
	e.Int(n.Aversion)
	e.Long(n.EphemeralOwner)
	e.Long(n.Pzxid)
	if len(e.Buf) >= 1<<15 {
		return z.flush()
	}
	return nil
}

// Close ends the nodes, writes the digest and last-zxid sections and flushes.
func (z *zkSnapshotWriter) Close(lastZxid int64) error {
	e := &z.e
	e.String("/")
	if err := z.seal(); err != nil {
		return err
	}
	// An empty ZxidDigest (zxid 0): ZooKeeper then compares no digest.
	e.Long(0)
	e.Int(zkDigestVersion)
	e.Long(0)
	if err := z.seal(); err != nil {
		return err
	}
	e.Long(lastZxid)
	if err := z.seal(); err != nil {
		return err
	}
	return z.bw.Flush()
}
