package persistence

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// segmentFiles lists dir's segments by seq.
func segmentFiles(dir string) ([]uint32, error) {
	ents, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var seqs []uint32
	for _, e := range ents {
		var seq uint32
		if _, err := fmt.Sscanf(e.Name(), "wal-%016x.log", &seq); err == nil && e.Name() == segmentName(seq) {
			seqs = append(seqs, seq)
		}
	}
	sort.Slice(seqs, func(i, j int) bool { return seqs[i] < seqs[j] })
	return seqs, nil
}

// syncReplayed is replay's fdatasync of each segment it read; tests count it.
var syncReplayed = fdatasync

// replay reads every segment in order, rebuilds the live entries and, unless the log is
// read-only, makes every segment durable: what it read is what the log now vouches for.
func (w *WAL) replay() error {
	seqs, err := segmentFiles(w.dir)
	if err != nil {
		return err
	}
	var base uint64 // index of live[0]
	flag := os.O_RDWR
	if w.readOnly {
		flag = os.O_RDONLY
	}
	for i, seq := range seqs {
		path := filepath.Join(w.dir, segmentName(seq))
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if err := checkWALHeader(data); err != nil {
			return &CorruptError{Path: path, What: err.Error()}
		}
		off, torn := int64(walHeaderSize), false
		for {
			f, err := readFrame(data, off)
			if errors.Is(err, errTornFrame) {
				if i == len(seqs)-1 && tornTail(data, off) {
					torn = true
					break
				}
				return &CorruptError{Path: path, What: fmt.Sprintf("the frame at offset %d does not match its checksum", off)}
			}
			if err != nil {
				return &CorruptError{Path: path, What: err.Error()}
			}
			if f == nil {
				break
			}
			if base, err = w.replayFrame(f, seq, base); err != nil {
				return &CorruptError{Path: path, What: err.Error()}
			}
			off += f.size
		}
		if i == len(seqs)-1 && !w.readOnly && (torn || !allZero(data[off:])) {
			if err := zeroTail(path, data, off); err != nil {
				return err
			}
		}
		file, err := os.OpenFile(path, flag, 0)
		if err != nil {
			return err
		}
		w.segs = append(w.segs, &segment{seq: seq, path: path, f: file, tail: off, size: int64(len(data))})
		if !w.readOnly {
			// A run killed during an fdatasync leaves a whole frame that may be only in
			// the page cache; from here on it counts as durable (raft answers for it, a
			// durable notice trusts it), so it must be on the disk before anyone is told.
			if err := syncReplayed(file); err != nil {
				return fmt.Errorf("persistence: fdatasync of %s after replay: %w", path, err)
			}
		}
	}
	for i, r := range w.live {
		if r.n == 0 {
			return &CorruptError{Path: w.dir, What: fmt.Sprintf("entry %d is missing (a segment file is gone)", base+uint64(i))}
		}
	}
	if len(w.live) > 0 {
		w.first, w.emptyNext = base, 0
	}
	return nil
}

// replayFrame applies one frame to the live entries and returns the new base.
func (w *WAL) replayFrame(f *frame, seq uint32, base uint64) (uint64, error) {
	end := base + uint64(len(w.live)) // the next index expected; with no entries, w.emptyNext
	if len(w.live) == 0 {
		end = w.emptyNext
	}
	switch f.kind {
	case frameEntries:
		switch {
		case end == 0: // the start, or after a reset: any index
			base = f.first
		case f.first < end:
			return base, fmt.Errorf("entry %d is stored again without a truncation", f.first)
		default:
			if len(w.live) == 0 {
				base = end
			}
			for i := end; i < f.first; i++ {
				w.live = append(w.live, entryRef{}) // a hole: a later truncation must remove it
			}
		}
		for _, r := range f.recs {
			w.live = append(w.live, entryRef{seg: seq, off: r.off, n: r.n})
		}
		w.emptyNext = 0
	case frameTruncate:
		switch {
		case f.trunc+1 < base || len(w.live) == 0:
			w.live, base, w.emptyNext = w.live[:0], f.trunc+1, f.trunc+1
		case f.trunc+1-base <= uint64(len(w.live)):
			w.live = w.live[:f.trunc+1-base]
			if len(w.live) == 0 {
				w.emptyNext = f.trunc + 1
			}
		default:
			return base, fmt.Errorf("a truncation after entry %d, beyond the last entry %d", f.trunc, end-1)
		}
	case frameReset:
		w.live, w.emptyNext = w.live[:0], 0
	}
	return base, nil
}

// zeroTail overwrites a torn frame and whatever else is not zero after the last frame
// (a frame whose first sector was lost leaves its later ones), back to front, so that the
// next frame is written into zeros.
func zeroTail(path string, data []byte, off int64) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	const chunk = 64 << 10
	zeros := make([]byte, chunk)
	size := int64(len(data))
	for end := size; end > off; end -= chunk {
		start := max(off, end-chunk)
		if part := data[start:end]; !allZero(part) {
			if _, err := f.WriteAt(zeros[:len(part)], start); err != nil {
				return err
			}
		}
	}
	return fdatasync(f)
}
