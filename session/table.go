package session

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
)

// Table is the replicated set of live sessions. It lives in the state machine and
// changes only when a log entry is applied, so every server holds the same table. It is
// not safe for concurrent use: the state machine's lock guards it.
type Table struct {
	byID map[int64]Session
}

// NewTable returns an empty table.
func NewTable() *Table { return &Table{byID: map[int64]Session{}} }

// Add inserts s and reports whether it did; a session with the same id is left as it
// was. The password is copied, so s may come straight from a decoded log entry.
func (t *Table) Add(s Session) bool {
	if _, ok := t.byID[s.ID]; ok {
		return false
	}
	if s.Password != nil {
		s.Password = bytes.Clone(s.Password)
	}
	t.byID[s.ID] = s
	return true
}

// Remove deletes the session with id and returns it.
func (t *Table) Remove(id int64) (Session, bool) {
	s, ok := t.byID[id]
	if ok {
		delete(t.byID, id)
	}
	return s, ok
}

// Get returns the session with id. Its Password is shared with the table: do not modify it.
func (t *Table) Get(id int64) (Session, bool) {
	s, ok := t.byID[id]
	return s, ok
}

// SetOwner records the member a session is now connected to and reports whether the
// session exists. The write cursor starts afresh: the connection on the new member
// begins at sequence 1.
func (t *Table) SetOwner(id int64, owner string) bool {
	s, ok := t.byID[id]
	if ok {
		s.Owner, s.Conn, s.Seq = owner, 0, 0
		t.byID[id] = s
	}
	return ok
}

// Advance moves the session's write cursor to (conn, seq) if that write directly follows
// the last one applied: the next sequence number of the same connection, or the first
// write (seq 1) of another connection. It reports whether it did; a write it refuses
// must not be applied. A session that does not exist is never advanced.
func (t *Table) Advance(id int64, conn, seq uint64) bool {
	s, ok := t.byID[id]
	if !ok {
		return false
	}
	if (s.Conn == conn && seq != s.Seq+1) || (s.Conn != conn && seq != 1) {
		return false
	}
	s.Conn, s.Seq = conn, seq
	t.byID[id] = s
	return true
}

// Len is the number of sessions.
func (t *Table) Len() int { return len(t.byID) }

// All returns every session, sorted by ID, so callers never see map order.
func (t *Table) All() []Session {
	out := make([]Session, 0, len(t.byID))
	for _, s := range t.byID {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b Session) int {
		switch {
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
	return out
}

// The snapshot format, version 3, all integers big-endian:
//
//	magic    [4]byte "ZKst"
//	version  uint32  3
//	count    uint32
//	count times, sorted by id:
//	  id       int64
//	  timeout  int32   (ms)
//	  passLen  int32   (-1 for a nil password)
//	  password [passLen]byte
//	  ownerLen uint16  (version 2 only; version 1 has no owner)
//	  owner    [ownerLen]byte
//	crc      uint32  CRC-32C (Castagnoli) of every byte before it
//
// Sorting makes the encoding a function of the table's contents alone, so snapshots of
// the same state are identical on every server. A decoder refuses versions it does not
// know; a new version gets a new number, never a changed meaning for an old one.
const (
	snapshotMagic   = "ZKst"
	snapshotVersion = 3
	// maxPassword bounds one password when decoding, so a corrupt length cannot make
	// the decoder allocate without limit. ZooKeeper's passwords are 16 bytes.
	maxPassword = 1 << 10
	maxOwner    = 1 << 8
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrSnapshot means a session snapshot is malformed: bad magic, unknown version, a
// field out of range, duplicate or unsorted ids, or a checksum mismatch.
var ErrSnapshot = errors.New("session: bad snapshot")

// Encode writes the table's snapshot to w.
func (t *Table) Encode(w io.Writer) error {
	all := t.All()
	crc := crc32.New(castagnoli)
	bw := bufio.NewWriter(io.MultiWriter(w, crc))
	var b []byte
	b = append(b, snapshotMagic...)
	b = binary.BigEndian.AppendUint32(b, snapshotVersion)
	b = binary.BigEndian.AppendUint32(b, uint32(len(all)))
	if _, err := bw.Write(b); err != nil {
		return err
	}
	for _, s := range all {
		if len(s.Password) > maxPassword {
			return fmt.Errorf("session %#x: password of %d bytes is over %d", s.ID, len(s.Password), maxPassword)
		}
		b = binary.BigEndian.AppendUint64(b[:0], uint64(s.ID))
		b = binary.BigEndian.AppendUint32(b, uint32(s.Timeout))
		if len(s.Owner) > maxOwner {
			return fmt.Errorf("session %#x: owner of %d bytes is over %d", s.ID, len(s.Owner), maxOwner)
		}
		if s.Password == nil {
			b = binary.BigEndian.AppendUint32(b, 0xffffffff)
		} else {
			b = binary.BigEndian.AppendUint32(b, uint32(len(s.Password)))
			b = append(b, s.Password...)
		}
		b = binary.BigEndian.AppendUint16(b, uint16(len(s.Owner)))
		b = append(b, s.Owner...)
		b = binary.BigEndian.AppendUint64(b, s.Conn)
		b = binary.BigEndian.AppendUint64(b, s.Seq)
		if _, err := bw.Write(b); err != nil {
			return err
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	_, err := w.Write(binary.BigEndian.AppendUint32(nil, crc.Sum32()))
	return err
}

// DecodeTable reads a snapshot written by Encode. It reads exactly the snapshot's bytes
// from r, so the snapshot may be one section of a larger stream.
func DecodeTable(r io.Reader) (*Table, error) {
	crc := crc32.New(castagnoli)
	tr := io.TeeReader(r, crc)
	var hdr [12]byte
	if _, err := io.ReadFull(tr, hdr[:]); err != nil {
		return nil, fmt.Errorf("%w: header: %w", ErrSnapshot, noEOF(err))
	}
	if string(hdr[:4]) != snapshotMagic {
		return nil, fmt.Errorf("%w: magic %q", ErrSnapshot, hdr[:4])
	}
	version := binary.BigEndian.Uint32(hdr[4:])
	if version < 1 || version > snapshotVersion {
		return nil, fmt.Errorf("%w: version %d, want 1 to %d", ErrSnapshot, version, snapshotVersion)
	}
	count := binary.BigEndian.Uint32(hdr[8:])
	t := NewTable()
	var fixed [16]byte
	var last int64
	for i := uint32(0); i < count; i++ {
		if _, err := io.ReadFull(tr, fixed[:]); err != nil {
			return nil, fmt.Errorf("%w: session %d of %d: %w", ErrSnapshot, i, count, noEOF(err))
		}
		s := Session{
			ID:      int64(binary.BigEndian.Uint64(fixed[0:])),
			Timeout: int32(binary.BigEndian.Uint32(fixed[8:])),
		}
		n := int32(binary.BigEndian.Uint32(fixed[12:]))
		if n < -1 || n > maxPassword {
			return nil, fmt.Errorf("%w: session %#x: password length %d", ErrSnapshot, s.ID, n)
		}
		if n >= 0 {
			s.Password = make([]byte, n)
			if _, err := io.ReadFull(tr, s.Password); err != nil {
				return nil, fmt.Errorf("%w: session %#x password: %w", ErrSnapshot, s.ID, noEOF(err))
			}
		}
		if version >= 2 {
			var n [2]byte
			if _, err := io.ReadFull(tr, n[:]); err != nil {
				return nil, fmt.Errorf("%w: session %#x owner length: %w", ErrSnapshot, s.ID, noEOF(err))
			}
			l := binary.BigEndian.Uint16(n[:])
			if l > maxOwner {
				return nil, fmt.Errorf("%w: session %#x: owner length %d", ErrSnapshot, s.ID, l)
			}
			owner := make([]byte, l)
			if _, err := io.ReadFull(tr, owner); err != nil {
				return nil, fmt.Errorf("%w: session %#x owner: %w", ErrSnapshot, s.ID, noEOF(err))
			}
			s.Owner = string(owner)
		}
		if version >= 3 {
			var cur [16]byte
			if _, err := io.ReadFull(tr, cur[:]); err != nil {
				return nil, fmt.Errorf("%w: session %#x write cursor: %w", ErrSnapshot, s.ID, noEOF(err))
			}
			s.Conn, s.Seq = binary.BigEndian.Uint64(cur[:8]), binary.BigEndian.Uint64(cur[8:])
		}
		if i > 0 && s.ID <= last {
			return nil, fmt.Errorf("%w: session %#x after %#x: ids not increasing", ErrSnapshot, s.ID, last)
		}
		last = s.ID
		t.byID[s.ID] = s
	}
	want := crc.Sum32()
	var sum [4]byte
	if _, err := io.ReadFull(r, sum[:]); err != nil {
		return nil, fmt.Errorf("%w: checksum: %w", ErrSnapshot, noEOF(err))
	}
	if got := binary.BigEndian.Uint32(sum[:]); got != want {
		return nil, fmt.Errorf("%w: checksum %08x, computed %08x", ErrSnapshot, got, want)
	}
	return t, nil
}

// noEOF turns a clean EOF inside the snapshot into ErrUnexpectedEOF: the snapshot
// promised more bytes.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
