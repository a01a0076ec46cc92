package jute

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"
)

// readHexLines reads "name hex" lines, as the Java programs in testdata/golden print them.
func readHexLines(t testing.TB, path string) map[string][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]byte{}
	s := bufio.NewScanner(f)
	s.Buffer(nil, 1<<20)
	for s.Scan() {
		name, h, ok := strings.Cut(s.Text(), " ")
		if !ok {
			t.Fatalf("%s: bad line %q", path, s.Text())
		}
		b, err := hex.DecodeString(h)
		if err != nil {
			t.Fatalf("%s: %s: %v", path, name, err)
		}
		out[name] = b
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// records is a sequence of records encoded back to back, for golden bytes that are more
// than one record (a record and the readOnly flag, or a whole frame).
type records []Record

func (rs records) Encode(e *Encoder) {
	for _, r := range rs {
		r.Encode(e)
	}
}

func (rs records) Decode(d *Decoder) {
	for _, r := range rs {
		r.Decode(d)
	}
}

type frameOf struct{ rs records }

func (f *frameOf) Encode(e *Encoder) { e.Buf = AppendFrame(e.Buf, f.rs...) }
func (f *frameOf) Decode(d *Decoder) {
	if n := d.Int(); d.Err == nil && int(n) != d.Remaining() {
		d.Err = fmt.Errorf("frame length %d, %d bytes follow", n, d.Remaining())
	}
	f.rs.Decode(d)
}

// TestGolden compares zkraft's encodings with the bytes Apache ZooKeeper 3.8's Java Jute
// writes for the same values (testdata/golden/Golden.java prints them; golden.txt is its
// output, and Golden.java says how to regenerate it), byte by byte, and decodes ZooKeeper's
// bytes back into the same values.
func TestGolden(t *testing.T) {
	golden := readHexLines(t, "testdata/golden/golden.txt")
	passwd := testPasswd()
	acl := testACL()
	stat := testStat()
	connect := ConnectRequest{ProtocolVersion: 0, LastZxidSeen: 0x200000005, TimeOut: 30000,
		SessionId: 0x0123456789abcdef, Passwd: passwd}
	cases := map[string]struct {
		want  Record // what zkraft encodes
		fresh Record // an empty value of the same shape to decode into
	}{
		"ConnectRequest":          {&Connect{ConnectRequest: connect}, &Connect{}},
		"ConnectRequestReadOnly":  {&Connect{ConnectRequest: connect, HasReadOnly: true, ReadOnly: true}, &Connect{}},
		"ConnectResponseReadOnly": {&Connected{ConnectResponse: ConnectResponse{TimeOut: 4000, SessionId: 0x0123456789abcdef, Passwd: passwd}, HasReadOnly: true}, &Connected{}},
		"CreateRequestFrame": {
			&frameOf{records{&RequestHeader{Xid: 7, Type: OpCreate}, &CreateRequest{Path: "/app/node", Data: []byte("hello"), Acl: acl, Flags: FlagEphemeralSequential}}},
			&frameOf{records{&RequestHeader{}, &CreateRequest{}}},
		},
		"CreateRequestNullData": {&CreateRequest{Path: "/n", Acl: acl[:1]}, &CreateRequest{}},
		"Stat":                  {&stat, &Stat{}},
		"ReplyHeader":           {&ReplyHeader{Xid: -1, Zxid: 0x300000007, Err: int32(ErrNoNode)}, &ReplyHeader{}},
		"WatcherEvent":          {&WatcherEvent{Type: EventNodeChildrenChanged, State: StateSyncConnected, Path: "/app"}, &WatcherEvent{}},
		"SetWatches2": {&SetWatches2{RelativeZxid: 9, DataWatches: []string{"/a", "/b"}, ExistWatches: []string{},
			ChildWatches: []string{"/c"}, PersistentWatches: []string{}, PersistentRecursiveWatches: []string{"/r"}}, &SetWatches2{}},
		"GetChildrenResponse": {&GetChildrenResponse{Children: []string{"x", "yy"}}, &GetChildrenResponse{}},
		"MultiRequest": {&MultiRequest{Ops: []MultiOp{
			{OpCreate, &CreateRequest{Path: "/m/a", Data: []byte("a"), Acl: acl[:1], Flags: FlagPersistent}},
			{OpCreateContainer, &CreateRequest{Path: "/m/c", Data: []byte{}, Acl: acl[:1], Flags: FlagContainer}},
			{OpCreateTTL, &CreateTTLRequest{Path: "/m/t", Acl: acl[:1], Flags: FlagPersistentWithTTL, Ttl: 60000}},
			{OpDelete, &DeleteRequest{Path: "/m/d", Version: 2}},
			{OpSetData, &SetDataRequest{Path: "/m/s", Data: []byte("new"), Version: -1}},
			{OpCheck, &CheckVersionRequest{Path: "/m", Version: 5}},
		}}, &MultiRequest{}},
		"MultiReadRequest": {&MultiRequest{Ops: []MultiOp{
			{OpGetData, &GetDataRequest{Path: "/m/a"}},
			{OpGetChildren, &GetChildrenRequest{Path: "/m"}},
		}}, &MultiRequest{}},
		"MultiResponse": {&MultiResponse{Results: []MultiResult{
			{Type: OpCreate, Resp: &CreateResponse{Path: "/m/a"}},
			{Type: OpCreate2, Resp: &Create2Response{Path: "/m/c", Stat: stat}},
			{Type: OpDelete},
			{Type: OpSetData, Resp: &SetDataResponse{Stat: stat}},
			{Type: OpCheck},
			{Type: OpError, Err: ErrNoNode},
		}}, &MultiResponse{}},
		"MultiReadResponse": {&MultiResponse{Results: []MultiResult{
			{Type: OpGetData, Resp: &GetDataResponse{Data: []byte("d"), Stat: stat}},
			{Type: OpGetChildren, Resp: &GetChildrenResponse{Children: []string{"a", "b"}}},
			{Type: OpError, Err: ErrNoNode},
		}}, &MultiResponse{}},
	}
	for name, tt := range cases {
		t.Run(name, func(t *testing.T) {
			want, ok := golden[name]
			if !ok {
				t.Fatalf("golden.txt has no %s", name)
			}
			if got := Marshal(tt.want); !bytes.Equal(got, want) {
				t.Fatalf("zkraft differs from ZooKeeper at byte %d\nzkraft    %x\nzookeeper %x", firstDiff(got, want), got, want)
			}
			if err := Unmarshal(want, tt.fresh); err != nil {
				t.Fatalf("decoding ZooKeeper's bytes: %v", err)
			}
			if !reflect.DeepEqual(tt.fresh, tt.want) {
				t.Fatalf("decoded\n%#v\nwant\n%#v", tt.fresh, tt.want)
			}
		})
	}
	for name := range golden {
		if _, ok := cases[name]; !ok {
			t.Errorf("golden.txt has %s, which no case checks", name)
		}
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// splitFrames cuts a captured stream into frame payloads.
func splitFrames(t testing.TB, stream []byte) [][]byte {
	t.Helper()
	var out [][]byte
	r := bytes.NewReader(stream)
	for {
		f, err := ReadFrame(r, nil, DefaultMaxBuffer)
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("frame %d: %v", len(out), err)
		}
		out = append(out, f)
	}
}

// TestCapturedSession decodes, frame by frame, both directions of a real session between
// ZooKeeper 3.8's Java client and server (testdata/golden/Capture.java recorded it), and
// requires every frame to decode completely and to re-encode to the same bytes.
func TestCapturedSession(t *testing.T) {
	session := readHexLines(t, "testdata/golden/session.txt")
	client, server := splitFrames(t, session["client"]), splitFrames(t, session["server"])
	if len(client) < 20 || len(server) < 20 {
		t.Fatalf("capture too short: %d client and %d server frames", len(client), len(server))
	}

	var conn Connect
	if err := Unmarshal(client[0], &conn); err != nil || !conn.HasReadOnly || len(conn.Passwd) != 16 || len(client[0]) != 45 {
		t.Fatalf("connect request: %+v, %v", conn, err)
	}
	var acc Connected
	if err := Unmarshal(server[0], &acc); err != nil || !acc.HasReadOnly || acc.SessionId == 0 || len(acc.Passwd) != 16 {
		t.Fatalf("connect response: %+v, %v", acc, err)
	}

	opOf := map[int32]int32{XidPing: OpPing, XidAuth: OpAuth}
	seen := map[int32]bool{}
	for i, f := range client[1:] {
		d := NewDecoder(f)
		var h RequestHeader
		h.Decode(d)
		body, known := requestFor(h.Type)
		if d.Err != nil || !known {
			t.Fatalf("client frame %d: header %+v, %v", i+1, h, d.Err)
		}
		opOf[h.Xid] = h.Type
		seen[h.Type] = true
		checkBody(t, fmt.Sprintf("client frame %d (op %d)", i+1, h.Type), f, d, body)
	}
	for _, op := range []int32{OpAuth, OpCreate, OpCreate2, OpCreateContainer, OpCreateTTL, OpExists, OpGetData,
		OpGetChildren, OpGetChildren2, OpSetData, OpGetACL, OpSetACL, OpSync, OpMulti, OpMultiRead, OpDelete,
		OpGetAllChildrenNumber, OpGetEphemerals, OpAddWatch, OpRemoveWatches, OpWhoAmI, OpPing, OpCloseSession} {
		if !seen[op] {
			t.Errorf("the capture has no op %d", op)
		}
	}

	for i, f := range server[1:] {
		d := NewDecoder(f)
		var h ReplyHeader
		h.Decode(d)
		if d.Err != nil {
			t.Fatalf("server frame %d: %v", i+1, d.Err)
		}
		var body Record
		switch {
		case h.Xid == XidNotification:
			body = &WatcherEvent{}
		case h.Err == 0 || d.Remaining() > 0:
			op, ok := opOf[h.Xid]
			if !ok {
				t.Fatalf("server frame %d answers unknown xid %d", i+1, h.Xid)
			}
			body = responseFor(op)
		}
		checkBody(t, fmt.Sprintf("server frame %d (xid %d)", i+1, h.Xid), f, d, body)
	}
}

// checkBody decodes the rest of frame f (d is past the header) into body and requires
// it to use every byte and to re-encode to the same bytes.
func checkBody(t *testing.T, what string, f []byte, d *Decoder, body Record) {
	t.Helper()
	start := len(f) - d.Remaining()
	if body != nil {
		body.Decode(d)
	}
	if d.Err != nil || d.Remaining() != 0 {
		t.Fatalf("%s: %T: %v, %d bytes left of %x", what, body, d.Err, d.Remaining(), f)
	}
	if body != nil {
		if re := Marshal(body); !bytes.Equal(re, f[start:]) {
			t.Fatalf("%s: re-encoded %x, captured %x", what, re, f[start:])
		}
	}
}
