package server

import (
	"crypto/tls"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/zkraft/zkraft/server/ztest"
)

// With earlyDropSecureConnectionHandshakes a member that serves nobody (cut off from
// its cluster) closes a secure port's connection before its TLS handshake and counts it
// in cnxn_closed_without_zk_server_running, as ZooKeeper's Netty factory does while no
// server runs behind it; a member without the setting goes through the handshake (what
// happens to a session after it is the leaderless member's, tested elsewhere). Once the
// member serves again, the TLS handshake goes through.
func TestEarlyDropOfSecureHandshakesWithoutLeader(t *testing.T) {
	p := newPEMTLS(t)
	for _, early := range []bool{true, false} {
		tc := newTestClusterWith(t, 3, func(c *Config) {
			port, err := ztest.FreePort()
			if err != nil {
				t.Fatal(err)
			}
			c.SSL = map[string]string{"ssl.keyStore.location": p.keyStore, "ssl.trustStore.location": p.trust}
			c.SecureClientPort, c.SecureClientPortAddress = port, "127.0.0.1"
			c.EarlyDropSecureHandshakes = early
		})
		f := tc.follower()
		srv, secure := tc.servers[f], tc.servers[f].SecureAddr().String()
		handshake := func() error {
			nc, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", secure, p.client(t, "someone"))
			if err != nil {
				return err
			}
			defer nc.Close()
			// TLS 1.3: the server's side of the handshake shows in the first read.
			nc.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
			_, err = nc.Read(make([]byte, 1))
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				return nil
			}
			return err
		}
		if err := handshake(); err != nil {
			t.Fatalf("early=%v: a TLS handshake with a serving member: %v", early, err)
		}
		tc.net.Isolate(strconv.Itoa(f + 1))
		awaitFourLetter(t, tc.addr(f), "isro", "null", 10*time.Second)
		err := handshake()
		dropped := srv.metrics.cnxnClosedNotRunning.Load()
		switch {
		case early && (err == nil || dropped != 1 || srv.stats.closed[closedNotServing].Load() != 1):
			t.Errorf("early drop on a member that serves nobody: handshake %v, %d counted", err, dropped)
		case !early && (err != nil || dropped != 0):
			t.Errorf("without early drop, a member that serves nobody: handshake %v, %d counted", err, dropped)
		}
		tc.net.Heal()
		awaitFourLetter(t, tc.addr(f), "isro", "rw", 15*time.Second)
		// mntr answers once the member serves again (ZooKeeper's needs a running server).
		if got := mntrLine(askFourLetter(t, tc.addr(f), "mntr"), "cnxn_closed_without_zk_server_running"); got != strconv.FormatInt(dropped, 10) {
			t.Errorf("mntr's cnxn_closed_without_zk_server_running %q, counted %d", got, dropped)
		}
		if err := handshake(); err != nil {
			t.Errorf("early=%v: a TLS handshake once the member serves again: %v", early, err)
		}
		tc.stopAll()
	}
}
