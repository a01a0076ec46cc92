package persistence

import (
	"fmt"
	"os"
)

// preparer writes the next segment ahead of need, in the background: the header, then
// zeros to the segment's size, made durable, as wal-next.tmp. Rolling to a new segment
// is then a rename and a directory fsync, and no write waits for 16 MiB of zeros. A
// prepared file left by an earlier run is used again.
type preparer struct {
	path string
	size int64
	done chan prepared // one preparation at a time
}

type prepared struct {
	f   *os.File
	err error
}

func newPreparer(path string, size int64) *preparer {
	p := &preparer{path: path, size: size, done: make(chan prepared, 1)}
	p.start()
	return p
}

func (p *preparer) start() {
	go func() {
		f, err := p.make()
		p.done <- prepared{f, err}
	}()
}

// take waits for the prepared file; after an error the next call tries again.
func (p *preparer) take() (*os.File, error) {
	r := <-p.done
	if r.err != nil {
		p.start()
		return nil, fmt.Errorf("persistence: preparing the next transaction log segment: %w", r.err)
	}
	return r.f, nil
}

// stop waits for a preparation under way and closes its file, which stays for reuse.
func (p *preparer) stop() {
	if r := <-p.done; r.f != nil {
		r.f.Close()
	}
}

func (p *preparer) make() (*os.File, error) {
	if f, err := p.reuse(); f != nil || err != nil {
		return f, err
	}
	f, err := os.OpenFile(p.path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	buf := make([]byte, 1<<20)
	copy(buf, walHeader())
	for off := int64(0); off < p.size; off += int64(len(buf)) {
		if _, err := f.WriteAt(buf[:min(int64(len(buf)), p.size-off)], off); err != nil {
			f.Close()
			return nil, err
		}
		clear(buf[:walHeaderSize])
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// reuse returns a prepared file of the right size that an earlier run left, made
// durable again (the run may have stopped before its fsync).
func (p *preparer) reuse() (*os.File, error) {
	f, err := os.OpenFile(p.path, os.O_RDWR, 0)
	if err != nil {
		return nil, nil
	}
	fi, err := f.Stat()
	hdr := make([]byte, walHeaderSize)
	if err != nil || fi.Size() != p.size || func() error { _, err := f.ReadAt(hdr, 0); return err }() != nil || checkWALHeader(hdr) != nil || !zeroBody(f, p.size) {
		f.Close()
		return nil, nil
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// zeroBody reports whether everything after the header of f is zeros. A prepared file
// that holds frames is a segment whose rename a power cut took back: its frames must not
// be read again after the ones a new segment gets, so it is written anew.
func zeroBody(f *os.File, size int64) bool {
	buf := make([]byte, 1<<20)
	for off := int64(walHeaderSize); off < size; off += int64(len(buf)) {
		n, err := f.ReadAt(buf[:min(int64(len(buf)), size-off)], off)
		if err != nil || !allZero(buf[:n]) {
			return false
		}
	}
	return true
}
