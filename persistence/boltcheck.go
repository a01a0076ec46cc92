package persistence

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
)

// checkBoltFile looks at raft.db before bbolt opens it. bbolt trusts the page count in
// its meta page and, with the freelist rebuilt at open, reads every page from a
// goroutine of its own, where a page beyond the end of a cut-short file panics the
// process. So a file shorter than its newest valid meta page says is refused here.
//
// bbolt's file starts with two meta pages; each is a 16-byte page header, then (in the
// machine's byte order) magic, version, page size, flags (uint32 each), the root bucket
// (16 bytes), the freelist page, the high-water page id, the txid and an FNV-64a checksum
// of the meta fields before it (uint64 each).
func checkBoltFile(path string) error {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil // a new store
	}
	if err != nil {
		return fmt.Errorf("persistence: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("persistence: %w", err)
	}
	if fi.Size() == 0 {
		// A first start killed inside bbolt's open leaves an empty file, which bbolt
		// initializes; with a log or a snapshot beside it, a term and vote were lost.
		if segs, _ := segmentFiles(WALDir(filepath.Dir(path))); len(segs) > 0 {
			return &CorruptError{Path: path, What: "the file is empty, beside a transaction log"}
		}
		if snaps, _ := os.ReadDir(SnapshotDir(filepath.Dir(path))); len(snaps) > 0 {
			return &CorruptError{Path: path, What: "the file is empty, beside snapshots"}
		}
		return nil
	}
	const (
		header   = 16
		magic    = 0xED0CDAED
		metaSize = 64
	)
	var best struct {
		ok                 bool
		txid, pgid, pageSz uint64
	}
	read := func(off int64) ([]byte, error) {
		b := make([]byte, header+metaSize)
		_, err := f.ReadAt(b, off)
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return b, err
	}
	first, err := read(0)
	if err != nil {
		return &CorruptError{Path: path, What: "too short for bbolt's meta pages"}
	}
	order := binary.ByteOrder(binary.LittleEndian)
	if binary.BigEndian.Uint32(first[header:]) == magic {
		order = binary.BigEndian
	}
	pageSz := uint64(order.Uint32(first[header+8:]))
	for i, off := range []int64{0, int64(pageSz)} {
		if i == 1 && (pageSz < 512 || pageSz > 1<<20) {
			break
		}
		b, err := read(off)
		if err != nil {
			continue
		}
		m := b[header:]
		if order.Uint32(m) != magic {
			continue
		}
		h := fnv.New64a()
		h.Write(m[:56])
		if h.Sum64() != order.Uint64(m[56:]) {
			continue
		}
		if txid := order.Uint64(m[48:]); !best.ok || txid > best.txid {
			best.ok, best.txid, best.pgid, best.pageSz = true, txid, order.Uint64(m[40:]), uint64(order.Uint32(m[8:]))
		}
	}
	if !best.ok {
		return &CorruptError{Path: path, What: "neither of bbolt's meta pages is valid"}
	}
	if need := int64(best.pgid * best.pageSz); fi.Size() < need {
		return &CorruptError{Path: path, What: fmt.Sprintf("the file is %d bytes but its pages reach %d (cut short)", fi.Size(), need)}
	}
	return nil
}
