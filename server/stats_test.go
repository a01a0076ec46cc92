package server

import (
	"testing"
	"time"
)

// ZooKeeper's AvgMinMaxCounter: latencies in whole ms, the average rounded half up to four
// decimals from the double's exact value, so srvr's avg never exceeds its max.
func TestServerLatencyAsZooKeeperPrintsIt(t *testing.T) {
	for _, c := range []struct{ in, want float64 }{
		{0, 0}, {1.0 / 3, 0.3333}, {2.0 / 3, 0.6667}, {0.03125, 0.0313}, {1.98175, 1.9817}, // 1.98175 is a hair below
		{7, 7}, {12.34565, 12.3456}, {0.12345, 0.1235}, {0.00005, 0.0001}, // from the exact binary values
	} {
		if got := roundHalfUp4(c.in); got != c.want {
			t.Errorf("roundHalfUp4(%v) = %v, want %v", c.in, got, c.want)
		}
	}

	var s stats
	var split summary
	if mn, avg, mx := s.latency(); mn != 0 || avg != 0 || mx != 0 {
		t.Fatalf("no requests: %d/%v/%d, want 0/0/0", mn, avg, mx)
	}
	// Requests far quicker than a ms: most count 0 ticks, so the average stays at or
	// below the largest, which is a whole number of ms.
	for range 2000 {
		s.observe(time.Now().Add(-100*time.Microsecond), &split)
	}
	s.observe(time.Now().Add(-5*time.Millisecond), &split)
	// (A loaded machine may stretch any of them; none can shrink below its ticks.)
	mn, avg, mx := s.latency()
	if mn != 0 || mx < 4 || avg > float64(mx) || avg <= 0 || avg != roundHalfUp4(avg) {
		t.Fatalf("latency %d/%v/%d, want 0/(0,max] rounded to 4 decimals/at least 4", mn, avg, mx)
	}
	if split.count.Load() != 2001 || split.greatest() != mx || split.avg() != avg {
		t.Fatalf("the split summary: %d requests, max %d, avg %v; want 2001, %d, %v", split.count.Load(), split.greatest(), split.avg(), mx, avg)
	}
}
