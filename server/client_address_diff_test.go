package server

import (
	"fmt"
	"net"
	"regexp"
	"sort"
	"testing"

	"github.com/zkraft/zkraft/server/ztest"
)

// TestIPv6ClientAddressesMatchZooKeeper: ZooKeeper prints a client's address in cons,
// stat and dump as Java's InetSocketAddress.toString does ("/" then the address, an IPv6
// one bracketed in Java's form: eight groups, a zone as its scope id, then the port),
// and the AdminServer's connections and stats as Jackson's InetSocketAddressSerializer
// does (the same without the "/"). zkraft printed Go's form ("[::1]:port").
func TestIPv6ClientAddressesMatchZooKeeper(t *testing.T) {
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	if ln, err := net.Listen("tcp", "[::1]:0"); err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	} else {
		ln.Close()
	}
	port := regexp.MustCompile(`:\d+$`)
	textAddr := regexp.MustCompile(`(?m)^\s*(?:ip: )?(/\S+?)(?:\[\d\]| sessionId)`)
	adminAddr := regexp.MustCompile(`"remote_socket_address" ?: "([^"]*)"`)
	run := func(start func(ztest.Options) (*ztest.Server, error)) []string {
		admin := mustFreePort(t)
		s, err := start(ztest.Options{Logf: t.Logf, ExtraConfig: adminConfig(admin, "clientPortAddress", "0.0.0.0")})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Stop()
		_, p, _ := net.SplitHostPort(s.Addr)
		// A session from each address, then the listings, asked over IPv6 too.
		for _, host := range append([]string{"::1"}, linkLocalAddrs()...) {
			defer rawSession(t, net.JoinHostPort(host, p)).nc.Close()
		}
		var out []string
		for _, word := range []string{"cons", "stat", "dump"} {
			for _, m := range textAddr.FindAllStringSubmatch(askFourLetter(t, net.JoinHostPort("::1", p), word), -1) {
				out = append(out, word+" "+port.ReplaceAllString(m[1], ":<port>"))
			}
		}
		for _, cmd := range []string{"connections", "stats"} {
			_, body := httpGet(t, fmt.Sprintf("http://127.0.0.1:%d/commands/%s", admin, cmd))
			for _, m := range adminAddr.FindAllStringSubmatch(body, -1) {
				out = append(out, cmd+" "+port.ReplaceAllString(m[1], ":<port>"))
			}
		}
		sort.Strings(out)
		return out
	}
	zk, us := run(ztest.StartZooKeeper), run(ztest.StartZkraft)
	compareLines(t, zk, us)
}
