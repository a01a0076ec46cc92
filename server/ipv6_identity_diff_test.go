package server

import (
	"fmt"
	"net"
	"testing"

	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/server/ztest"
)

// linkLocalAddrs are this machine's first IPv6 link-local address with its zone, if any.
func linkLocalAddrs() []string {
	ifcs, _ := net.Interfaces()
	for _, ifc := range ifcs {
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.To4() == nil && n.IP.IsLinkLocalUnicast() && ifc.Flags&net.FlagUp != 0 {
				return []string{n.IP.String() + "%" + ifc.Name}
			}
		}
	}
	return nil
}

// TestIPv6IdentityMatchesZooKeeper: a client over IPv6 holds the ip identity ZooKeeper
// gives it, its address as Java's Inet6Address.getHostAddress prints it (eight groups,
// none left out, a link-local one's zone as its scope id), as whoami shows.
func TestIPv6IdentityMatchesZooKeeper(t *testing.T) {
	ln, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	}
	ln.Close()
	opts := ztest.Options{Logf: t.Logf, ExtraConfig: map[string]string{"clientPortAddress": "0.0.0.0"}}
	bothTranscripts(t, opts, func(t *testing.T, addr string) []string {
		_, p, _ := net.SplitHostPort(addr)
		var lines []string
		for _, host := range append([]string{"::1"}, linkLocalAddrs()...) {
			c := rawSession(t, net.JoinHostPort(host, p))
			var who jute.WhoAmIResponse
			h := c.call(jute.OpWhoAmI, nil, &who)
			lines = append(lines, fmt.Sprintf("whoami: %d", h.Err), fmt.Sprintf("identities: %+v", who.ClientInfo))
		}
		return lines
	})
}
