package datatree

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"unsafe"

	"github.com/zkraft/zkraft/jute"
)

// Snapshot format, version 2. All integers big-endian.
//
//	magic      8 bytes "ZKRDTREE"
//	version    uint32 (2; 1 is written while no setting is on, so that an older
//	           version of zkraft can still read it)
//	settings   uint32 flags, bit 0: quotas enforced (SetEnforceQuota); not in version 1
//	acls       uint32 count, then per list: uint32 count, then per entry
//	           int32 perms, string scheme, string id
//	nodes      uint64 count, then per node in pre-order, children in name order:
//	           string path, buffer data (int32 length, -1 = null), stored stat
//	           (czxid, mzxid, ctime, mtime, pzxid, ephemeralOwner int64;
//	           version, cversion, aversion int32), uint32 index into acls
//	checksum   uint32 CRC-32C (Castagnoli) of every byte before it
//
// Strings are int32-length-prefixed UTF-8. The ACL table holds every list in use when the
// snapshot began (Freeze), in the order of their canonical encoding (count, then each
// entry's perms, scheme, id), so the bytes depend only on the tree's content; nodes name
// them by index. The stored
// cversion (the sequential counter), ephemeral owners and TTLs are all in the stat.
const (
	snapshotMagic   = "ZKRDTREE"
	snapshotVersion = 2       // version 1 (no settings) is still read
	maxSnapshotItem = 1 << 30 // no single string or buffer is larger
)

// settingEnforceQuota is the settings bit of SetEnforceQuota.
const settingEnforceQuota = 1

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// ErrSnapshotCorrupt is returned by ReadSnapshot for a bad checksum or an encoding that
// does not describe a tree.
var ErrSnapshotCorrupt = errors.New("datatree: snapshot corrupt")

// WriteSnapshot writes the whole tree in the format above, through a Frozen view (so it
// briefly marks the tree: the caller needs the writer's exclusion, not just a reader's).
func (t *Tree) WriteSnapshot(w io.Writer) error {
	f, err := t.Freeze()
	if err != nil {
		return err
	}
	defer t.Thaw(f)
	bw := bufio.NewWriterSize(w, 1<<16)
	for {
		b, done := f.Next(1024)
		if _, err := bw.Write(b); err != nil {
			return err
		}
		if done {
			return bw.Flush()
		}
	}
}

// snapReader reads the snapshot and checksums what it reads.
type snapReader struct {
	r       *bufio.Reader
	crc     hash.Hash32
	err     error
	scratch [8]byte
}

// fixed reads n <= 8 bytes into the scratch space, without allocating.
func (s *snapReader) fixed(n int) []byte {
	if s.err != nil {
		return nil
	}
	b := s.scratch[:n]
	if _, err := io.ReadFull(s.r, b); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		s.err = err
		return nil
	}
	s.crc.Write(b)
	return b
}

func (s *snapReader) read(n int) []byte {
	if s.err != nil {
		return nil
	}
	// Grow as bytes arrive, so a corrupt length cannot allocate more than the input has.
	buf := make([]byte, 0, min(n, 1<<16))
	for len(buf) < n {
		chunk := min(n-len(buf), 1<<20)
		start := len(buf)
		buf = append(buf, make([]byte, chunk)...)
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

// into reads n bytes into buf's storage (grown as needed) and returns them; a length
// of -1 (an error already recorded) gives nothing.
func (s *snapReader) into(buf []byte, n int) []byte {
	if n <= 0 || s.err != nil {
		return buf[:0]
	}
	if n > 1<<20 {
		return s.read(n) // large items grow as bytes arrive (read)
	}
	if cap(buf) < n {
		buf = make([]byte, n, max(n, 2*cap(buf)))
	}
	buf = buf[:n]
	if _, err := io.ReadFull(s.r, buf); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		s.err = err
		return buf[:0]
	}
	s.crc.Write(buf)
	return buf
}

func (s *snapReader) u32() uint32 {
	b := s.fixed(4)
	if b == nil {
		return 0
	}
	return binary.BigEndian.Uint32(b)
}

func (s *snapReader) i64() int64 {
	b := s.fixed(8)
	if b == nil {
		return 0
	}
	return int64(binary.BigEndian.Uint64(b))
}

func (s *snapReader) length(allowNull bool) int {
	n := int32(s.u32())
	if s.err != nil {
		return -1
	}
	if n < -1 || (n == -1 && !allowNull) || n > maxSnapshotItem {
		s.err = fmt.Errorf("%w: length %d", ErrSnapshotCorrupt, n)
		return -1
	}
	return int(n)
}

func (s *snapReader) str() string {
	n := s.length(false)
	if n <= 0 {
		return ""
	}
	return string(s.read(n))
}

func (s *snapReader) buffer() []byte {
	n := s.length(true)
	if n < 0 {
		return nil
	}
	return s.read(n)
}

func (s *snapReader) corrupt(format string, args ...any) {
	if s.err == nil {
		s.err = fmt.Errorf("%w: "+format, append([]any{ErrSnapshotCorrupt}, args...)...)
	}
}

// ReadSnapshot reads a tree written by WriteSnapshot, verifying the magic, the
// version, the structure and the checksum, and returns a fresh tree.
func ReadSnapshot(r io.Reader, opts Options) (*Tree, error) {
	s := &snapReader{r: bufio.NewReaderSize(r, 1<<16), crc: crc32.New(crcTable)}
	if string(s.read(len(snapshotMagic))) != snapshotMagic {
		s.corrupt("bad magic")
		return nil, s.err
	}
	v := s.u32()
	if s.err == nil && (v < 1 || v > snapshotVersion) {
		return nil, fmt.Errorf("datatree: snapshot version %d, want 1 to %d", v, snapshotVersion)
	}
	var settings uint32
	if v >= 2 {
		settings = s.u32()
	}
	nacl := s.length(false)
	var lists [][]jute.ACL
	for i := 0; i < nacl && s.err == nil; i++ {
		k := s.length(false)
		acl := make([]jute.ACL, 0, min(k, 64))
		for j := 0; j < k && s.err == nil; j++ {
			perms := int32(s.u32())
			scheme := s.str()
			id := s.str()
			acl = append(acl, jute.ACL{Perms: perms, Id: jute.Id{Scheme: scheme, Id: id}})
		}
		lists = append(lists, acl)
	}
	count := s.i64()
	if s.err == nil && count < 1 {
		s.corrupt("node count %d", count)
	}
	t := newEmpty(opts)
	t.enforceQuota = settings&settingEnforceQuota != 0
	// Each list is interned once; further nodes only count a use (no key to build).
	refs := make([]aclRef, len(lists))
	interned := make([]bool, len(lists))
	var pathBuf, dataBuf []byte
	for i := int64(0); i < count && s.err == nil; i++ {
		pathBuf = s.into(pathBuf, s.length(false))
		path := unsafe.String(unsafe.SliceData(pathBuf), len(pathBuf)) // load clones what it keeps
		var data []byte
		switch n := s.length(true); {
		case n == 0:
			data = []byte{} // empty, not null
		case n > 0:
			dataBuf = s.into(dataBuf, n)
			data = dataBuf
		}
		var st storedStat
		st.Czxid, st.Mzxid, st.Ctime, st.Mtime = s.i64(), s.i64(), s.i64(), s.i64()
		st.Pzxid, st.EphemeralOwner = s.i64(), s.i64()
		st.Version, st.Cversion, st.Aversion = int32(s.u32()), int32(s.u32()), int32(s.u32())
		ai := s.u32()
		if s.err != nil {
			break
		}
		if int(ai) >= len(lists) {
			s.corrupt("acl index %d of %d", ai, len(lists))
			break
		}
		if !interned[ai] {
			refs[ai], interned[ai] = t.acls.acquire(lists[ai]), true
		} else {
			t.acls.addRef(refs[ai])
		}
		if err := t.load(path, data, refs[ai], st); err != nil {
			s.err = err
			break
		}
	}
	if s.err != nil {
		return nil, s.err
	}
	want := s.crc.Sum32()
	var sum [4]byte
	if _, err := io.ReadFull(s.r, sum[:]); err != nil {
		return nil, fmt.Errorf("%w: checksum missing", ErrSnapshotCorrupt)
	}
	if got := binary.BigEndian.Uint32(sum[:]); got != want {
		return nil, fmt.Errorf("%w: checksum %08x, computed %08x", ErrSnapshotCorrupt, got, want)
	}
	t.loaded()
	return t, nil
}
