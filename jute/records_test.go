package jute

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"reflect"
	"sort"
	"testing"
	"testing/iotest"
)

// allRecords lists one value of every generated record type; TestAllRecordsListed keeps
// it complete as zookeeper.jute grows.
func allRecords() []Record {
	return []Record{
		&Id{}, &ACL{}, &Stat{}, &ClientInfo{}, &ConnectRequest{}, &ConnectResponse{},
		&SetWatches{}, &SetWatches2{}, &RequestHeader{}, &MultiHeader{}, &AuthPacket{},
		&ReplyHeader{}, &GetDataRequest{}, &SetDataRequest{}, &ReconfigRequest{},
		&SetDataResponse{}, &GetSASLRequest{}, &SetSASLResponse{}, &CreateRequest{},
		&CreateTTLRequest{}, &DeleteRequest{}, &GetChildrenRequest{},
		&GetAllChildrenNumberRequest{}, &GetChildren2Request{}, &CheckVersionRequest{},
		&SyncRequest{}, &SyncResponse{}, &GetACLRequest{}, &SetACLRequest{},
		&SetACLResponse{}, &AddWatchRequest{}, &WatcherEvent{}, &ErrorResponse{},
		&CreateResponse{}, &Create2Response{}, &ExistsRequest{}, &ExistsResponse{},
		&GetDataResponse{}, &GetChildrenResponse{}, &GetAllChildrenNumberResponse{},
		&GetChildren2Response{}, &GetACLResponse{}, &CheckWatchesRequest{},
		&RemoveWatchesRequest{}, &GetEphemeralsRequest{}, &GetEphemeralsResponse{},
		&WhoAmIResponse{},
	}
}

func TestAllRecordsListed(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "records_gen.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var generated []string
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.TYPE {
			for _, s := range g.Specs {
				generated = append(generated, s.(*ast.TypeSpec).Name.Name)
			}
		}
	}
	var listed []string
	for _, r := range allRecords() {
		listed = append(listed, reflect.TypeOf(r).Elem().Name())
	}
	sort.Strings(generated)
	sort.Strings(listed)
	if !reflect.DeepEqual(generated, listed) {
		t.Fatalf("allRecords is out of date:\ngenerated %v\nlisted    %v", generated, listed)
	}
}

// fill sets every field of v, recursively, to a distinct non-zero value: negative and
// positive numbers, multi-byte UTF-8, buffers holding 0x00 and 0xff, two-element vectors.
func fill(v reflect.Value, n *int) {
	*n++
	switch v.Kind() {
	case reflect.Int32:
		x := int64(*n) * 100003
		if *n%2 == 0 {
			x = -x
		}
		v.SetInt(x)
	case reflect.Int64:
		x := int64(*n)<<40 | int64(*n)
		if *n%2 == 1 {
			x = -x
		}
		v.SetInt(x)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.String:
		v.SetString(fmt.Sprintf("/zk/é%d", *n))
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			v.SetBytes([]byte{0, 0xff, byte(*n), '/'})
			return
		}
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := 0; i < s.Len(); i++ {
			fill(s.Index(i), n)
		}
		v.Set(s)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			fill(v.Field(i), n)
		}
	default:
		panic("fill: unexpected kind " + v.Kind().String())
	}
}

// emptySlices sets every slice field of v, recursively, to an empty, non-nil slice.
func emptySlices(v reflect.Value) {
	switch v.Kind() {
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 0, 0))
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			emptySlices(v.Field(i))
		}
	}
}

// checkNonZero fails if any field of v, recursively, is its zero value.
func checkNonZero(t *testing.T, v reflect.Value, path string) {
	t.Helper()
	if v.IsZero() {
		t.Errorf("%s is zero: fill missed it", path)
	}
	switch v.Kind() {
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			checkNonZero(t, v.Field(i), path+"."+v.Type().Field(i).Name)
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() != reflect.Uint8 {
			for i := 0; i < v.Len(); i++ {
				checkNonZero(t, v.Index(i), fmt.Sprintf("%s[%d]", path, i))
			}
		}
	}
}

func newLike(r Record) Record { return reflect.New(reflect.TypeOf(r).Elem()).Interface().(Record) }

// roundTrip encodes r, decodes the bytes into a fresh value of r's type, requires the two
// to be deeply equal (so nil and empty slices stay apart), and returns the bytes.
func roundTrip(t *testing.T, r Record) []byte {
	t.Helper()
	b := Marshal(r)
	got := newLike(r)
	if err := Unmarshal(b, got); err != nil {
		t.Fatalf("%T: Unmarshal(%x): %v", r, b, err)
	}
	if !reflect.DeepEqual(got, r) {
		t.Fatalf("%T: round trip changed the record\n got %#v\nwant %#v", r, got, r)
	}
	if again := Marshal(got); !bytes.Equal(again, b) {
		t.Fatalf("%T: re-encoding differs\n got %x\nwant %x", r, again, b)
	}
	return b
}

// checkTruncations requires every strict prefix of a record's encoding to fail to
// decode, and one trailing byte to be refused by Unmarshal.
func checkTruncations(t *testing.T, r Record, b []byte) {
	t.Helper()
	for i := 0; i < len(b); i++ {
		if err := Unmarshal(b[:i], newLike(r)); err == nil {
			t.Fatalf("%T: %d of %d bytes decoded without error", r, i, len(b))
		}
	}
	if err := Unmarshal(append(bytes.Clone(b), 0), newLike(r)); err == nil {
		t.Fatalf("%T: a trailing byte was accepted", r)
	}
}

func TestRecordsRoundTrip(t *testing.T) {
	for _, proto := range allRecords() {
		name := reflect.TypeOf(proto).Elem().Name()
		t.Run(name, func(t *testing.T) {
			full := newLike(proto)
			n := 0
			fill(reflect.ValueOf(full).Elem(), &n)
			checkNonZero(t, reflect.ValueOf(full).Elem(), name)
			b := roundTrip(t, full)
			checkTruncations(t, full, b)

			// The zero value: nil buffers and vectors are written as -1 and read back as nil.
			zero := newLike(proto)
			roundTrip(t, zero)

			// Empty, non-nil buffers and vectors are written as 0 and read back empty.
			empty := newLike(proto)
			emptySlices(reflect.ValueOf(empty).Elem())
			roundTrip(t, empty)
		})
	}
}

func TestNilAndEmptyEncodings(t *testing.T) {
	tests := []struct {
		name string
		r    Record
		want string
	}{
		{"nil buffer", &GetSASLRequest{}, "ffffffff"},
		{"empty buffer", &GetSASLRequest{Token: []byte{}}, "00000000"},
		{"nil vector", &GetChildrenResponse{}, "ffffffff"},
		{"empty vector", &GetChildrenResponse{Children: []string{}}, "00000000"},
		{"empty string", &SyncRequest{}, "00000000"},
		{"bool", &GetDataRequest{Path: "/", Watch: true}, "000000012f01"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := fmt.Sprintf("%x", Marshal(tt.r)); got != tt.want {
				t.Fatalf("got %s, want %s", got, tt.want)
			}
		})
	}
	// A null string (-1) reads as "", as Java's null does for a path.
	var s SyncRequest
	if err := Unmarshal([]byte{0xff, 0xff, 0xff, 0xff}, &s); err != nil || s.Path != "" {
		t.Fatalf("null string: %q, %v", s.Path, err)
	}
	// Any non-zero byte is true, as DataInput.readBoolean says.
	var g GetDataRequest
	if err := Unmarshal([]byte{0, 0, 0, 0, 7}, &g); err != nil || !g.Watch {
		t.Fatalf("bool 7: %v, %v", g.Watch, err)
	}
}

func testPasswd() []byte {
	p := make([]byte, 16)
	for i := range p {
		p[i] = byte(0xf0 + i)
	}
	return p
}

func TestConnectSizes(t *testing.T) {
	req := ConnectRequest{ProtocolVersion: 0, LastZxidSeen: 0x200000005, TimeOut: 30000,
		SessionId: 0x0123456789abcdef, Passwd: testPasswd()}

	old := &Connect{ConnectRequest: req}
	b := Marshal(old)
	if len(b) != 44 {
		t.Fatalf("pre-3.4 ConnectRequest is %d bytes, want 44", len(b))
	}
	var got Connect
	if err := Unmarshal(b, &got); err != nil || got.HasReadOnly || got.ReadOnly {
		t.Fatalf("44 bytes: %+v, %v", got, err)
	}
	if !reflect.DeepEqual(got, *old) {
		t.Fatalf("44 bytes: got %+v, want %+v", got, *old)
	}

	for _, ro := range []bool{false, true} {
		c := &Connect{ConnectRequest: req, HasReadOnly: true, ReadOnly: ro}
		b := Marshal(c)
		if len(b) != 45 {
			t.Fatalf("ConnectRequest with readOnly is %d bytes, want 45", len(b))
		}
		var got Connect
		if err := Unmarshal(b, &got); err != nil || !reflect.DeepEqual(got, *c) {
			t.Fatalf("45 bytes: got %+v, %v; want %+v", got, err, *c)
		}
	}

	// Two bytes after the record is one too many.
	if err := Unmarshal(append(Marshal(old), 1, 0), &Connect{}); err == nil {
		t.Fatal("46-byte ConnectRequest accepted")
	}
	// Every shorter prefix fails.
	for i := 0; i < 44; i++ {
		if err := Unmarshal(b[:i], &Connect{}); err == nil {
			t.Fatalf("%d-byte ConnectRequest accepted", i)
		}
	}
}

func TestConnectedSizes(t *testing.T) {
	resp := ConnectResponse{ProtocolVersion: 0, TimeOut: 4000, SessionId: 0x0123456789abcdef, Passwd: testPasswd()}
	for _, c := range []*Connected{
		{ConnectResponse: resp},
		{ConnectResponse: resp, HasReadOnly: true},
		{ConnectResponse: resp, HasReadOnly: true, ReadOnly: true},
	} {
		b := Marshal(c)
		want := 36
		if c.HasReadOnly {
			want = 37
		}
		if len(b) != want {
			t.Fatalf("%+v: %d bytes, want %d", c, len(b), want)
		}
		var got Connected
		if err := Unmarshal(b, &got); err != nil || !reflect.DeepEqual(&got, c) {
			t.Fatalf("got %+v, %v; want %+v", got, err, c)
		}
	}
}

func testACL() []ACL {
	return []ACL{
		{Perms: PermAll, Id: Id{Scheme: "world", Id: "anyone"}},
		{Perms: PermRead | PermAdmin, Id: Id{Scheme: "digest", Id: "bob:XyZ="}},
	}
}

func testStat() Stat {
	return Stat{Czxid: 0x100000001, Mzxid: 0x100000002, Ctime: 1700000000000, Mtime: 1700000000123,
		Version: 3, Cversion: 4, Aversion: 5, EphemeralOwner: 0x0123456789abcdef, DataLength: 6,
		NumChildren: 7, Pzxid: 0x100000003}
}

// everyMultiOp holds one op of every type a multi or multiRead may carry.
func everyMultiOp() []MultiOp {
	return []MultiOp{
		{OpCreate, &CreateRequest{Path: "/m/a", Data: []byte("a"), Acl: testACL(), Flags: FlagEphemeral}},
		{OpCreate2, &CreateRequest{Path: "/m/b", Data: nil, Acl: testACL()[:1], Flags: FlagPersistentSequential}},
		{OpCreateContainer, &CreateRequest{Path: "/m/c", Data: []byte{}, Acl: testACL(), Flags: FlagContainer}},
		{OpCreateTTL, &CreateTTLRequest{Path: "/m/t", Data: []byte("t"), Acl: testACL(), Flags: FlagPersistentWithTTL, Ttl: 60000}},
		{OpDelete, &DeleteRequest{Path: "/m/d", Version: 2}},
		{OpSetData, &SetDataRequest{Path: "/m/s", Data: []byte("new"), Version: -1}},
		{OpCheck, &CheckVersionRequest{Path: "/m", Version: 5}},
		{OpGetData, &GetDataRequest{Path: "/m/a"}},
		{OpGetChildren, &GetChildrenRequest{Path: "/m"}},
	}
}

func TestMultiRequestRoundTrip(t *testing.T) {
	m := &MultiRequest{Ops: everyMultiOp()}
	b := roundTrip(t, m)
	checkTruncations(t, m, b)

	// No ops: just the closing header.
	if got := fmt.Sprintf("%x", Marshal(&MultiRequest{})); got != "ffffffff01ffffffff" {
		t.Fatalf("empty multi = %s", got)
	}
	var empty MultiRequest
	if err := Unmarshal(Marshal(&MultiRequest{}), &empty); err != nil || len(empty.Ops) != 0 {
		t.Fatalf("empty multi: %+v, %v", empty, err)
	}

	// Decoding into a used value replaces its ops.
	reused := &MultiRequest{Ops: everyMultiOp()}
	if err := Unmarshal(Marshal(&MultiRequest{Ops: everyMultiOp()[:1]}), reused); err != nil || len(reused.Ops) != 1 {
		t.Fatalf("reused multi: %d ops, %v", len(reused.Ops), err)
	}
}

func TestMultiRequestRejectsOps(t *testing.T) {
	for _, op := range []int32{OpExists, OpMulti, OpSetACL, OpPing, OpError, 0, 99} {
		e := &Encoder{}
		(&MultiHeader{Type: op, Done: false, Err: -1}).Encode(e)
		(&DeleteRequest{Path: "/x"}).Encode(e)
		(&MultiHeader{Type: -1, Done: true, Err: -1}).Encode(e)
		if err := Unmarshal(e.Buf, &MultiRequest{}); err == nil {
			t.Errorf("op %d inside a multi was accepted", op)
		}
	}
	// Without the closing header the request is truncated.
	e := &Encoder{}
	(&MultiHeader{Type: OpDelete, Err: -1}).Encode(e)
	(&DeleteRequest{Path: "/x"}).Encode(e)
	if err := Unmarshal(e.Buf, &MultiRequest{}); !errors.Is(err, ErrShort) {
		t.Fatalf("multi without its end: %v, want ErrShort", err)
	}
}

func everyMultiResult() []MultiResult {
	st := testStat()
	return []MultiResult{
		{Type: OpCreate, Resp: &CreateResponse{Path: "/m/a"}},
		{Type: OpCreate2, Resp: &Create2Response{Path: "/m/b0000000001", Stat: st}},
		{Type: OpCreateContainer, Resp: &Create2Response{Path: "/m/c", Stat: st}},
		{Type: OpCreateTTL, Resp: &Create2Response{Path: "/m/t", Stat: st}},
		{Type: OpDelete},
		{Type: OpSetData, Resp: &SetDataResponse{Stat: st}},
		{Type: OpCheck},
		{Type: OpGetData, Resp: &GetDataResponse{Data: []byte("d"), Stat: st}},
		{Type: OpGetChildren, Resp: &GetChildrenResponse{Children: []string{"a", "b"}}},
		{Type: OpError, Err: ErrNoNode},
		{Type: OpError, Err: ErrRuntimeInconsistency},
	}
}

func TestMultiResponseRoundTrip(t *testing.T) {
	m := &MultiResponse{Results: everyMultiResult()}
	b := roundTrip(t, m)
	checkTruncations(t, m, b)

	// An error result carries its code twice: in the header and in an ErrorResponse.
	e := Marshal(&MultiResponse{Results: []MultiResult{{Type: OpError, Err: ErrBadVersion}}})
	if got := fmt.Sprintf("%x", e); got != "ffffffff00ffffff99ffffff99ffffffff01ffffffff" {
		t.Fatalf("error result = %s", got)
	}

	// An unknown result type fails.
	bad := &Encoder{}
	(&MultiHeader{Type: OpExists}).Encode(bad)
	(&MultiHeader{Type: -1, Done: true, Err: -1}).Encode(bad)
	if err := Unmarshal(bad.Buf, &MultiResponse{}); err == nil {
		t.Fatal("exists result inside a multi was accepted")
	}
}

func TestFrames(t *testing.T) {
	hdr := &RequestHeader{Xid: 7, Type: OpGetData}
	req := &GetDataRequest{Path: "/app", Watch: true}
	var stream []byte
	stream = AppendFrame(stream, hdr, req)
	stream = AppendFrame(stream) // an empty frame
	stream = AppendFrame(stream, &RequestHeader{Xid: XidPing, Type: OpPing}, nil)
	if got, want := fmt.Sprintf("%x", stream[:4]), "00000011"; got != want {
		t.Fatalf("frame length %s, want %s", got, want)
	}

	readers := map[string]func() io.Reader{
		"whole":   func() io.Reader { return bytes.NewReader(stream) },
		"onebyte": func() io.Reader { return iotest.OneByteReader(bytes.NewReader(stream)) },
		"half":    func() io.Reader { return iotest.HalfReader(bytes.NewReader(stream)) },
	}
	for name, mk := range readers {
		t.Run(name, func(t *testing.T) {
			r := mk()
			var buf []byte
			f, err := ReadFrame(r, buf, DefaultMaxBuffer)
			if err != nil {
				t.Fatal(err)
			}
			d := NewDecoder(f)
			var h RequestHeader
			var g GetDataRequest
			h.Decode(d)
			g.Decode(d)
			if d.Err != nil || d.Remaining() != 0 || h != *hdr || g != *req {
				t.Fatalf("frame 1: %+v %+v %v", h, g, d.Err)
			}
			buf = f
			f, err = ReadFrame(r, buf, DefaultMaxBuffer)
			if err != nil || len(f) != 0 {
				t.Fatalf("frame 2: %x, %v", f, err)
			}
			f, err = ReadFrame(r, buf, DefaultMaxBuffer)
			var ping RequestHeader
			if err != nil || Unmarshal(f, &ping) != nil || ping.Xid != XidPing {
				t.Fatalf("frame 3: %x, %v", f, err)
			}
			if _, err := ReadFrame(r, buf, DefaultMaxBuffer); err != io.EOF {
				t.Fatalf("after the last frame: %v, want EOF", err)
			}
		})
	}

	// A frame that stops early is an unexpected EOF, in the header or in the payload.
	for _, n := range []int{2, 10} {
		if _, err := ReadFrame(bytes.NewReader(stream[:n]), nil, DefaultMaxBuffer); err != io.ErrUnexpectedEOF {
			t.Errorf("cut at %d: %v, want ErrUnexpectedEOF", n, err)
		}
	}

	// ReadFrame reuses a buffer that is big enough.
	buf := make([]byte, 0, 64)
	f, err := ReadFrame(bytes.NewReader(stream), buf, DefaultMaxBuffer)
	if err != nil || &f[0] != &buf[:1][0] {
		t.Fatalf("buffer not reused: %v", err)
	}

	// AppendFrame appends after what is already in dst.
	two := AppendFrame([]byte("xy"), &ErrorResponse{Err: -1})
	if got := fmt.Sprintf("%x", two); got != "787900000004ffffffff" {
		t.Fatalf("AppendFrame after data = %s", got)
	}
}

func TestFrameMax(t *testing.T) {
	frame := AppendFrame(nil, &SyncRequest{Path: "/abcdef"}) // 11-byte payload
	if _, err := ReadFrame(bytes.NewReader(frame), nil, 11); err != nil {
		t.Fatalf("frame of exactly max: %v", err)
	}
	for _, tt := range []struct {
		name string
		b    []byte
		max  int
	}{
		{"one over max", frame, 10},
		{"over default", []byte{0x00, 0x10, 0x00, 0x00}, DefaultMaxBuffer},
		{"huge", []byte{0x7f, 0xff, 0xff, 0xff}, DefaultMaxBuffer},
		{"negative", []byte{0xff, 0xff, 0xff, 0xfe}, DefaultMaxBuffer},
		{"minus one", []byte{0xff, 0xff, 0xff, 0xff}, DefaultMaxBuffer},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadFrame(bytes.NewReader(tt.b), nil, tt.max)
			var tooLarge *ErrFrameTooLarge
			if !errors.As(err, &tooLarge) || tooLarge.Max != tt.max {
				t.Fatalf("got %v, want ErrFrameTooLarge", err)
			}
			if n := allocBytes(func() { ReadFrame(bytes.NewReader(tt.b), nil, tt.max) }); n > 1024 {
				t.Fatalf("refusing the frame allocated %d bytes", n)
			}
		})
	}
}
