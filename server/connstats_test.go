package server

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// ZooKeeper's ServerCnxn.dumpConnectionInfo and FinalRequestProcessor: a session's cons
// line carries the last operation's name, cxid (never a ping's -2), zxid and latencies;
// before any answer lop is NA, lcxid is left out and lzxid is -1; a failed write other
// than multi is named NA (an error transaction); addauth, SASL and unknown ops change
// nothing.
func TestConnStatsFollowZooKeeper(t *testing.T) {
	line := func(s *connStats) string {
		var b strings.Builder
		connFacts{sid: 0x1a2b, started: time.UnixMilli(1234), timeout: 6000, figures: s.figures()}.describeSession(&b)
		out := regexp.MustCompile(`lresp=\d+`).ReplaceAllString(b.String(), "lresp=<t>")
		// A request answered at once may still cross a tick of the ms clock: 0 or 1.
		return regexp.MustCompile(`(llat|minlat|avglat|maxlat)=[01]\b`).ReplaceAllString(out, "$1=0")
	}
	s := newConnStats()
	steps := []struct {
		op   int32
		xid  int32
		code jute.Code
		zxid int64
		want string
	}{
		{jute.OpAuth, -4, jute.OK, 0, ",sid=0x1a2b,lop=NA,est=1234,to=6000,lzxid=0xffffffffffffffff,lresp=<t>,llat=0,minlat=0,avglat=0,maxlat=0"},
		{jute.OpCreateSession, 0, jute.OK, 3, ",sid=0x1a2b,lop=SESS,est=1234,to=6000,lcxid=0x0,lzxid=0x3,lresp=<t>,llat=0,minlat=0,avglat=0,maxlat=0"},
		{jute.OpGetData, 7, jute.ErrNoNode, 3, ",sid=0x1a2b,lop=GETD,est=1234,to=6000,lcxid=0x7,lzxid=0x3,lresp=<t>,llat=0,minlat=0,avglat=0,maxlat=0"},
		{jute.OpPing, jute.XidPing, jute.OK, 4, ",sid=0x1a2b,lop=PING,est=1234,to=6000,lcxid=0x7,lzxid=0x4,lresp=<t>,llat=0,minlat=0,avglat=0,maxlat=0"},
		{jute.OpCreate, 8, jute.ErrNodeExists, 4, ",sid=0x1a2b,lop=NA,est=1234,to=6000,lcxid=0x8,lzxid=0x4,lresp=<t>,llat=0,minlat=0,avglat=0,maxlat=0"},
		{jute.OpMulti, 9, jute.ErrNodeExists, 4, ",sid=0x1a2b,lop=MULT,est=1234,to=6000,lcxid=0x9,lzxid=0x4,lresp=<t>,llat=0,minlat=0,avglat=0,maxlat=0"},
		{jute.OpSetData, 10, jute.ErrNotReadOnly, 4, ",sid=0x1a2b,lop=MULT,est=1234,to=6000,lcxid=0x9,lzxid=0x4,lresp=<t>,llat=0,minlat=0,avglat=0,maxlat=0"},
		{jute.OpSASL, 11, jute.OK, 4, ",sid=0x1a2b,lop=MULT,est=1234,to=6000,lcxid=0x9,lzxid=0x4,lresp=<t>,llat=0,minlat=0,avglat=0,maxlat=0"},
		{999, 12, jute.ErrUnimplemented, 4, ",sid=0x1a2b,lop=MULT,est=1234,to=6000,lcxid=0x9,lzxid=0x4,lresp=<t>,llat=0,minlat=0,avglat=0,maxlat=0"},
		{jute.OpGetChildren2, 13, jute.OK, 5, ",sid=0x1a2b,lop=GETC,est=1234,to=6000,lcxid=0xd,lzxid=0x5,lresp=<t>,llat=0,minlat=0,avglat=0,maxlat=0"},
	}
	for i, st := range steps {
		s.answered(st.op, st.xid, st.code, st.zxid, time.Now())
		if got := line(s); got != st.want {
			t.Fatalf("step %d (op %d):\ngot  %s\nwant %s", i, st.op, got, st.want)
		}
	}
	// Latencies: whole ms, the average rounded down as Java's long division.
	s = newConnStats()
	for _, d := range []time.Duration{3 * time.Millisecond, 4 * time.Millisecond, 50 * time.Millisecond} {
		s.answered(jute.OpExists, 1, jute.OK, 1, time.Now().Add(-d))
	}
	// Each is counted in ticks of the ms clock: d, or one less when the tick falls late.
	if minLat, avgLat, maxLat := s.latencies(); minLat < 2 || maxLat < 49 || avgLat != s.total/3 || s.lastLat != maxLat {
		t.Fatalf("latencies %d/%d/%d (last %d), want min>=2, max>=49, avg total/3, last the 50 ms one", minLat, avgLat, maxLat, s.lastLat)
	}
}
