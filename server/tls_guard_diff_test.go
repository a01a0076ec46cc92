package server

import (
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/server/ztest"
)

// Netty's guards of TLS clients, side by side with ZooKeeper 3.8 (Netty factory, port
// unification on the client port beside a secure port,
// zookeeper.netty.server.outstandingHandshake.limit=2): two connections to the unified
// port that send nothing sit in their handshakes and hold both places
// (outstanding_tls_handshake 2); a TLS client that comes meanwhile is closed at once
// (tls_handshake_exceeded); once they are gone a TLS client on that port gets its session.
// Every connection to the unified port counts in non_mtls_local_conn_count (loopback),
// whatever it turns out to be; the secure port's do not. The figures are read with mntr
// over TLS on the secure port, which no limit holds back.
func TestTLSHandshakeLimitMatchesZooKeeper(t *testing.T) {
	f := newTLSFiles(t)
	servers := startTLSServers(t, f, nil, func(o *ztest.Options) {
		o.JVMFlags = append(o.JVMFlags, "-Dzookeeper.netty.server.outstandingHandshake.limit=2", "-Dzookeeper.client.portUnification=true")
	})
	for _, name := range []string{"zookeeper", "zkraft"} {
		unified, secure := servers[name][0], servers[name][1]
		value := func(key string) int64 {
			t.Helper()
			nc, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", secure, f.clientTLS("admin"))
			if err != nil {
				t.Fatalf("%s: mntr over TLS: %v", name, err)
			}
			defer nc.Close()
			nc.SetDeadline(time.Now().Add(10 * time.Second))
			nc.Write([]byte("mntr"))
			out, _ := io.ReadAll(nc)
			n, err := strconv.ParseInt(mntrLine(string(out), key), 10, 64)
			if err != nil {
				t.Fatalf("%s: mntr's %s: %v\n%s", name, key, err, out)
			}
			return n
		}
		await := func(key string, want int64) {
			t.Helper()
			for deadline := time.Now().Add(10 * time.Second); value(key) != want; time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("%s: %s is %d, want %d", name, key, value(key), want)
				}
			}
		}

		plainBefore, exceeded := value("non_mtls_local_conn_count"), value("tls_handshake_exceeded")
		for range 3 {
			if got := askFourLetter(t, unified, "ruok"); got != "imok" {
				t.Errorf("%s: ruok on the unified port: %q", name, got)
			}
		}
		await("outstanding_tls_handshake", 0)
		var stalled []net.Conn
		for range 2 {
			nc, err := net.Dial("tcp", unified)
			if err != nil {
				t.Fatal(err)
			}
			stalled = append(stalled, nc)
		}
		await("outstanding_tls_handshake", 2)
		over, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", unified, f.clientTLS("admin"))
		if err == nil {
			// TLS 1.3 may finish the client's side before the server's refusal shows;
			// a server that took the connection waits for its ConnectRequest.
			over.SetReadDeadline(time.Now().Add(3 * time.Second))
			_, err = over.Read(make([]byte, 1))
			over.Close()
		}
		if ne, ok := err.(net.Error); err == nil || ok && ne.Timeout() {
			t.Errorf("%s: a TLS client over the handshake limit was taken (%v)", name, err)
		}
		if got := value("tls_handshake_exceeded") - exceeded; got != 1 {
			t.Errorf("%s: tls_handshake_exceeded grew by %d, want 1", name, got)
		}
		for _, nc := range stalled {
			nc.Close()
		}
		await("outstanding_tls_handshake", 0)
		c := f.zkOverTLS(t, unified, "admin")
		if _, err := c.Create(fmt.Sprintf("/after-%s", name), nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Errorf("%s: a TLS client once the places were free: %v", name, err)
		}
		c.Close()
		// Three words, two stalled connections, the refused TLS client and the last one.
		if got := value("non_mtls_local_conn_count") - plainBefore; got != 7 {
			t.Errorf("%s: %d connections to the unified port counted in non_mtls_local_conn_count, want 7", name, got)
		}
		if got := value("non_mtls_remote_conn_count"); got != 0 {
			t.Errorf("%s: non_mtls_remote_conn_count %d with every client on loopback", name, got)
		}
	}
}
