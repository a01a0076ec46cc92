package server

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/server/ztest"
)

// closedWithin reports whether the server closes nc within limit (a read ends in EOF
// or a reset, not a timeout), reading and discarding what it sends.
func closedWithin(nc net.Conn, limit time.Duration) error {
	nc.SetReadDeadline(time.Now().Add(limit))
	_, err := io.Copy(io.Discard, nc)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return fmt.Errorf("still open after %v", limit)
	}
	return nil
}

// connectFrame is a plaintext ConnectRequest.
func connectFrame() []byte {
	return jute.AppendFrame(nil, &jute.ConnectRequest{TimeOut: 10000, Passwd: make([]byte, 16)})
}

// badTLSClients sends each kind of bad input to a TLS-only port and reports what
// happened, one line per kind, while a good client keeps working.
func badTLSClients(t *testing.T, f *tlsFiles, secure string, good *zk.Conn) []string {
	var mu sync.Mutex
	results := map[string]string{}
	set := func(k, v string) {
		mu.Lock()
		defer mu.Unlock()
		results[k] = v
	}
	dial := func() net.Conn {
		nc, err := net.DialTimeout("tcp", secure, 5*time.Second)
		if err != nil {
			t.Error(err)
			return nil
		}
		return nc
	}
	var wg sync.WaitGroup
	run := func(name string, fn func() string) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			set(name, fn())
		}()
	}
	run("plaintext ConnectRequest", func() string {
		nc := dial()
		if nc == nil {
			return "no connection"
		}
		defer nc.Close()
		nc.Write(connectFrame())
		return fmt.Sprint(closedWithin(nc, 5*time.Second))
	})
	run("stalled before the ClientHello", func() string {
		nc := dial()
		if nc == nil {
			return "no connection"
		}
		defer nc.Close()
		return fmt.Sprint(closedWithin(nc, 15*time.Second))
	})
	run("stalled inside the ClientHello", func() string {
		nc := dial()
		if nc == nil {
			return "no connection"
		}
		defer nc.Close()
		nc.Write([]byte{0x16, 0x03, 0x01, 0x02, 0x00, 0x01}) // a record header and one byte of 512
		return fmt.Sprint(closedWithin(nc, 15*time.Second))
	})
	for _, name := range []string{"untrusted", "expired", ""} {
		run(fmt.Sprintf("client certificate %q", name), func() string {
			nc := dial()
			if nc == nil {
				return "no connection"
			}
			tc := tls.Client(nc, f.clientTLS(name))
			defer tc.Close()
			tc.SetDeadline(time.Now().Add(5 * time.Second))
			if err := tc.Handshake(); err != nil {
				return "handshake refused"
			}
			// TLS 1.3 and 1.2 alike: the server's refusal shows at the first exchange.
			tc.Write(connectFrame())
			if _, err := tc.Read(make([]byte, 1)); err != nil {
				return "refused at first exchange"
			}
			return "accepted"
		})
	}
	// The good client works while the bad ones are held open.
	for i := 0; i < 5; i++ {
		if _, err := good.Set("/good", []byte(fmt.Sprint(i)), -1); err != nil {
			t.Errorf("good client: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	wg.Wait()
	lines := make([]string, 0, len(results))
	for _, k := range []string{"plaintext ConnectRequest", "stalled before the ClientHello", "stalled inside the ClientHello",
		`client certificate "untrusted"`, `client certificate "expired"`, `client certificate ""`} {
		lines = append(lines, k+": "+results[k])
	}
	return lines
}

// TestTLSBadInputMatchesZooKeeper: plaintext on a TLS-only port, stalled handshakes,
// and untrusted, expired or missing client certificates each close only their own
// connection, on ZooKeeper and zkraft alike; a client with a good certificate keeps
// working meanwhile.
func TestTLSBadInputMatchesZooKeeper(t *testing.T) {
	t.Parallel()
	f := newTLSFiles(t)
	servers := startTLSServers(t, f, nil)
	out := map[string][]string{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for name, addrs := range servers {
		good := f.zkOverTLS(t, addrs[1], "client1")
		if _, err := good.Create("/good", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each failed handshake counts as an authentication failure; what the bad
			// clients add is compared. A handshake of the good client that was given up
			// on would count too: CI once saw 7 on ZooKeeper and 6 on zkraft when the
			// tests' dialer gave a JVM's first handshake only 1 s (it gives 10 s now).
			before := settledAuthFailures(addrs[0])
			handshakes := settledMntr(addrs[0], "unsuccessful_handshake")
			t.Logf("%s: zk_auth_failed_count before the bad clients: %s", name, before)
			if name == "zkraft" && before != "0" {
				// Its good client's handshake succeeded (it has a session): no failure.
				t.Errorf("zkraft counted %s authentication failures before the bad clients", before)
			}
			lines := badTLSClients(t, f, addrs[1], good)
			after := settledAuthFailures(addrs[0])
			lines = append(lines, fmt.Sprintf("auth failures the bad clients added: %s", countDelta(before, after)))
			lines = append(lines, fmt.Sprintf("unsuccessful handshakes they added: %s",
				countDelta(handshakes, settledMntr(addrs[0], "unsuccessful_handshake"))))
			mu.Lock()
			out[name] = lines
			mu.Unlock()
		}()
	}
	wg.Wait()
	for _, l := range out["zookeeper"] {
		t.Log("zookeeper: " + l)
	}
	compareLines(t, out["zookeeper"], out["zkraft"])
	for _, l := range out["zkraft"] {
		if strings.Contains(l, "still open") || strings.Contains(l, "accepted") || strings.Contains(l, "no connection") ||
			strings.HasPrefix(l, "auth failures") && !strings.HasSuffix(l, ": 6") {
			t.Errorf("zkraft: %s", l)
		}
	}
}

// settledAuthFailures is mntr's zk_auth_failed_count value once two readings half a
// second apart agree (at most 10 s), or the error that stopped the reading. A client
// may see its refusal before the server has counted it, hence the wait.
func settledAuthFailures(addr string) string { return settledMntr(addr, "auth_failed_count") }

// settledMntr is mntr's value of key once two readings half a second apart agree.
func settledMntr(addr, key string) string {
	read := func() string {
		mntr, err := ztest.FourLetter(addr, "mntr")
		if err != nil {
			return err.Error()
		}
		if v := mntrLine(mntr, key); v != "" {
			return v
		}
		return "no zk_" + key
	}
	return settled(500*time.Millisecond, 10*time.Second, read)
}

// countDelta is after-before for two counter readings, or both readings when either
// is not a number.
func countDelta(before, after string) string {
	b, errB := strconv.Atoi(before)
	a, errA := strconv.Atoi(after)
	if errB != nil || errA != nil {
		return fmt.Sprintf("unreadable (%q, then %q)", before, after)
	}
	return strconv.Itoa(a - b)
}

// settled reads until two readings gap apart agree, for at most limit, and returns the
// last reading.
func settled[T comparable](gap, limit time.Duration, read func() T) T {
	last := read()
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); {
		time.Sleep(gap)
		now := read()
		if now == last {
			break
		}
		last = now
	}
	return last
}
