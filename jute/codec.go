package jute

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// DefaultMaxBuffer is ZooKeeper's default jute.maxbuffer (0xfffff bytes).
const DefaultMaxBuffer = 0xfffff

// ErrShort means a record ended before all its fields were read.
var ErrShort = errors.New("jute: record truncated")

// ErrLength means a string's or buffer's length is negative (other than -1), or a
// length or vector count is larger than the bytes left.
var ErrLength = errors.New("jute: bad length")

// Record is one Jute record: every generated type implements it.
type Record interface {
	Encode(e *Encoder)
	Decode(d *Decoder)
}

// Encoder appends big-endian Jute values to a byte slice. It never fails.
type Encoder struct {
	Buf []byte
}

// Int appends a 32-bit integer.
func (e *Encoder) Int(v int32) { e.Buf = binary.BigEndian.AppendUint32(e.Buf, uint32(v)) }

// Long appends a 64-bit integer.
func (e *Encoder) Long(v int64) { e.Buf = binary.BigEndian.AppendUint64(e.Buf, uint64(v)) }

// Bool appends one byte, 1 or 0.
func (e *Encoder) Bool(v bool) {
	if v {
		e.Buf = append(e.Buf, 1)
	} else {
		e.Buf = append(e.Buf, 0)
	}
}

// String appends a length-prefixed UTF-8 string.
func (e *Encoder) String(s string) {
	e.Int(int32(len(s)))
	e.Buf = append(e.Buf, s...)
}

// Buffer appends a length-prefixed byte string; nil is written as length -1.
func (e *Encoder) Buffer(b []byte) {
	if b == nil {
		e.Int(-1)
		return
	}
	e.Int(int32(len(b)))
	e.Buf = append(e.Buf, b...)
}

// Decoder reads Jute values from one frame. The first failure sticks in Err and every
// later read returns a zero value, so a record decodes without per-field checks.
// No length is trusted: a string, buffer or vector longer than the bytes left in the
// frame fails before anything is allocated, and the frame itself was bounded by
// jute.maxbuffer when it was read.
type Decoder struct {
	buf []byte
	off int
	Err error
	// AsJava makes String read bytes that are not UTF-8 as Java reads them (JavaString),
	// as ZooKeeper's BinaryInputArchive reads every string a client sends. The server
	// sets it for client requests; zkraft's own log and snapshots are read as written.
	AsJava bool
}

// NewDecoder reads from b.
func NewDecoder(b []byte) *Decoder { return &Decoder{buf: b} }

// Reset makes d read from b, as NewDecoder(b) would but keeping AsJava, so that a
// reader of many frames can keep one Decoder.
func (d *Decoder) Reset(b []byte) { *d = Decoder{buf: b, AsJava: d.AsJava} }

// Remaining is the number of unread bytes.
func (d *Decoder) Remaining() int { return len(d.buf) - d.off }

func (d *Decoder) take(n int) []byte {
	if d.Err != nil {
		return nil
	}
	if n > d.Remaining() {
		d.Err = ErrShort
		return nil
	}
	b := d.buf[d.off : d.off+n]
	d.off += n
	return b
}

// Int reads a 32-bit integer.
func (d *Decoder) Int() int32 {
	b := d.take(4)
	if b == nil {
		return 0
	}
	return int32(binary.BigEndian.Uint32(b))
}

// Long reads a 64-bit integer.
func (d *Decoder) Long() int64 {
	b := d.take(8)
	if b == nil {
		return 0
	}
	return int64(binary.BigEndian.Uint64(b))
}

// Bool reads one byte; any non-zero value is true.
func (d *Decoder) Bool() bool {
	b := d.take(1)
	return b != nil && b[0] != 0
}

// length reads a length prefix: -1 for null, else 0..Remaining().
func (d *Decoder) length() int {
	n := d.Int()
	if d.Err != nil {
		return -1
	}
	if n < -1 || int(n) > d.Remaining() {
		d.Err = fmt.Errorf("%w: %d with %d bytes left", ErrLength, n, d.Remaining())
		return -1
	}
	return int(n)
}

// String reads a length-prefixed string; null reads as "". With AsJava, bytes that are
// not UTF-8 read as Java reads them (JavaString).
func (d *Decoder) String() string {
	n := d.length()
	if n <= 0 {
		return ""
	}
	if d.AsJava {
		return JavaString(d.take(n))
	}
	return string(d.take(n))
}

// Buffer reads a length-prefixed byte string; null reads as nil. The result is a copy.
func (d *Decoder) Buffer() []byte {
	n := d.length()
	if n < 0 {
		return nil
	}
	return append([]byte{}, d.take(n)...)
}

// VectorLen reads a vector's element count: -1 for null. Each element takes at least
// minElem bytes, so a count the rest of the frame cannot hold fails here. A count below
// -1 is an empty vector, as ZooKeeper's BinaryInputArchive reads it (its index is done
// at once): a create whose ACL count is -2 is InvalidACL there, not MarshallingError.
func (d *Decoder) VectorLen(minElem int) int {
	n := d.Int()
	if d.Err != nil {
		return -1
	}
	if n < -1 {
		return 0
	}
	if int64(n)*int64(minElem) > int64(d.Remaining()) {
		d.Err = fmt.Errorf("%w: vector of %d with %d bytes left", ErrLength, n, d.Remaining())
		return -1
	}
	return int(n)
}

// Marshal encodes records one after another into a new slice.
func Marshal(rs ...Record) []byte {
	e := &Encoder{}
	for _, r := range rs {
		r.Encode(e)
	}
	return e.Buf
}

// Unmarshal decodes b into r and requires that all of b is used.
func Unmarshal(b []byte, r Record) error {
	d := NewDecoder(b)
	r.Decode(d)
	if d.Err == nil && d.Remaining() != 0 {
		d.Err = fmt.Errorf("jute: %d trailing bytes", d.Remaining())
	}
	return d.Err
}
