package jute

import (
	"encoding/binary"
	"fmt"
	"io"
)

// ErrFrameTooLarge means a frame's length prefix is negative or over jute.maxbuffer.
// ZooKeeper closes the connection when it sees one; so does zkraft.
type ErrFrameTooLarge struct{ Len, Max int }

func (e *ErrFrameTooLarge) Error() string {
	return fmt.Sprintf("jute: frame length %d outside [0, %d]", e.Len, e.Max)
}

// ReadFrame reads one length-prefixed frame into buf (grown as needed, never past max)
// and returns the payload. The length is checked before anything is allocated.
func ReadFrame(r io.Reader, buf []byte, max int) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := int(int32(binary.BigEndian.Uint32(hdr[:])))
	if n < 0 || n > max {
		return nil, &ErrFrameTooLarge{Len: n, Max: max}
	}
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, err
	}
	return buf, nil
}

// AppendFrame appends a frame holding the encodings of rs to dst.
func AppendFrame(dst []byte, rs ...Record) []byte {
	start := len(dst)
	e := &Encoder{Buf: append(dst, 0, 0, 0, 0)}
	for _, r := range rs {
		if r != nil {
			r.Encode(e)
		}
	}
	binary.BigEndian.PutUint32(e.Buf[start:], uint32(len(e.Buf)-start-4))
	return e.Buf
}
