package quorum

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/go-msgpack/v2/codec"
	"github.com/hashicorp/raft"
)

// raftEncode writes reqs as raft's transport does: a type byte, then the request in
// msgpack, with the transport's handle (timeBuiltin: its new time format).
func raftEncode(t testing.TB, timeBuiltin bool, reqs ...any) []byte {
	t.Helper()
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	enc := codec.NewEncoder(w, &codec.MsgpackHandle{BasicHandle: codec.BasicHandle{TimeNotBuiltin: !timeBuiltin}})
	for _, req := range reqs {
		var kind uint8
		switch req.(type) {
		case *raft.AppendEntriesRequest:
			kind = rpcAppendEntries
		case *raft.RequestVoteRequest:
			kind = rpcRequestVote
		case *raft.InstallSnapshotRequest:
			kind = rpcInstallSnapshot
		case *raft.TimeoutNowRequest:
			kind = rpcTimeoutNow
		case *raft.RequestPreVoteRequest:
			kind = rpcRequestPreVote
		default:
			t.Fatalf("no raft request: %T", req)
		}
		w.WriteByte(kind)
		if err := enc.Encode(req); err != nil {
			t.Fatal(err)
		}
	}
	w.Flush()
	return b.Bytes()
}

// randomNumber is a number of any of msgpack's integer widths.
func randomNumber(r *rand.Rand) uint64 {
	switch r.IntN(6) {
	case 0:
		return uint64(r.IntN(128))
	case 1:
		return 128 + uint64(r.IntN(128))
	case 2:
		return 256 + uint64(r.IntN(65536-256))
	case 3:
		return 65536 + uint64(r.Uint32())
	case 4:
		return 1<<40 + r.Uint64N(1<<50)
	}
	return math.MaxUint64 - r.Uint64N(10)
}

// randomBytes is nil, empty or data of a length in each of msgpack's string widths.
func randomBytes(r *rand.Rand) []byte {
	var n int
	switch r.IntN(6) {
	case 0:
		return nil
	case 1:
		n = r.IntN(32)
	case 2:
		n = 32 + r.IntN(224)
	case 3:
		n = 256 + r.IntN(2000)
	case 4:
		n = 65536 + r.IntN(1000)
	default:
		n = 100
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.IntN(256))
	}
	return b
}

func randomAppend(r *rand.Rand) *raft.AppendEntriesRequest {
	req := &raft.AppendEntriesRequest{
		RPCHeader:         raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: randomBytes(r), Addr: []byte("127.0.0.1:7001")},
		Term:              randomNumber(r),
		Leader:            randomBytes(r),
		PrevLogEntry:      randomNumber(r),
		PrevLogTerm:       randomNumber(r),
		LeaderCommitIndex: randomNumber(r),
	}
	for range r.IntN(12) {
		req.Entries = append(req.Entries, &raft.Log{
			Index: randomNumber(r), Term: randomNumber(r),
			Type:       raft.LogType(r.IntN(6)),
			Data:       randomBytes(r),
			Extensions: randomBytes(r),
			AppendedAt: time.Unix(int64(r.Uint32()), int64(r.IntN(1e9))),
		})
	}
	return req
}

// sameAppend reports whether got holds every field of want the wire reader keeps.
func sameAppend(got, want *raft.AppendEntriesRequest) bool {
	if got.Term != want.Term || got.PrevLogEntry != want.PrevLogEntry || got.PrevLogTerm != want.PrevLogTerm ||
		got.LeaderCommitIndex != want.LeaderCommitIndex || len(got.Entries) != len(want.Entries) {
		return false
	}
	for i, e := range want.Entries {
		g := got.Entries[i]
		if g.Index != e.Index || g.Term != e.Term || g.Type != e.Type || !bytes.Equal(g.Data, e.Data) {
			return false
		}
	}
	return true
}

// The wire reader reads what raft's transport writes, in either of its time formats:
// every kind of request, each read to its last byte (the next starts where it ends), the
// AppendEntries with the same terms, indexes and entries as go-msgpack decodes, and the
// InstallSnapshot's size.
func TestTheWireReaderReadsWhatRaftSends(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, timeBuiltin := range []bool{false, true} {
		for round := range 200 {
			var reqs []any
			for range 1 + r.IntN(6) {
				switch r.IntN(6) {
				case 0:
					reqs = append(reqs, &raft.RequestVoteRequest{Term: randomNumber(r), LastLogIndex: randomNumber(r), Candidate: randomBytes(r), LeadershipTransfer: r.IntN(2) == 0})
				case 1:
					reqs = append(reqs, &raft.RequestPreVoteRequest{Term: randomNumber(r), LastLogTerm: randomNumber(r)})
				case 2:
					reqs = append(reqs, &raft.TimeoutNowRequest{RPCHeader: raft.RPCHeader{ID: randomBytes(r)}})
				case 3:
					reqs = append(reqs, &raft.InstallSnapshotRequest{Term: randomNumber(r), Size: int64(randomNumber(r) >> 1), Configuration: randomBytes(r), Peers: randomBytes(r)})
				default:
					reqs = append(reqs, randomAppend(r))
				}
			}
			const end = 0xee
			wire := append(raftEncode(t, timeBuiltin, reqs...), end)
			br := bufio.NewReaderSize(bytes.NewReader(wire), wireMaxKey) // a small buffer: values span refills
			w := &wireReader{br: br}
			for i, req := range reqs {
				kind, err := br.ReadByte()
				if err != nil {
					t.Fatal(err)
				}
				switch q := req.(type) {
				case *raft.AppendEntriesRequest:
					got, err := w.appendEntries()
					if kind != rpcAppendEntries || err != nil {
						t.Fatalf("round %d, request %d: kind %d, %v", round, i, kind, err)
					}
					// The same bytes through go-msgpack, as raft reads them.
					var viaCodec raft.AppendEntriesRequest
					if err := codec.NewDecoderBytes(raftEncode(t, timeBuiltin, q)[1:], &codec.MsgpackHandle{}).Decode(&viaCodec); err != nil {
						t.Fatal(err)
					}
					if !sameAppend(got, q) || !sameAppend(got, &viaCodec) {
						t.Fatalf("round %d, request %d: read %+v, sent %+v", round, i, got, q)
					}
				case *raft.InstallSnapshotRequest:
					size, err := w.snapshotSize()
					if kind != rpcInstallSnapshot || err != nil || size != q.Size {
						t.Fatalf("round %d, request %d: kind %d, size %d of %d, %v", round, i, kind, size, q.Size, err)
					}
				default:
					if err := w.skip(0); err != nil {
						t.Fatalf("round %d, request %d (%T): %v", round, i, req, err)
					}
				}
			}
			if b, err := br.ReadByte(); err != nil || b != end {
				t.Fatalf("round %d: after the requests read %#x, %v; want the end byte", round, b, err)
			}
		}
	}
}

// Every cut of a request is an error, never a panic or a request; so is every byte
// msgpack does not use, a negative number where an index goes, a length past wireMaxLen
// and a count of entries past wireMaxEntries.
func TestTheWireReaderRefusesWhatRaftDoesNotSend(t *testing.T) {
	req := &raft.AppendEntriesRequest{RPCHeader: raft.RPCHeader{ProtocolVersion: 3, ID: []byte("1"), Addr: []byte("127.0.0.1:7001")},
		Term: 300, PrevLogEntry: 70000, PrevLogTerm: 5e9, LeaderCommitIndex: 1 << 40,
		Entries: []*raft.Log{
			{Index: 70001, Term: 300, Type: raft.LogCommand, Data: bytes.Repeat([]byte{7}, 40), Extensions: []byte{1}, AppendedAt: time.Now()},
			{Index: 70002, Term: 300, Type: raft.LogNoop, Data: bytes.Repeat([]byte{8}, 300)},
		}}
	wire := raftEncode(t, false, req)
	for cut := 1; cut < len(wire); cut++ {
		w := &wireReader{br: bufio.NewReader(bytes.NewReader(wire[1:cut]))}
		if got, err := w.appendEntries(); err == nil {
			t.Fatalf("a request cut after %d of %d bytes read as %+v", cut, len(wire), got)
		}
	}
	for _, bad := range [][]byte{
		{0xc1},                                 // never used
		{0x81, 0xa4, 'T', 'e', 'r', 'm', 0xff}, // Term: -1
		{0x81, 0xa4, 'T', 'e', 'r', 'm', 0xd0, 0x80},                                                               // Term: int8 -128
		{0x81, 0xa7, 'E', 'n', 't', 'r', 'i', 'e', 's', 0xdd, 0xff, 0, 0, 0},                                       // an array of 4G entries
		{0x81, 0xa7, 'E', 'n', 't', 'r', 'i', 'e', 's', 0x91, 0x81, 0xa4, 'D', 'a', 't', 'a', 0xdb, 0x7f, 0, 0, 0}, // 2 GiB of data
		{0x81, 0xa4, 'T', 'e', 'r', 'm', 0xa1, 'x'},
		{0x81, 0xa7, 'E', 'n', 't', 'r', 'i', 'e', 's', 0xdd, 0, 0, 4, 1}, // 1025 entries                                                                // a string for a number
	} {
		w := &wireReader{br: bufio.NewReader(bytes.NewReader(bad))}
		if req, err := w.appendEntries(); err == nil {
			t.Fatalf("% x read as %+v", bad, req)
		}
	}
	// A count past wireMaxEntries is refused as it is read, before anything is allocated
	// for it (not when the entries fail to arrive).
	many := []byte{0x81, 0xa7, 'E', 'n', 't', 'r', 'i', 'e', 's', 0xdd, 0, 0, 4, 1} // 1025 entries
	w := &wireReader{br: bufio.NewReader(bytes.NewReader(many))}
	if _, err := w.appendEntries(); !errors.Is(err, errWire) {
		t.Fatalf("1025 entries: %v, want errWire", err)
	}
	deep := slices.Repeat([]byte{0x91}, 100) // arrays in arrays, past wireMaxDepth
	w = &wireReader{br: bufio.NewReader(bytes.NewReader(append(deep, 0)))}
	if err := w.skip(0); !errors.Is(err, errWire) {
		t.Fatalf("skipping %d nested arrays: %v", len(deep), err)
	}
	w = &wireReader{br: bufio.NewReader(bytes.NewReader(nil))}
	if err := w.skip(0); err != io.EOF {
		t.Fatalf("skipping nothing: %v", err)
	}
}

// BenchmarkReadAheadDecode compares go-msgpack's decode of a batch of 16 entries of 150
// bytes with the wire reader's.
func BenchmarkReadAheadDecode(b *testing.B) {
	req := &raft.AppendEntriesRequest{RPCHeader: raft.RPCHeader{ProtocolVersion: 3, ID: []byte("2"), Addr: []byte("127.0.0.1:7002")},
		Term: 3, PrevLogEntry: 100000, PrevLogTerm: 3, LeaderCommitIndex: 99990}
	for k := range 16 {
		req.Entries = append(req.Entries, &raft.Log{Index: 100001 + uint64(k), Term: 3, Type: raft.LogCommand, Data: make([]byte, 150), AppendedAt: time.Now()})
	}
	wire := raftEncode(b, false, req)[1:]
	b.Run("go-msgpack", func(b *testing.B) {
		rd := bytes.NewReader(wire)
		br := bufio.NewReader(rd)
		dec := codec.NewDecoder(br, &codec.MsgpackHandle{})
		for b.Loop() {
			rd.Reset(wire)
			br.Reset(rd)
			var got raft.AppendEntriesRequest
			if err := dec.Decode(&got); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("wire", func(b *testing.B) {
		rd := bytes.NewReader(wire)
		br := bufio.NewReader(rd)
		w := &wireReader{br: br}
		for b.Loop() {
			rd.Reset(wire)
			br.Reset(rd)
			if _, err := w.appendEntries(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// Every msgpack form skips to its last byte, those raft never sends too (extensions,
// floats, 16- and 32-bit containers, byte strings, a key longer than wireMaxKey), so
// the value after it is read where it starts.
func TestTheWireReaderSkipsEveryForm(t *testing.T) {
	long := append([]byte{0xd9, 40}, bytes.Repeat([]byte{'k'}, 40)...)
	for _, form := range [][]byte{
		{0x05}, {0xe0}, {0xc0}, {0xc2}, {0xc3},
		{0xcc, 1}, {0xcd, 1, 2}, {0xce, 1, 2, 3, 4}, {0xcf, 1, 2, 3, 4, 5, 6, 7, 8},
		{0xd0, 1}, {0xd1, 1, 2}, {0xd2, 1, 2, 3, 4}, {0xd3, 1, 2, 3, 4, 5, 6, 7, 8},
		{0xca, 1, 2, 3, 4}, {0xcb, 1, 2, 3, 4, 5, 6, 7, 8},
		{0xa2, 'a', 'b'}, {0xd9, 2, 'a', 'b'}, {0xda, 0, 2, 'a', 'b'}, {0xdb, 0, 0, 0, 2, 'a', 'b'},
		{0xc4, 2, 1, 2}, {0xc5, 0, 2, 1, 2}, {0xc6, 0, 0, 0, 2, 1, 2},
		{0xd4, 9, 1}, {0xd5, 9, 1, 2}, {0xd6, 9, 1, 2, 3, 4}, {0xd7, 9, 1, 2, 3, 4, 5, 6, 7, 8},
		append([]byte{0xd8, 9}, make([]byte, 16)...),
		{0xc7, 2, 9, 1, 2}, {0xc8, 0, 2, 9, 1, 2}, {0xc9, 0, 0, 0, 2, 9, 1, 2},
		{0x92, 0x01, 0xa1, 'x'}, {0xdc, 0, 2, 0x01, 0x02}, {0xdd, 0, 0, 0, 1, 0xc0},
		{0x81, 0x01, 0x02}, {0xde, 0, 1, 0x01, 0x02}, {0xdf, 0, 0, 0, 1, 0x01, 0x92, 0x01, 0x02},
		append(append([]byte{0x81}, long...), 0x07), // a map with a long key
	} {
		const end = 0xee
		w := &wireReader{br: bufio.NewReaderSize(bytes.NewReader(append(slices.Clone(form), end)), wireMaxKey)}
		if err := w.skip(0); err != nil {
			t.Fatalf("% x: %v", form, err)
		}
		if b, err := w.br.ReadByte(); err != nil || b != end {
			t.Fatalf("% x: then read %#x, %v; want the end byte", form, b, err)
		}
	}
	// A long key inside an AppendEntries is skipped with its value.
	req := append(append([]byte{0x82}, long...), 0x07, 0xa4, 'T', 'e', 'r', 'm', 0x09)
	w := &wireReader{br: bufio.NewReaderSize(bytes.NewReader(req), wireMaxKey)}
	if got, err := w.appendEntries(); err != nil || got.Term != 9 {
		t.Fatalf("read %+v, %v; want term 9", got, err)
	}
}

// A length is not allocated before its bytes arrive: a byte string that says 60 MiB and
// ends at once costs at most wireChunk.
func TestTheWireReaderAllocatesAsBytesArrive(t *testing.T) {
	bad := []byte{0x81, 0xa7, 'E', 'n', 't', 'r', 'i', 'e', 's', 0x91, 0x81, 0xa4, 'D', 'a', 't', 'a', 0xdb, 0x03, 0xc0, 0, 0, 1, 2, 3}
	allocs := testing.Benchmark(func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			w := &wireReader{br: bufio.NewReader(bytes.NewReader(bad))}
			if _, err := w.appendEntries(); err == nil {
				b.Fatal("a cut byte string read")
			}
		}
	})
	if per := allocs.AllocedBytesPerOp(); per > 2*wireChunk+(64<<10) {
		t.Fatalf("a 60 MiB byte string cut after 4 bytes allocated %d bytes", per)
	}
}

// decodeRequests hands each AppendEntries to received and, at the first request it
// does not understand, stops (nil: the read-ahead passes the rest on undecoded).
func TestDecodingStopsAtARequestNotUnderstood(t *testing.T) {
	var stream []byte
	stream = append(stream, raftEncode(t, false, appendReq(2, 0, 2, 2))...)
	stream = append(stream, rpcAppendEntries, 0x81, 0xa4, 'T', 'e', 'r', 'm', 0xc1) // a type byte msgpack never uses
	stream = append(stream, raftEncode(t, false, appendReq(2, 2, 2))...)
	recv := &received{}
	if err := decodeRequests(bufio.NewReader(bytes.NewReader(stream)), recv); err != nil {
		t.Fatalf("decoding ended with %v, want nil", err)
	}
	if recv.span(1, 2, 2) == nil || recv.span(1, 3, 2) != nil {
		t.Fatalf("received %d entries after %d, want the first request's 2 only", len(recv.entries), recv.base)
	}
}

// FuzzWireReader feeds arbitrary bytes to the read-ahead's decoding: it never panics, and
// it ends (the input is finite and every value read consumes a byte).
func FuzzWireReader(f *testing.F) {
	entry := &raft.Log{Index: 1, Term: 2, Type: raft.LogCommand, Data: []byte("abc"), Extensions: []byte{1}, AppendedAt: time.Unix(1, 2)}
	small := &raft.AppendEntriesRequest{RPCHeader: raft.RPCHeader{ID: []byte("1")}, Term: 2, LeaderCommitIndex: 300, Entries: []*raft.Log{entry}}
	f.Add(raftEncode(f, false, small, &raft.RequestVoteRequest{Term: 3}))
	f.Add(raftEncode(f, true, small, &raft.InstallSnapshotRequest{Term: 3, Size: 4}))
	f.Add(raftEncode(f, false, &raft.TimeoutNowRequest{}, appendReq(2, 0, 2, 2)))
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = decodeRequests(bufio.NewReader(bytes.NewReader(b)), &received{})
	})
}
