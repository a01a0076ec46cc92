package persistence

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/adler32"
	"hash/crc32"
	"io"
	"os"
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
	return t, nil
}

// writeZKSnapshot writes nodes (pre-order, root first) and sessions in ZooKeeper's
// snapshot format, with an empty digest section as 3.8 writes by default.
func writeZKSnapshot(w io.Writer, nodes []ZKNode, sessions []ZKSession) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	sum := adler32.New()
	out := io.MultiWriter(bw, sum)
	e := jute.Encoder{}
	flush := func() error {
		_, err := out.Write(e.Buf)
		e.Buf = e.Buf[:0]
		return err
	}
	seal := func() error {
		if err := flush(); err != nil {
			return err
		}
		e.Long(int64(sum.Sum32()))
		e.String("/")
		return flush()
	}

	e.Int(zkSnapMagic)
	e.Int(zkVersion)
	e.Long(zkDBID)
	sorted := append([]ZKSession(nil), sessions...)
	sortZKSessions(sorted)
	e.Int(int32(len(sorted)))
	for _, s := range sorted {
		e.Long(s.ID)
		e.Int(s.Timeout)
	}
	// ACL cache ids start at 1 (ReferenceCountedACLCache.incrementIndex).
	index, lists := zkACLNumbering(nodes)
	e.Int(int32(len(lists)))
	for i, l := range lists {
		e.Long(int64(i + 1))
		e.Int(int32(len(l)))
		for j := range l {
			l[j].Encode(&e)
		}
	}
	for i := range nodes {
		n := &nodes[i]
		path := n.Path
		if path == "/" {
			path = "" // DataTree.serializeNode starts from ""
		}
		e.String(path)
		e.Buffer(n.Data)
		e.Long(int64(index[i] + 1))
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
			if err := flush(); err != nil {
				return err
			}
		}
	}
	e.String("/")
	if err := seal(); err != nil {
		return err
	}
	// An empty ZxidDigest (zxid 0): ZooKeeper then compares no digest.
	e.Long(0)
	e.Int(zkDigestVersion)
	e.Long(0)
	if err := seal(); err != nil {
		return err
	}
	return bw.Flush()
}

func sortZKSessions(s []ZKSession) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j].ID < s[j-1].ID; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// zkraft's datatree snapshot format (datatree/snapshot.go), version 1.
const (
	zkTreeMagic   = "ZKRDTREE"
	zkTreeVersion = 1
)

var zkTreeCRC = crc32.MakeTable(crc32.Castagnoli)

func zkWriteTreeSnapshot(w io.Writer, nodes []ZKNode) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	crc := crc32.New(zkTreeCRC)
	out := io.MultiWriter(bw, crc)
	e := jute.Encoder{}
	flush := func() error {
		_, err := out.Write(e.Buf)
		e.Buf = e.Buf[:0]
		return err
	}
	e.Buf = append(e.Buf, zkTreeMagic...)
	e.Int(zkTreeVersion)
	index, lists := zkACLNumbering(nodes)
	e.Int(int32(len(lists)))
	for _, l := range lists {
		e.Int(int32(len(l)))
		for j := range l {
			l[j].Encode(&e)
		}
	}
	e.Long(int64(len(nodes)))
	for i := range nodes {
		n := &nodes[i]
		e.String(n.Path)
		e.Buffer(n.Data)
		e.Long(n.Czxid)
		e.Long(n.Mzxid)
		e.Long(n.Ctime)
		e.Long(n.Mtime)
		e.Long(n.Pzxid)
		e.Long(n.EphemeralOwner)
		e.Int(n.Version)
		e.Int(n.Cversion)
		e.Int(n.Aversion)
		e.Int(int32(index[i]))
		if len(e.Buf) >= 1<<15 {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	var s [4]byte
	binary.BigEndian.PutUint32(s[:], crc.Sum32())
	if _, err := bw.Write(s[:]); err != nil {
		return err
	}
	return bw.Flush()
}

// zkTreeReader reads the datatree format from a stream, checksumming what it reads.
type zkTreeReader struct {
	r   *bufio.Reader
	crc hash.Hash32
	err error
}

const zkMaxTreeItem = 1 << 30

func (s *zkTreeReader) read(n int) []byte {
	if s.err != nil {
		return nil
	}
	buf := make([]byte, 0, min(n, 1<<16))
	for len(buf) < n {
		start := len(buf)
		buf = append(buf, make([]byte, min(n-start, 1<<20))...)
		if _, err := io.ReadFull(s.r, buf[start:]); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			s.err = err
			return nil
		}
	}
	s.crc.Write(buf)
	return buf
}

func (s *zkTreeReader) i32() int32 {
	b := s.read(4)
	if b == nil {
		return 0
	}
	return int32(binary.BigEndian.Uint32(b))
}

func (s *zkTreeReader) i64() int64 {
	b := s.read(8)
	if b == nil {
		return 0
	}
	return int64(binary.BigEndian.Uint64(b))
}

func (s *zkTreeReader) length(null bool) int {
	n := s.i32()
	if s.err == nil && (n < -1 || (n == -1 && !null) || n > zkMaxTreeItem) {
		s.err = fmt.Errorf("bad length %d", n)
	}
	if s.err != nil {
		return -1
	}
	return int(n)
}

func (s *zkTreeReader) str() string {
	n := s.length(false)
	if n <= 0 {
		return ""
	}
	return string(s.read(n))
}

func (s *zkTreeReader) buffer() []byte {
	n := s.length(true)
	if n < 0 {
		return nil
	}
	return s.read(n)
}

func zkReadTreeSnapshot(r io.Reader) ([]ZKNode, error) {
	s := &zkTreeReader{r: bufio.NewReaderSize(r, 1<<16), crc: crc32.New(zkTreeCRC)}
	if string(s.read(len(zkTreeMagic))) != zkTreeMagic {
		if s.err != nil {
			return nil, s.err
		}
		return nil, errors.New("bad magic")
	}
	if v := s.i32(); s.err == nil && v != zkTreeVersion {
		return nil, fmt.Errorf("version %d, want %d", v, zkTreeVersion)
	}
	nacl := s.length(false)
	var lists [][]jute.ACL
	for i := 0; i < nacl && s.err == nil; i++ {
		k := s.length(false)
		acl := make([]jute.ACL, 0, min(k, 64))
		for j := 0; j < k && s.err == nil; j++ {
			perms := s.i32()
			scheme := s.str()
			id := s.str()
			acl = append(acl, jute.ACL{Perms: perms, Id: jute.Id{Scheme: scheme, Id: id}})
		}
		lists = append(lists, acl)
	}
	count := s.i64()
	if s.err == nil && count < 1 {
		return nil, fmt.Errorf("node count %d", count)
	}
	var nodes []ZKNode
	for i := int64(0); i < count && s.err == nil; i++ {
		n := ZKNode{Path: s.str(), Data: s.buffer()}
		n.Czxid, n.Mzxid, n.Ctime, n.Mtime = s.i64(), s.i64(), s.i64(), s.i64()
		n.Pzxid, n.EphemeralOwner = s.i64(), s.i64()
		n.Version, n.Cversion, n.Aversion = s.i32(), s.i32(), s.i32()
		ai := s.i32()
		if s.err != nil {
			break
		}
		if ai < 0 || int(ai) >= len(lists) {
			return nil, fmt.Errorf("node %q: ACL index %d of %d", n.Path, ai, len(lists))
		}
		n.ACL = lists[ai]
		nodes = append(nodes, n)
	}
	if s.err != nil {
		return nil, s.err
	}
	want := s.crc.Sum32()
	var sum [4]byte
	if _, err := io.ReadFull(s.r, sum[:]); err != nil {
		return nil, errors.New("checksum missing")
	}
	if got := binary.BigEndian.Uint32(sum[:]); got != want {
		return nil, fmt.Errorf("checksum %08x, computed %08x", got, want)
	}
	return nodes, nil
}
