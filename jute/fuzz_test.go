package jute

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"reflect"
	"runtime"
	"testing"
)

// allocLimit is what decoding n bytes may allocate: a small factor of the input (a
// vector of empty strings turns 4 bytes into a 16-byte string header; a multi op into a
// record, a MultiOp and slice growth) plus a constant for the decoder and the error.
func allocLimit(n int) uint64 { return 16*uint64(n) + 4096 }

// checkAllocs fails if f allocates more than allocLimit(n). The count is the whole
// process's (runtime.MemStats), so a goroutine of the test binary that allocates while f
// runs (the race detector's, the testing package's) adds to it: f is run up to three
// times and passes if one run stays under the limit. f must do the same work each time.
func checkAllocs(t *testing.T, n int, f func()) {
	t.Helper()
	least := uint64(math.MaxUint64)
	for range 3 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		if least = min(least, after.TotalAlloc-before.TotalAlloc); least <= allocLimit(n) {
			return
		}
	}
	t.Fatalf("decoding %d bytes allocated %d (the least of three runs)", n, least)
}

// requestSeeds are request frame payloads (header and body, no length prefix): one
// per op, built from records, plus every client frame of the captured Java session.
func requestSeeds(t testing.TB) [][]byte {
	bodies := map[int32]Record{
		OpCreate:               &CreateRequest{Path: "/app/e-", Data: []byte("hello"), Acl: testACL(), Flags: FlagEphemeralSequential},
		OpCreate2:              &CreateRequest{Path: "/app/x", Data: nil, Acl: testACL()[:1]},
		OpCreateContainer:      &CreateRequest{Path: "/c", Data: []byte{}, Acl: testACL(), Flags: FlagContainer},
		OpCreateTTL:            &CreateTTLRequest{Path: "/t", Data: []byte("t"), Acl: testACL(), Flags: FlagPersistentWithTTL, Ttl: 1000},
		OpDelete:               &DeleteRequest{Path: "/app", Version: -1},
		OpExists:               &ExistsRequest{Path: "/app", Watch: true},
		OpGetData:              &GetDataRequest{Path: "/app", Watch: true},
		OpSetData:              &SetDataRequest{Path: "/app", Data: []byte("x"), Version: 3},
		OpGetACL:               &GetACLRequest{Path: "/app"},
		OpSetACL:               &SetACLRequest{Path: "/app", Acl: testACL(), Version: -1},
		OpGetChildren:          &GetChildrenRequest{Path: "/", Watch: true},
		OpGetChildren2:         &GetChildren2Request{Path: "/"},
		OpSync:                 &SyncRequest{Path: "/app"},
		OpCheck:                &CheckVersionRequest{Path: "/app", Version: 1},
		OpMulti:                &MultiRequest{Ops: everyMultiOp()[:7]},
		OpMultiRead:            &MultiRequest{Ops: everyMultiOp()[7:]},
		OpReconfig:             &ReconfigRequest{JoiningServers: "server.4=h:2888:3888;2181", LeavingServers: "2", CurConfigId: -1},
		OpCheckWatches:         &CheckWatchesRequest{Path: "/app", Type: WatcherData},
		OpRemoveWatches:        &RemoveWatchesRequest{Path: "/app", Type: WatcherAny},
		OpAuth:                 &AuthPacket{Type: 0, Scheme: "digest", Auth: []byte("bob:secret")},
		OpSetWatches:           &SetWatches{RelativeZxid: 5, DataWatches: []string{"/a"}, ExistWatches: []string{}, ChildWatches: []string{"/"}},
		OpSetWatches2:          &SetWatches2{RelativeZxid: 5, DataWatches: []string{"/a"}, PersistentRecursiveWatches: []string{"/r"}},
		OpSASL:                 &GetSASLRequest{Token: []byte{1, 2, 3}},
		OpGetEphemerals:        &GetEphemeralsRequest{PrefixPath: "/app"},
		OpGetAllChildrenNumber: &GetAllChildrenNumberRequest{Path: "/"},
		OpAddWatch:             &AddWatchRequest{Path: "/app", Mode: AddWatchPersistentRecursive},
		OpPing:                 nil,
		OpWhoAmI:               nil,
		OpCloseSession:         nil,
	}
	var seeds [][]byte
	xid := int32(1)
	for op, body := range bodies {
		h := &RequestHeader{Xid: xid, Type: op}
		xid++
		if body == nil {
			seeds = append(seeds, Marshal(h))
		} else {
			seeds = append(seeds, Marshal(h, body))
		}
	}
	session := readHexLines(t, "testdata/golden/session.txt")
	seeds = append(seeds, splitFrames(t, session["client"])[1:]...)
	return seeds
}

// FuzzDecodeRequest decodes a request header and then the record its op names, as the
// server does with every frame after the handshake. It must never panic, never allocate
// more than a small multiple of the input, and what it accepts must re-encode to bytes
// that decode to the same value.
func FuzzDecodeRequest(f *testing.F) {
	for _, s := range requestSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var h RequestHeader
		var body Record
		var err error
		checkAllocs(t, len(data), func() {
			d := NewDecoder(data)
			h.Decode(d)
			if d.Err != nil {
				err = d.Err
				return
			}
			body, _ = requestFor(h.Type)
			if body != nil {
				body.Decode(d)
			}
			err = d.Err
			if err == nil && d.Remaining() != 0 {
				err = errors.New("trailing bytes")
			}
		})
		if err != nil || body == nil {
			return
		}
		again := newLike(body)
		if err := Unmarshal(Marshal(body), again); err != nil {
			t.Fatalf("op %d: re-encoded record does not decode: %v", h.Type, err)
		}
		if !reflect.DeepEqual(normalize(again), normalize(body)) {
			t.Fatalf("op %d: round trip changed\n%#v\n%#v", h.Type, again, body)
		}
	})
}

// normalize makes a decoded MultiRequest comparable: Decode leaves a nil Ops for no ops.
func normalize(r Record) Record {
	if m, ok := r.(*MultiRequest); ok && len(m.Ops) == 0 {
		return &MultiRequest{}
	}
	return r
}

// FuzzConnect decodes the handshake both ways (request and response): 44 and 45 byte
// requests from real clients seed it.
func FuzzConnect(f *testing.F) {
	session := readHexLines(f, "testdata/golden/session.txt")
	f.Add(splitFrames(f, session["client"])[0])
	f.Add(splitFrames(f, session["server"])[0])
	req := ConnectRequest{LastZxidSeen: 0x100000002, TimeOut: 30000, SessionId: 0x1000001, Passwd: testPasswd()}
	f.Add(Marshal(&Connect{ConnectRequest: req}))
	f.Add(Marshal(&Connect{ConnectRequest: req, HasReadOnly: true, ReadOnly: true}))
	f.Add(Marshal(&Connect{ConnectRequest: ConnectRequest{TimeOut: 4000}}))
	f.Fuzz(func(t *testing.T, data []byte) {
		var c Connect
		var resp Connected
		var errReq, errResp error
		checkAllocs(t, len(data), func() {
			errReq = Unmarshal(data, &c)
			errResp = Unmarshal(data, &resp)
		})
		if errReq == nil {
			if n := len(data); n != 44-16+len(c.Passwd) && n != 45-16+len(c.Passwd) {
				t.Fatalf("accepted a %d-byte connect with a %d-byte password", n, len(c.Passwd))
			}
			if c.HasReadOnly == (len(data) == 28+len(c.Passwd)) {
				t.Fatalf("HasReadOnly=%v for %d bytes", c.HasReadOnly, len(data))
			}
			var again Connect
			if err := Unmarshal(Marshal(&c), &again); err != nil || !reflect.DeepEqual(again, c) {
				t.Fatalf("round trip: %+v, %v; want %+v", again, err, c)
			}
		}
		if errResp == nil {
			var again Connected
			if err := Unmarshal(Marshal(&resp), &again); err != nil || !reflect.DeepEqual(again, resp) {
				t.Fatalf("round trip: %+v, %v; want %+v", again, err, resp)
			}
		}
	})
}

// chunkReader returns the bytes of data in chunks whose sizes cycle through sizes, so a
// frame arrives split at every kind of boundary, as TCP may deliver it.
type chunkReader struct {
	data  []byte
	sizes []byte
	i     int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := 1
	if len(r.sizes) > 0 {
		n = int(r.sizes[r.i%len(r.sizes)])%17 + 1
		r.i++
	}
	n = min(n, len(p), len(r.data))
	copy(p, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}

// FuzzReadFrame reads frames, delivered in chunks, until an error: every frame must be
// within the limit and the frames must add up to the bytes that were read.
func FuzzReadFrame(f *testing.F) {
	session := readHexLines(f, "testdata/golden/session.txt")
	f.Add(session["client"][:300], []byte{1, 2, 3})
	f.Add(session["server"][:200], []byte{16})
	f.Add(AppendFrame(AppendFrame(nil, &RequestHeader{Xid: XidPing, Type: OpPing}), &SyncRequest{Path: "/"}), []byte{0})
	f.Add([]byte{0, 0, 1, 0, 1, 2}, []byte{5})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff}, []byte{})
	f.Add([]byte{0x7f, 0, 0, 0, 1}, []byte{2})
	const max = 512
	f.Fuzz(func(t *testing.T, data, sizes []byte) {
		checkAllocs(t, max, func() {
			r := &chunkReader{data: data, sizes: sizes} // each run reads the frames afresh
			var buf []byte
			used := 0
			for {
				frame, err := ReadFrame(r, buf, max)
				if err != nil {
					var tooLarge *ErrFrameTooLarge
					if err != io.EOF && err != io.ErrUnexpectedEOF && !errors.As(err, &tooLarge) {
						t.Fatalf("unexpected error %v", err)
					}
					return
				}
				if len(frame) > max {
					t.Fatalf("frame of %d bytes over max %d", len(frame), max)
				}
				if n := int(binary.BigEndian.Uint32(data[used:])); n != len(frame) ||
					!bytes.Equal(frame, data[used+4:used+4+n]) {
					t.Fatalf("frame at %d: %d bytes, prefix says %d", used, len(frame), n)
				}
				used += 4 + len(frame)
				buf = frame
			}
		})
	})
}
