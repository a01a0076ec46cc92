package jute

import (
	"bytes"
	"testing"
)

// AppendReply must write exactly what AppendFrame writes for a ReplyHeader and body,
// after what dst holds already and whatever its capacity.
func TestAppendReplyIsAppendFrameOfItsHeader(t *testing.T) {
	stat := &Stat{Czxid: 1, Mzxid: 2, Ctime: 3, Mtime: 4, Version: 5, Cversion: -6, Aversion: 7,
		EphemeralOwner: 8, DataLength: 9, NumChildren: 10, Pzxid: 11}
	for _, c := range []struct {
		name string
		code Code
		body Record
	}{
		{"no body", ErrNoNode, nil},
		{"stat", 0, &SetDataResponse{Stat: *stat}},
		{"data", 0, &GetDataResponse{Data: bytes.Repeat([]byte{0xab}, 300), Stat: *stat}},
		{"notification", 0, &WatcherEvent{Type: 3, State: 3, Path: "/a/b"}},
	} {
		for _, dst := range [][]byte{nil, []byte("prefix"), make([]byte, 2, 512)} {
			want := AppendFrame(bytes.Clone(dst), &ReplyHeader{Xid: -7, Zxid: 0x1_0000_0002, Err: int32(c.code)}, c.body)
			got := AppendReply(bytes.Clone(dst), -7, 0x1_0000_0002, c.code, c.body)
			if !bytes.Equal(got, want) {
				t.Errorf("%s after %d bytes:\n got % x\nwant % x", c.name, len(dst), got, want)
			}
		}
	}
}
