package server

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"testing"
	"time"

	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/server/ztest"
)

// outcome is what a server does with one piece of bad input: answer (with an error
// code) or close the connection, or neither within the deadline; and, if the connection
// is still open after that, whether it then stays open (answering a ping) or ends.
func outcome(t *testing.T, addr string, handshake bool, payload []byte) string {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(3 * time.Second))
	br := bufio.NewReader(nc)
	if handshake {
		req := &jute.Connect{ConnectRequest: jute.ConnectRequest{TimeOut: 10000, Passwd: make([]byte, 16)}, HasReadOnly: true}
		nc.Write(jute.AppendFrame(nil, req))
		if _, err := jute.ReadFrame(br, nil, jute.DefaultMaxBuffer); err != nil {
			t.Fatalf("handshake: %v", err)
		}
	}
	nc.Write(payload)
	first := nextReply(br)
	if first == "closed" {
		return first
	}
	// Whether the connection then ends, not whether a ping sent at once is answered first:
	// ZooKeeper queues the close of a connection it ends behind the reply before it (an
	// unknown op's Unimplemented), so a ping may still be answered before the close.
	nc.SetDeadline(time.Now().Add(500 * time.Millisecond))
	nc.Write(jute.AppendFrame(nil, &jute.RequestHeader{Xid: jute.XidPing, Type: jute.OpPing}))
	answered := false
	for {
		switch r := nextReply(br); {
		case r == "closed":
			return first + ", then closed"
		case r == "no answer" && answered:
			return first + ", then open (a ping answered)"
		case r == "no answer":
			return first + ", then no answer to a ping"
		default:
			answered = true
		}
	}
}

// rawRecord is a request body given byte by byte, for lengths no record encodes.
type rawRecord []byte

func (r rawRecord) Encode(e *jute.Encoder) { e.Buf = append(e.Buf, r...) }
func (r rawRecord) Decode(*jute.Decoder)   {}

func be32(v int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(v)) }

// str is a jute string: its length, then its bytes.
func str(s string) []byte { return append(be32(int32(len(s))), s...) }

func cat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

func nextReply(br *bufio.Reader) string {
	f, err := jute.ReadFrame(br, nil, jute.DefaultMaxBuffer)
	var ne net.Error
	switch {
	case err == nil:
		var h jute.ReplyHeader
		h.Decode(jute.NewDecoder(f))
		if h.Zxid == -1 || h.Zxid == 0 { // the two servers' zxids differ, but not where none is given
			return fmt.Sprintf("reply xid=%d zxid=%d err=%d", h.Xid, h.Zxid, h.Err)
		}
		return fmt.Sprintf("reply xid=%d err=%d", h.Xid, h.Err)
	case errors.As(err, &ne) && ne.Timeout() || errors.Is(err, os.ErrDeadlineExceeded):
		return "no answer"
	default:
		return "closed"
	}
}

// TestBadInputAgainstZooKeeper sends the same bad input to ZooKeeper 3.8 and zkraft and
// requires the same outcome, and that another client is served throughout.
func TestBadInputAgainstZooKeeper(t *testing.T) {
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	frame := func(rs ...jute.Record) []byte { return jute.AppendFrame(nil, rs...) }
	cases := []struct {
		name      string
		handshake bool
		payload   []byte
	}{
		{"garbage before connect", false, []byte("\x00\x00\x00\x08garbage!")},
		{"frame over jute.maxbuffer", true, []byte{0x7f, 0xff, 0xff, 0xff}},
		{"negative frame length", true, []byte{0xff, 0xff, 0xff, 0xf0}},
		{"unknown opcode", true, frame(&jute.RequestHeader{Xid: 1, Type: 999})},
		{"notification opcode", true, frame(&jute.RequestHeader{Xid: 1, Type: 0})},
		{"frame shorter than a header", true, []byte{0, 0, 0, 4, 0, 0, 0, 1}},
		{"truncated getData", true, append(frame(&jute.RequestHeader{Xid: 1, Type: jute.OpGetData})[:0:0],
			0, 0, 0, 12, 0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 9)},
		{"truncated setData", true, append(frame(&jute.RequestHeader{Xid: 1, Type: jute.OpSetData})[:0:0],
			0, 0, 0, 12, 0, 0, 0, 1, 0, 0, 0, 5, 0, 0, 0, 9)},
		{"truncated addauth", true, append(frame(&jute.RequestHeader{Xid: -4, Type: jute.OpAuth})[:0:0],
			0, 0, 0, 12, 0xff, 0xff, 0xff, 0xfc, 0, 0, 0, 100, 0, 0, 0, 0)},
		{"getData of a relative path", true, frame(&jute.RequestHeader{Xid: 1, Type: jute.OpGetData}, &jute.GetDataRequest{Path: "rel"})},
		{"create with a bad path", true, frame(&jute.RequestHeader{Xid: 1, Type: jute.OpCreate},
			&jute.CreateRequest{Path: "/a/../b", Acl: []jute.ACL{{Perms: 31, Id: jute.Id{Scheme: "world", Id: "anyone"}}}})},
		{"removeWatches of an unknown watcher type", true, frame(&jute.RequestHeader{Xid: 1, Type: jute.OpRemoveWatches}, &jute.RemoveWatchesRequest{Path: "/", Type: 9})},
		{"checkWatches of watcher type 0", true, frame(&jute.RequestHeader{Xid: 1, Type: jute.OpCheckWatches}, &jute.CheckWatchesRequest{Path: "/", Type: 0})},
		{"sasl with a null token", true, frame(&jute.RequestHeader{Xid: 1, Type: jute.OpSASL}, &jute.GetSASLRequest{})},
		{"truncated sasl token", true, append(frame(&jute.RequestHeader{Xid: 1, Type: jute.OpSASL})[:0:0],
			0, 0, 0, 12, 0, 0, 0, 1, 0, 0, 0, 102, 0, 0, 0, 9)},
		{"request before connect", false, frame(&jute.RequestHeader{Xid: 1, Type: jute.OpGetData}, &jute.GetDataRequest{Path: "/"})},
		// deleteContainer is a request in 3.8's Request.isValid, refused to clients.
		{"deleteContainer from a client", true, frame(&jute.RequestHeader{Xid: 1, Type: jute.OpDeleteContainer}, &jute.SyncRequest{Path: "/"})},
		{"addWatch of an unknown mode", true, frame(&jute.RequestHeader{Xid: 1, Type: jute.OpAddWatch}, &jute.AddWatchRequest{Path: "/", Mode: 2})},
		{"multiRead holding a create", true, frame(&jute.RequestHeader{Xid: 1, Type: jute.OpMultiRead}, &jute.MultiRequest{Ops: []jute.MultiOp{
			{Type: jute.OpGetData, Req: &jute.GetDataRequest{Path: "/"}},
			{Type: jute.OpCreate, Req: &jute.CreateRequest{Path: "/mr", Acl: []jute.ACL{{Perms: 31, Id: jute.Id{Scheme: "world", Id: "anyone"}}}}}}})},
		{"ping with an xid of its own", true, frame(&jute.RequestHeader{Xid: 9, Type: jute.OpPing})},
		{"exists of a path holding a NUL", true, frame(&jute.RequestHeader{Xid: 1, Type: jute.OpExists}, &jute.ExistsRequest{Path: "/a\x00b", Watch: true})},
		{"getData of a path holding a NUL", true, frame(&jute.RequestHeader{Xid: 1, Type: jute.OpGetData}, &jute.GetDataRequest{Path: "/a\x00b"})},
		// A vector count below -1 is an empty vector to ZooKeeper's BinaryInputArchive: a
		// create and a setACL with an ACL count of -2 are InvalidACL, a setWatches with
		// counts of -2 sets nothing, none of them MarshallingError.
		{"create with an ACL count of -2", true, frame(&jute.RequestHeader{Xid: 1, Type: jute.OpCreate},
			rawRecord(cat(str("/neg"), be32(-1), be32(-2), be32(0))))},
		{"setACL with an ACL count of -2", true, frame(&jute.RequestHeader{Xid: 1, Type: jute.OpSetACL},
			rawRecord(cat(str("/"), be32(-2), be32(-1))))},
		{"setWatches with counts of -2", true, frame(&jute.RequestHeader{Xid: jute.XidSetWatches, Type: jute.OpSetWatches},
			rawRecord(cat(make([]byte, 8), be32(-2), be32(-2), be32(-2))))},
		{"addauth of an unknown scheme", true, frame(&jute.RequestHeader{Xid: jute.XidAuth, Type: jute.OpAuth}, &jute.AuthPacket{Scheme: "nope", Auth: []byte("x")})},
		// The Java client's addAuthInfo("digest", null) sends a null auth; ip ignores it.
		{"addauth digest with a null auth", true, frame(&jute.RequestHeader{Xid: jute.XidAuth, Type: jute.OpAuth}, &jute.AuthPacket{Scheme: "digest"})},
		{"addauth ip with a null auth", true, frame(&jute.RequestHeader{Xid: jute.XidAuth, Type: jute.OpAuth}, &jute.AuthPacket{Scheme: "ip"})},
		{"addauth digest of an empty auth", true, frame(&jute.RequestHeader{Xid: jute.XidAuth, Type: jute.OpAuth}, &jute.AuthPacket{Scheme: "digest", Auth: []byte{}})},
	}
	run := func(name string, start func(ztest.Options) (*ztest.Server, error)) []string {
		s, err := start(ztest.Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		defer s.Stop()
		good := dial(t, s.Addr)
		good.connect(0, nil)
		var out []string
		for _, c := range cases {
			out = append(out, outcome(t, s.Addr, c.handshake, c.payload))
			if h := good.call(jute.OpExists, &jute.ExistsRequest{Path: "/"}, &jute.ExistsResponse{}); h.Err != 0 {
				t.Fatalf("%s: other client failed after %q: %d", name, c.name, h.Err)
			}
		}
		return out
	}
	zk, us := run("zookeeper", ztest.StartZooKeeper), run("zkraft", ztest.StartZkraft)
	for i, c := range cases {
		if zk[i] != us[i] {
			t.Errorf("%s: zookeeper %s, zkraft %s", c.name, zk[i], us[i])
		} else {
			t.Logf("%s: %s", c.name, us[i])
		}
	}
}
