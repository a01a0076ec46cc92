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
// and returns the payload. The length is checked before the payload's room is allocated.
// The length prefix is read into buf too, so a reader that passes back the frame it got
// reads the next one without allocating.
func ReadFrame(r io.Reader, buf []byte, max int) ([]byte, error) {
	hdr := buf[:0]
	if cap(hdr) < 4 {
		hdr = make([]byte, 0, 4)
	}
	hdr = hdr[:4]
	if _, err := io.ReadFull(r, hdr); err != nil {
		return nil, err
	}
	n := int(int32(binary.BigEndian.Uint32(hdr)))
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

// AppendReply appends a reply's frame to dst: a ReplyHeader of xid, zxid and code, then
// body unless it is nil. It writes what AppendFrame(dst, &ReplyHeader{...}, body) writes;
// the header, encoded by a direct call rather than through Record, stays off the heap (a
// server answers every request through it).
func AppendReply(dst []byte, xid int32, zxid int64, code Code, body Record) []byte {
	start := len(dst)
	e := &Encoder{Buf: append(dst, 0, 0, 0, 0)}
	h := ReplyHeader{Xid: xid, Zxid: zxid, Err: int32(code)}
	h.Encode(e)
	if body != nil {
		body.Encode(e)
	}
	binary.BigEndian.PutUint32(e.Buf[start:], uint32(len(e.Buf)-start-4))
	return e.Buf
}
