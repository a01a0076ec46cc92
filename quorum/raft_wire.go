package quorum

import (
	"bufio"
	"errors"
	"io"
	"math"
	"slices"

	"github.com/hashicorp/raft"
)

// A reader of the requests on raft's streams, for the read-ahead (read_ahead.go). Raft's
// transport writes each request as msgpack (hashicorp/go-msgpack, structs as maps keyed by
// field name, the RPCHeader's fields inline). This reader walks those bytes by hand,
// without reflection: it keeps only what received needs of an AppendEntries (the terms,
// the indexes and each entry's index, term, type and data) and of an InstallSnapshot (the
// size of the bytes after it), and skips everything else value by value. Anything it
// does not expect is an error, after which the read-ahead stops decoding and the stream
// flows on undecoded: a lost chance to apply early, never a wrong entry.

// errWire is a request this reader does not understand.
var errWire = errors.New("quorum: unexpected msgpack on a raft stream")

// wireMaxLen bounds one string, byte string, array or map. An entry's data is a jute
// request of up to jute.maxbuffer (1 MiB by default; an operator may raise it), so a
// longer length is garbage or a stream this reader gives up on: either way the decoding
// stops and the stream flows on, which costs only the early applies of that stream.
const wireMaxLen = 64 << 20

// wireMaxEntries bounds an AppendEntries' entries: raft refuses a MaxAppendEntries above
// 1024. The entries are allocated when the count is read, so an unbounded count from a
// few bytes could take gigabytes.
const wireMaxEntries = 1024

// wireChunk is the most a byte string is allocated ahead of its bytes arriving.
const wireChunk = 64 << 10

// wireMaxDepth bounds the nesting skipped: raft's requests nest three deep.
const wireMaxDepth = 16

// wireMaxKey is the longest map key read as a name; raft's are under 20 bytes.
const wireMaxKey = 32

// wireReader reads msgpack values from a stream (its buffer must hold wireMaxKey bytes).
type wireReader struct {
	br *bufio.Reader
}

// Msgpack type bytes (the msgpack spec's names).
const (
	mpNil     = 0xc0
	mpFalse   = 0xc2
	mpTrue    = 0xc3
	mpBin8    = 0xc4
	mpBin16   = 0xc5
	mpBin32   = 0xc6
	mpExt8    = 0xc7
	mpExt16   = 0xc8
	mpExt32   = 0xc9
	mpFloat32 = 0xca
	mpFloat64 = 0xcb
	mpUint8   = 0xcc
	mpUint16  = 0xcd
	mpUint32  = 0xce
	mpUint64  = 0xcf
	mpInt8    = 0xd0
	mpInt16   = 0xd1
	mpInt32   = 0xd2
	mpInt64   = 0xd3
	mpFixExt1 = 0xd4 // to 0xd8: fixext 1, 2, 4, 8, 16
	mpStr8    = 0xd9
	mpStr16   = 0xda
	mpStr32   = 0xdb
	mpArray16 = 0xdc
	mpArray32 = 0xdd
	mpMap16   = 0xde
	mpMap32   = 0xdf
)

// be reads an n-byte big-endian unsigned number.
func (w *wireReader) be(n int) (uint64, error) {
	var v uint64
	for range n {
		b, err := w.br.ReadByte()
		if err != nil {
			return 0, err
		}
		v = v<<8 | uint64(b)
	}
	return v, nil
}

// length reads the n-byte length that follows a type byte, bounded by wireMaxLen.
func (w *wireReader) length(n int) (int, error) {
	v, err := w.be(n)
	if err != nil {
		return 0, err
	}
	if v > wireMaxLen {
		return 0, errWire
	}
	return int(v), nil
}

// uint reads a non-negative integer in any of msgpack's integer forms.
func (w *wireReader) uint() (uint64, error) {
	b, err := w.br.ReadByte()
	if err != nil {
		return 0, err
	}
	switch {
	case b <= 0x7f:
		return uint64(b), nil
	case b >= mpUint8 && b <= mpUint64:
		return w.be(1 << (b - mpUint8))
	case b >= mpInt8 && b <= mpInt64:
		n := 1 << (b - mpInt8)
		v, err := w.be(n)
		if err != nil {
			return 0, err
		}
		if v>>(8*n-1) != 0 { // negative
			return 0, errWire
		}
		return v, nil
	}
	return 0, errWire
}

// wireKind is what a value's type byte says follows it.
type wireKind uint8

const (
	wireFixed    wireKind = iota // n bytes of payload: a number, nil, a boolean, an extension
	wireRaw                      // a string or byte string of n bytes
	wireArray                    // n values
	wireMap                      // n keys, each followed by its value
	wireNilValue                 // nil, where a string, array or map may be nil
)

// head reads a value's type byte and returns its kind and length, bounded by wireMaxLen
// (msgpack's only classification of type bytes here; uint reads numbers itself).
func (w *wireReader) head() (wireKind, int, error) {
	b, err := w.br.ReadByte()
	if err != nil {
		return 0, 0, err
	}
	switch {
	case b <= 0x7f || b >= 0xe0 || b == mpFalse || b == mpTrue:
		return wireFixed, 0, nil
	case b == mpNil:
		return wireNilValue, 0, nil
	case b >= 0x80 && b <= 0x8f:
		return wireMap, int(b & 0x0f), nil
	case b >= 0x90 && b <= 0x9f:
		return wireArray, int(b & 0x0f), nil
	case b >= 0xa0 && b <= 0xbf:
		return wireRaw, int(b & 0x1f), nil
	case b == mpFloat32:
		return wireFixed, 4, nil
	case b == mpFloat64:
		return wireFixed, 8, nil
	case b >= mpUint8 && b <= mpUint64:
		return wireFixed, 1 << (b - mpUint8), nil
	case b >= mpInt8 && b <= mpInt64:
		return wireFixed, 1 << (b - mpInt8), nil
	case b >= mpFixExt1 && b <= mpFixExt1+4:
		return wireFixed, 1 + 1<<(b-mpFixExt1), nil // the ext's type byte, then its data
	}
	var kind wireKind
	var width int // of the length that follows the type byte
	switch b {
	case mpStr8, mpBin8:
		kind, width = wireRaw, 1
	case mpStr16, mpBin16:
		kind, width = wireRaw, 2
	case mpStr32, mpBin32:
		kind, width = wireRaw, 4
	case mpExt8, mpExt16, mpExt32:
		kind, width = wireFixed, 1<<(b-mpExt8)
	case mpArray16, mpArray32:
		kind, width = wireArray, 2<<(b-mpArray16)
	case mpMap16, mpMap32:
		kind, width = wireMap, 2<<(b-mpMap16)
	default: // 0xc1, never used
		return 0, 0, errWire
	}
	n, err := w.length(width)
	if kind == wireFixed {
		n++ // an extension's type byte follows its length
	}
	return kind, n, err
}

// containerLen reads the header of a map (isMap) or an array; nil reads as length -1.
func (w *wireReader) containerLen(isMap bool) (int, error) {
	kind, n, err := w.head()
	switch {
	case err != nil:
		return 0, err
	case kind == wireNilValue:
		return -1, nil
	case kind == wireMap && isMap, kind == wireArray && !isMap:
		return n, nil
	}
	return 0, errWire
}

// rawLen reads the header of a string or a byte string; nil reads as length -1.
func (w *wireReader) rawLen() (int, error) {
	kind, n, err := w.head()
	switch {
	case err != nil:
		return 0, err
	case kind == wireNilValue:
		return -1, nil
	case kind == wireRaw:
		return n, nil
	}
	return 0, errWire
}

// bytes reads a string or byte string into a new slice (nil for nil or empty, as
// go-msgpack leaves an empty []byte field).
func (w *wireReader) bytes() ([]byte, error) {
	n, err := w.rawLen()
	if err != nil || n <= 0 {
		return nil, err
	}
	// Grown as the bytes arrive: a length alone allocates at most wireChunk.
	out := make([]byte, 0, min(n, wireChunk))
	for len(out) < n {
		k := min(n-len(out), wireChunk)
		out = slices.Grow(out, k)[:len(out)+k]
		if _, err := io.ReadFull(w.br, out[len(out)-k:]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// mapKey reads a map's key, a string. The result is the reader's buffer, valid until the
// next read; it is empty for a key longer than wireMaxKey (no field this reader wants has
// one).
func (w *wireReader) mapKey() ([]byte, error) {
	n, err := w.rawLen()
	if err != nil {
		return nil, err
	}
	if n < 0 {
		return nil, errWire
	}
	if n > wireMaxKey {
		_, err := w.br.Discard(n)
		return nil, err
	}
	k, err := w.br.Peek(n)
	if err != nil {
		return nil, err
	}
	w.br.Discard(n) // k stays readable: only the next read moves the buffer's bytes
	return k, nil
}

// skip reads past one value of any type.
func (w *wireReader) skip(depth int) error {
	if depth > wireMaxDepth {
		return errWire
	}
	kind, n, err := w.head()
	if err != nil {
		return err
	}
	switch kind {
	case wireFixed, wireRaw:
		_, err = w.br.Discard(n)
		return err
	case wireMap:
		n *= 2
	case wireNilValue:
		return nil
	}
	for range n {
		if err := w.skip(depth + 1); err != nil {
			return err
		}
	}
	return nil
}

// eachField reads a map (nil reads as empty) at depth, calling field with each key:
// field reads the value and returns true, or returns false to have it skipped.
func (w *wireReader) eachField(depth int, field func(key []byte) (bool, error)) error {
	n, err := w.containerLen(true)
	if err != nil {
		return err
	}
	for range max(n, 0) {
		k, err := w.mapKey()
		if err != nil {
			return err
		}
		read, err := field(k)
		if err == nil && !read {
			err = w.skip(depth + 1)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// uintInto reads a number into dst, for eachField's callers: true, as the value is read.
func (w *wireReader) uintInto(dst *uint64) (bool, error) {
	v, err := w.uint()
	*dst = v
	return true, err
}

// appendEntries reads an AppendEntriesRequest: its terms, indexes and entries (each
// entry's index, term, type and data; its time and extensions are skipped). The RPC
// header is skipped.
func (w *wireReader) appendEntries() (*raft.AppendEntriesRequest, error) {
	req := new(raft.AppendEntriesRequest)
	err := w.eachField(0, func(k []byte) (bool, error) {
		switch string(k) {
		case "Term":
			return w.uintInto(&req.Term)
		case "PrevLogEntry":
			return w.uintInto(&req.PrevLogEntry)
		case "PrevLogTerm":
			return w.uintInto(&req.PrevLogTerm)
		case "LeaderCommitIndex":
			return w.uintInto(&req.LeaderCommitIndex)
		case "Entries":
			var err error
			req.Entries, err = w.entries()
			return true, err
		}
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	return req, nil
}

// entries reads an AppendEntries' list of entries.
func (w *wireReader) entries() ([]*raft.Log, error) {
	n, err := w.containerLen(false)
	if err != nil || n <= 0 {
		return nil, err
	}
	if n > wireMaxEntries {
		return nil, errWire
	}
	out := make([]*raft.Log, n)
	logs := make([]raft.Log, n)
	for i := range out {
		e := &logs[i]
		err := w.eachField(1, func(k []byte) (bool, error) {
			var err error
			switch string(k) {
			case "Index":
				return w.uintInto(&e.Index)
			case "Term":
				return w.uintInto(&e.Term)
			case "Type":
				var t uint64
				if t, err = w.uint(); err == nil && t > math.MaxUint8 {
					err = errWire
				}
				e.Type = raft.LogType(t)
			case "Data":
				e.Data, err = w.bytes()
			default:
				return false, nil
			}
			return true, err
		})
		if err != nil {
			return nil, err
		}
		out[i] = e
	}
	return out, nil
}

// snapshotSize reads an InstallSnapshotRequest and returns its Size: the bytes of
// snapshot that follow it on the stream.
func (w *wireReader) snapshotSize() (int64, error) {
	var size uint64
	err := w.eachField(0, func(k []byte) (bool, error) {
		if string(k) != "Size" {
			return false, nil
		}
		return w.uintInto(&size)
	})
	if err != nil {
		return 0, err
	}
	if size > math.MaxInt64 {
		return 0, errWire
	}
	return int64(size), nil
}
