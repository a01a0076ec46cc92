package persistence

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"time"

	"github.com/hashicorp/raft"
)

// The transaction log's files (see WAL). Big-endian; every frame starts at a multiple of
// 8 bytes.
//
//	segment   header, then frames, then zeros to the end of the preallocated file
//	header    8 bytes "ZKRAFTWL", uint32 version (1), uint32 CRC-32C of the 12 before
//	frame     uint32 n (> 0), uint32 CRC-32C of the payload, payload (n bytes), the
//	          4 bytes "ZKRF", zeros to the next multiple of 8; n = 0 ends the frames
//	payload   kind byte, then
//	            entries  (1) records, of consecutive indexes
//	            truncate (2) uint64 t: the entries after t are gone
//	            reset    (3) every entry is gone; the next may have any index
//	record    uint32 m, uint32 CRC-32C of the body, body (m bytes): uint64 index,
//	          uint64 term, type byte, int64 appendedAt (Unix ns, 0 = unset),
//	          uint32 extensions length, extensions, data (the rest)
//
// A frame is one StoreLogs call (or one truncation), written with one write and made
// durable with one fdatasync: after a crash it is there whole or not at all. Records
// carry their own CRC so one entry can be read and checked without its frame.
const (
	walMagic       = "ZKRAFTWL"
	walVersion     = 1
	walHeaderSize  = 16
	frameHeader    = 8
	frameTrailer   = "ZKRF"
	recordHeader   = 8
	recordFixed    = 8 + 8 + 1 + 8 + 4 // index, term, type, appendedAt, extensions length
	frameEntries   = 1
	frameTruncate  = 2
	frameReset     = 3
	maxFrameLength = 1 << 30
	sectorSize     = 512
)

var errTornFrame = errors.New("torn frame")

func walHeader() []byte {
	b := append([]byte(walMagic), 0, 0, 0, walVersion)
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

func checkWALHeader(b []byte) error {
	if len(b) < walHeaderSize || string(b[:8]) != walMagic {
		return errors.New("not a zkraft transaction log segment (bad magic)")
	}
	if crc32.Checksum(b[:12], castagnoli) != binary.BigEndian.Uint32(b[12:16]) {
		return errors.New("segment header checksum mismatch")
	}
	if v := binary.BigEndian.Uint32(b[8:12]); v != walVersion {
		return fmt.Errorf("segment version %d, this zkraft reads %d", v, walVersion)
	}
	return nil
}

// frameBuilder encodes one frame into a reused buffer.
type frameBuilder struct {
	buf  []byte
	recs []recLoc // where each record starts in buf, and its length
}

type recLoc struct{ off, n uint32 }

func (b *frameBuilder) begin(kind byte) {
	b.buf = append(b.buf[:0], 0, 0, 0, 0, 0, 0, 0, 0, kind)
	b.recs = b.recs[:0]
}

func (b *frameBuilder) record(l *raft.Log) {
	start := len(b.buf)
	b.buf = append(b.buf, 0, 0, 0, 0, 0, 0, 0, 0)
	b.buf = binary.BigEndian.AppendUint64(b.buf, l.Index)
	b.buf = binary.BigEndian.AppendUint64(b.buf, l.Term)
	b.buf = append(b.buf, byte(l.Type))
	var at int64
	if !l.AppendedAt.IsZero() {
		at = l.AppendedAt.UnixNano()
	}
	b.buf = binary.BigEndian.AppendUint64(b.buf, uint64(at))
	b.buf = binary.BigEndian.AppendUint32(b.buf, uint32(len(l.Extensions)))
	b.buf = append(b.buf, l.Extensions...)
	b.buf = append(b.buf, l.Data...)
	body := b.buf[start+recordHeader:]
	binary.BigEndian.PutUint32(b.buf[start:], uint32(len(body)))
	binary.BigEndian.PutUint32(b.buf[start+4:], crc32.Checksum(body, castagnoli))
	b.recs = append(b.recs, recLoc{off: uint32(start), n: uint32(len(b.buf) - start)})
}

func (b *frameBuilder) truncate(t uint64) {
	b.buf = binary.BigEndian.AppendUint64(b.buf, t)
}

// finish fills in the frame header and pads the frame to a multiple of 8.
func (b *frameBuilder) finish() []byte {
	payload := b.buf[frameHeader:]
	binary.BigEndian.PutUint32(b.buf, uint32(len(payload)))
	binary.BigEndian.PutUint32(b.buf[4:], crc32.Checksum(payload, castagnoli))
	b.buf = append(b.buf, frameTrailer...)
	for len(b.buf)%8 != 0 {
		b.buf = append(b.buf, 0)
	}
	return b.buf
}

// decodeRecord checks a record (header included) and fills l; Data and Extensions are
// slices of rec.
func decodeRecord(rec []byte, l *raft.Log) error {
	if len(rec) < recordHeader+recordFixed {
		return fmt.Errorf("record of %d bytes is too short", len(rec))
	}
	m := binary.BigEndian.Uint32(rec)
	body := rec[recordHeader:]
	if uint64(m) != uint64(len(body)) {
		return fmt.Errorf("record length %d, %d bytes stored", m, len(body))
	}
	if got, want := crc32.Checksum(body, castagnoli), binary.BigEndian.Uint32(rec[4:]); got != want {
		return fmt.Errorf("record checksum %08x, stored %08x", got, want)
	}
	ext := binary.BigEndian.Uint32(body[25:29])
	if uint64(ext) > uint64(len(body)-recordFixed) {
		return fmt.Errorf("extensions of %d bytes overrun the record", ext)
	}
	*l = raft.Log{
		Index: binary.BigEndian.Uint64(body),
		Term:  binary.BigEndian.Uint64(body[8:]),
		Type:  raft.LogType(body[16]),
	}
	if at := int64(binary.BigEndian.Uint64(body[17:25])); at != 0 {
		l.AppendedAt = time.Unix(0, at)
	}
	if ext > 0 {
		l.Extensions = body[recordFixed : recordFixed+int(ext)]
	}
	l.Data = body[recordFixed+int(ext):]
	return nil
}

// frame is one frame read back: its kind, its extent in the segment, and for entries
// the records (offsets in the segment) with their indexes.
type frame struct {
	kind  byte
	off   int64
	size  int64 // header, payload and padding
	first uint64
	recs  []recLoc
	trunc uint64
}

// readFrame parses the frame at off of seg (a whole segment file's bytes). It returns
// (nil, nil) at the end of the frames, errTornFrame for a frame whose bytes do not check
// out, and any other error for a frame that checks out but makes no sense.
func readFrame(seg []byte, off int64) (*frame, error) {
	if off+frameHeader > int64(len(seg)) {
		return nil, nil
	}
	n := int64(binary.BigEndian.Uint32(seg[off:]))
	if n == 0 {
		return nil, nil
	}
	end := off + frameHeader + n
	if n > maxFrameLength || end+int64(len(frameTrailer)) > int64(len(seg)) {
		return nil, errTornFrame
	}
	payload := seg[off+frameHeader : end]
	if crc32.Checksum(payload, castagnoli) != binary.BigEndian.Uint32(seg[off+4:]) ||
		string(seg[end:end+int64(len(frameTrailer))]) != frameTrailer {
		return nil, errTornFrame
	}
	f := &frame{kind: payload[0], off: off, size: (frameHeader + n + int64(len(frameTrailer)) + 7) &^ 7}
	switch f.kind {
	case frameEntries:
		pos := int64(1)
		for pos < n {
			if pos+recordHeader > n {
				return nil, fmt.Errorf("frame at %d: a record header overruns the frame", off)
			}
			m := int64(binary.BigEndian.Uint32(payload[pos:]))
			if m < recordFixed || pos+recordHeader+m > n {
				return nil, fmt.Errorf("frame at %d: a record of %d bytes overruns the frame", off, m)
			}
			idx := binary.BigEndian.Uint64(payload[pos+recordHeader:])
			if len(f.recs) == 0 {
				f.first = idx
			} else if idx != f.first+uint64(len(f.recs)) {
				return nil, fmt.Errorf("frame at %d: entry %d follows entry %d", off, idx, f.first+uint64(len(f.recs))-1)
			}
			f.recs = append(f.recs, recLoc{off: uint32(off + frameHeader + pos), n: uint32(recordHeader + m)})
			pos += recordHeader + m
		}
		if len(f.recs) == 0 {
			return nil, fmt.Errorf("frame at %d holds no entries", off)
		}
	case frameTruncate:
		if n != 9 {
			return nil, fmt.Errorf("frame at %d: truncation of %d bytes", off, n)
		}
		f.trunc = binary.BigEndian.Uint64(payload[1:])
	case frameReset:
		if n != 1 {
			return nil, fmt.Errorf("frame at %d: reset of %d bytes", off, n)
		}
	default:
		return nil, fmt.Errorf("frame at %d: unknown kind %d", off, f.kind)
	}
	return f, nil
}

// tornTail tells a frame that a crash cut short from a damaged one. A frame is written
// with one write into zeros (the preallocated file, or zeros a repair wrote), and the
// next frame is written only after it was made durable, so a torn frame is the last
// frame and lacks part of what it should hold: its trailer (a write cut short), an
// aligned sector inside it that is still all zeros (sectors written out of order; then
// those sectors must be where its records fail, see lostSectorsExplain), or its end
// (beyond the file). A damaged frame has all of them, or has frames after it that
// check out.
func tornTail(seg []byte, off int64) bool {
	n := int64(binary.BigEndian.Uint32(seg[off:]))
	end := off + frameHeader + n
	torn := n > maxFrameLength || end+int64(len(frameTrailer)) > int64(len(seg)) ||
		string(seg[end:end+int64(len(frameTrailer))]) != frameTrailer
	if !torn {
		for s := (off/sectorSize + 1) * sectorSize; s < end; s += sectorSize {
			if allZero(seg[s:min(s+sectorSize, int64(len(seg)))]) {
				torn = lostSectorsExplain(seg, off, end)
				break
			}
		}
	}
	if !torn {
		return false
	}
	from := off + 8 // frames after it; inside it, its own records are not frames
	if end <= int64(len(seg)) && n <= maxFrameLength {
		from = (end + int64(len(frameTrailer)) + 7) &^ 7
	}
	for o := from; o+frameHeader < int64(len(seg)); o += 8 {
		if binary.BigEndian.Uint32(seg[o:]) == 0 {
			continue
		}
		if f, err := readFrame(seg, o); err == nil && f != nil {
			return false // something checks out after it: damage, not a crash
		}
	}
	return true
}

// lostSectorsExplain reports whether the sectors of the frame at off (ending at end,
// its trailer there) that read as zeros explain why it does not check out, as they do
// when the crash lost them: every record that fails its checksum lies in part in such a
// sector, or parsing stops at a record header that does. A record that fails though all
// of it was written, or a frame whose records all check out, is damage (a flipped bit
// in a frame that merely holds zeros).
func lostSectorsExplain(seg []byte, off, end int64) bool {
	first := (off/sectorSize + 1) * sectorSize // the frame's first sector holds its length: written
	lost := func(from, to int64) bool {
		for s := max(first, from/sectorSize*sectorSize); s < to; s += sectorSize {
			if allZero(seg[s:min(s+sectorSize, int64(len(seg)))]) {
				return true
			}
		}
		return false
	}
	payload := seg[off+frameHeader : end]
	if payload[0] != frameEntries {
		return true
	}
	failed := false
	for pos := int64(1); pos < int64(len(payload)); {
		rec := off + frameHeader + pos
		if pos+recordHeader > int64(len(payload)) || lost(rec, rec+recordHeader) {
			return lost(rec, end)
		}
		m := int64(binary.BigEndian.Uint32(payload[pos:]))
		if m < recordFixed || pos+recordHeader+m > int64(len(payload)) {
			return false // a length that was written and makes no sense
		}
		body := payload[pos+recordHeader : pos+recordHeader+m]
		if crc32.Checksum(body, castagnoli) != binary.BigEndian.Uint32(payload[pos+4:]) {
			if !lost(rec+recordHeader, rec+recordHeader+m) {
				return false
			}
			failed = true
		}
		pos += recordHeader + m
	}
	return failed
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
