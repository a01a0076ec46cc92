package persistence

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/hashicorp/raft"
)

// checksumKey in the stable store marks a log whose entries carry checksums. A log
// written before checksums existed has entries without them and no key.
var checksumKey = []byte("zkraft.log.checksum")

const checksumCRC32C = "crc32c"

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// checksumLog is the log format of a zkraft before the transaction log, read once to move
// it (migrateLog): every entry stored in raft.db with a CRC-32C of its index, term, type
// and data appended to the data, checked and stripped when read back. StoreLogs stays
// for the tests that build such a store.
type checksumLog struct {
	inner raft.LogStore
	path  string // for errors
}

func entrySum(l *raft.Log, data []byte) uint32 {
	var hdr [17]byte
	binary.BigEndian.PutUint64(hdr[:8], l.Index)
	binary.BigEndian.PutUint64(hdr[8:16], l.Term)
	hdr[16] = byte(l.Type)
	c := crc32.Update(0, castagnoli, hdr[:])
	return crc32.Update(c, castagnoli, data)
}

func (c *checksumLog) FirstIndex() (uint64, error) { return c.inner.FirstIndex() }
func (c *checksumLog) LastIndex() (uint64, error)  { return c.inner.LastIndex() }

func (c *checksumLog) GetLog(index uint64, l *raft.Log) error {
	if err := c.inner.GetLog(index, l); err != nil {
		return err
	}
	return c.strip(l)
}

// strip checks the entry's checksum and removes it from its data.
func (c *checksumLog) strip(l *raft.Log) error {
	n := len(l.Data)
	if n < 4 {
		return &CorruptError{Path: c.path, What: fmt.Sprintf("log entry %d has no checksum", l.Index)}
	}
	want := binary.BigEndian.Uint32(l.Data[n-4:])
	if got := entrySum(l, l.Data[:n-4]); got != want {
		return &CorruptError{Path: c.path, What: fmt.Sprintf("log entry %d: checksum %08x, stored %08x", l.Index, got, want)}
	}
	l.Data = l.Data[:n-4]
	return nil
}

func (c *checksumLog) StoreLog(l *raft.Log) error { return c.StoreLogs([]*raft.Log{l}) }

// StoreLogs stores copies: raft keeps the entries it passes (log cache, replication).
func (c *checksumLog) StoreLogs(logs []*raft.Log) error {
	out := make([]*raft.Log, len(logs))
	for i, l := range logs {
		cp := *l
		cp.Data = binary.BigEndian.AppendUint32(append(make([]byte, 0, len(l.Data)+4), l.Data...), entrySum(l, l.Data))
		out[i] = &cp
	}
	return c.inner.StoreLogs(out)
}

// deleteChunk is how many entries one transaction of DeleteRange removes.
const deleteChunk = 2048

// DeleteRange removes the entries in chunks, a transaction each, so that the appends of
// new entries are not held up by one long transaction: compacting the log after a
// snapshot removes up to snapCount entries (70 ms for 68k in one transaction on a
// 2-core machine, every write waiting behind it). The log stays contiguous after every
// chunk, so a crash between two leaves a log raft can use: a prefix (compaction) is
// removed oldest first, a suffix (a follower dropping entries a new leader replaces)
// newest first.
func (c *checksumLog) DeleteRange(from, to uint64) error {
	first, err := c.inner.FirstIndex()
	if err != nil {
		return err
	}
	prefix := from <= first
	for from <= to {
		lo, hi := from, to // the chunk
		if prefix {
			hi = min(to, from+deleteChunk-1)
			from = hi + 1
		} else {
			lo = max(from, to-min(to, deleteChunk-1))
			if lo == from {
				from = to + 1 // the last chunk
			} else {
				to = lo - 1
			}
		}
		if err := c.inner.DeleteRange(lo, hi); err != nil {
			return err
		}
	}
	return nil
}
