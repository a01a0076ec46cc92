package persistence

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"hash"
	"hash/crc64"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/raft"
)

// verify checks what a start would rely on: every snapshot's meta.json is readable and
// the log continues where the newest snapshot ends. The log's frames and entries were
// checked as it was replayed (OpenWAL), and the newest snapshot's state is checked as it
// is restored (see OpenNewestSnapshot), so a start reads each once.
func (s *Store) verify() error {
	snaps, err := snapshotMetas(SnapshotDir(s.Dir))
	if err != nil {
		return err
	}
	first, _ := s.Log.FirstIndex()
	last, _ := s.Log.LastIndex()
	var covered uint64 // the state the newest snapshot holds
	if len(snaps) > 0 {
		covered = snaps[0].Index
	}
	if last > 0 && first > covered+1 {
		return &CorruptError{Path: WALDir(s.Dir), What: fmt.Sprintf("the log starts at entry %d but the newest snapshot ends at %d: entries are missing", first, covered)}
	}
	return nil
}

type snapshotMeta struct {
	raft.SnapshotMeta
	CRC []byte
	dir string
}

// snapshotMetas reads every snapshot's meta.json, newest first. A meta.json that does
// not parse is damage (raft would skip that snapshot and start from an older state).
func snapshotMetas(dir string) ([]*snapshotMeta, error) {
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []*snapshotMeta
	var metaless []string // directories without meta.json
	for _, e := range entries {
		if !e.IsDir() || strings.HasSuffix(e.Name(), ".tmp") {
			continue // a snapshot a crash interrupted is not one
		}
		path := filepath.Join(dir, e.Name(), "meta.json")
		b, err := os.ReadFile(path)
		if os.IsNotExist(err) {
			metaless = append(metaless, e.Name())
			continue
		}
		if err != nil {
			return nil, &CorruptError{Path: path, What: err.Error()}
		}
		m := &snapshotMeta{dir: e.Name()}
		if err := json.Unmarshal(b, m); err != nil {
			return nil, &CorruptError{Path: path, What: "not valid JSON: " + err.Error()}
		}
		out = append(out, m)
	}
	// Newest first, as raft orders them.
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Term != b.Term {
			return a.Term > b.Term
		}
		if a.Index != b.Index {
			return a.Index > b.Index
		}
		return a.ID > b.ID
	})
	// Raft removes an old snapshot file by file (meta.json first, in name order), so a
	// crash can leave one without its meta.json: older than a whole one, it is that, and
	// raft skips it too. One that is not older than every whole snapshot is damage.
	for _, name := range metaless {
		var term, index, ms uint64
		if _, err := fmt.Sscanf(name, "%d-%d-%d", &term, &index, &ms); err != nil || len(out) == 0 ||
			term > out[0].Term || (term == out[0].Term && index >= out[0].Index) {
			path := filepath.Join(dir, name, "meta.json")
			return nil, &CorruptError{Path: path, What: "missing, in a snapshot not older than every whole one"}
		}
	}
	return out, nil
}

// SnapshotReader reads a snapshot's state.bin, hashing what it reads; Verify then checks
// the size and CRC-64 against meta.json.
type SnapshotReader struct {
	Meta raft.SnapshotMeta
	path string
	f    *os.File
	br   *bufio.Reader
	h    hash.Hash64
	n    int64
	want []byte
}

// OpenNewestSnapshot opens the newest snapshot (the one raft starts from), or returns
// nil if there is none.
func (s *Store) OpenNewestSnapshot() (*SnapshotReader, error) {
	snaps, err := snapshotMetas(SnapshotDir(s.Dir))
	if err != nil || len(snaps) == 0 {
		return nil, err
	}
	m := snaps[0]
	path := filepath.Join(SnapshotDir(s.Dir), m.dir, "state.bin")
	f, err := os.Open(path)
	if err != nil {
		return nil, &CorruptError{Path: path, What: err.Error()}
	}
	return &SnapshotReader{Meta: m.SnapshotMeta, path: path, f: f, br: bufio.NewReaderSize(f, 1<<20),
		h: crc64.New(crc64.MakeTable(crc64.ECMA)), want: m.CRC}, nil
}

func (r *SnapshotReader) Read(p []byte) (int, error) {
	n, err := r.br.Read(p)
	r.h.Write(p[:n])
	r.n += int64(n)
	return n, err
}

// Verify reads what is left and compares size and CRC-64 with meta.json; call it after
// the state was read, and do not use that state if it fails.
func (r *SnapshotReader) Verify() error {
	if _, err := io.Copy(io.Discard, r); err != nil {
		return &CorruptError{Path: r.path, What: err.Error()}
	}
	if r.n != r.Meta.Size {
		return &CorruptError{Path: r.path, What: fmt.Sprintf("%d bytes, meta.json says %d (torn write)", r.n, r.Meta.Size)}
	}
	if got := r.h.Sum(nil); !bytes.Equal(got, r.want) {
		return &CorruptError{Path: r.path, What: fmt.Sprintf("CRC-64 %x, meta.json says %x", got, r.want)}
	}
	return nil
}

// Close closes the file.
func (r *SnapshotReader) Close() error { return r.f.Close() }
