package jute

import (
	"encoding/binary"
	"errors"
	"runtime"
	"testing"
)

// allocBytes reports the bytes f allocates on average over a few runs.
func allocBytes(f func()) uint64 {
	const runs = 20
	f() // warm up
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := 0; i < runs; i++ {
		f()
	}
	runtime.ReadMemStats(&after)
	return (after.TotalAlloc - before.TotalAlloc) / runs
}

func be32(v int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(v)) }

func cat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

func TestBounds(t *testing.T) {
	tests := []struct {
		name string
		r    func() Record
		b    []byte
		want error
	}{
		{"string longer than frame", func() Record { return &SyncRequest{} }, cat(be32(5), []byte("/ab")), ErrLength},
		{"string of 2^31-1", func() Record { return &SyncRequest{} }, cat(be32(0x7fffffff), []byte("/ab")), ErrLength},
		{"string length -2", func() Record { return &SyncRequest{} }, be32(-2), ErrLength},
		{"string length min int32", func() Record { return &SyncRequest{} }, be32(-0x80000000), ErrLength},
		{"buffer longer than frame", func() Record { return &GetSASLRequest{} }, cat(be32(1000), make([]byte, 999)), ErrLength},
		{"buffer of 2^31-1", func() Record { return &GetSASLRequest{} }, be32(0x7fffffff), ErrLength},
		{"buffer length -2", func() Record { return &GetSASLRequest{} }, be32(-2), ErrLength},
		{"vector count too large", func() Record { return &GetChildrenResponse{} }, cat(be32(0x7fffffff), make([]byte, 64)), ErrLength},
		{"vector count beyond frame", func() Record { return &GetChildrenResponse{} }, cat(be32(3), be32(0), be32(0)), ErrLength},
		// ACLs take at least 12 bytes each: 2 of them cannot fit in 20.
		{"acl count beyond frame", func() Record { return &GetACLResponse{} }, cat(be32(2), make([]byte, 20)), ErrLength},
		{"acl count too large", func() Record { return &SetACLRequest{} }, cat(be32(1), []byte("/"), be32(0x10000000), make([]byte, 64)), ErrLength},
		{"truncated int", func() Record { return &ErrorResponse{} }, []byte{0, 0, 0}, ErrShort},
		{"truncated long", func() Record { return &ReplyHeader{} }, cat(be32(1), []byte{0, 0, 0, 0, 0, 0, 0}), ErrShort},
		{"truncated stat", func() Record { return &ExistsResponse{} }, make([]byte, 67), ErrShort},
		{"truncated bool", func() Record { return &GetDataRequest{} }, be32(0), ErrShort},
		{"empty", func() Record { return &RequestHeader{} }, nil, ErrShort},
		{"multi op count by repetition, cut", func() Record { return &MultiRequest{} },
			cat(Marshal(&MultiHeader{Type: OpCheck, Err: -1}, &CheckVersionRequest{Path: "/"}), []byte{0, 0}), ErrShort},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Unmarshal(tt.b, tt.r())
			if !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
			// Failing costs a few small allocations (the error, the record), never the
			// claimed length.
			if n := allocBytes(func() { Unmarshal(tt.b, tt.r()) }); n > 1024 {
				t.Fatalf("failing decode allocated %d bytes", n)
			}
		})
	}
}

// A vector count below -1 reads as an empty vector, not null and not an error, as
// ZooKeeper's BinaryInputArchive.startVector reads it: its index of a negative count is
// done at once.
func TestNegativeVectorCountIsEmpty(t *testing.T) {
	for _, n := range []int32{-2, -0x80000000} {
		var r SetACLRequest
		if err := Unmarshal(cat(be32(1), []byte("/"), be32(n), be32(3)), &r); err != nil {
			t.Fatalf("count %d: %v", n, err)
		}
		if r.Acl == nil || len(r.Acl) != 0 || r.Path != "/" || r.Version != 3 {
			t.Fatalf("count %d: %+v, want an empty ACL list", n, r)
		}
	}
	var w SetWatches
	if err := Unmarshal(cat(make([]byte, 8), be32(-2), be32(-1), be32(0)), &w); err != nil {
		t.Fatal(err)
	}
	if w.DataWatches == nil || len(w.DataWatches) != 0 || w.ExistWatches != nil || w.ChildWatches == nil {
		t.Fatalf("%+v: want empty, null, empty", w)
	}
}

// A failure sticks: every later read returns zero and leaves Err alone.
func TestDecoderErrorSticks(t *testing.T) {
	d := NewDecoder(cat(be32(-5), be32(7), be32(7)))
	if s := d.String(); s != "" || !errors.Is(d.Err, ErrLength) {
		t.Fatalf("String = %q, %v", s, d.Err)
	}
	first := d.Err
	if d.Int() != 0 || d.Long() != 0 || d.Bool() || d.Buffer() != nil || d.String() != "" || d.VectorLen(4) != -1 {
		t.Fatal("reads after a failure returned data")
	}
	if d.Err != first {
		t.Fatalf("Err changed to %v", d.Err)
	}
}

// A decoded buffer is a copy: reusing the frame buffer must not change it.
func TestBufferIsCopied(t *testing.T) {
	frame := Marshal(&GetSASLRequest{Token: []byte("abc")})
	var r GetSASLRequest
	if err := Unmarshal(frame, &r); err != nil {
		t.Fatal(err)
	}
	for i := range frame {
		frame[i] = 'x'
	}
	if string(r.Token) != "abc" {
		t.Fatalf("token changed to %q", r.Token)
	}
}
