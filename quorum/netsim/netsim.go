// Package netsim is a network for cluster tests: real TCP on loopback, with a switch
// that cuts a member off from the others (a partition) and heals it again. Each member
// gets its own view (Member), which knows who is dialing; a cut refuses new streams and
// closes the open ones in both directions. It knows nothing of Raft or ZooKeeper.
package netsim

import (
	"errors"
	"net"
	"sync"
	"time"
)

// Net is the switch shared by all members of one test cluster.
type Net struct {
	mu       sync.Mutex
	owner    map[string]string // listen address -> member
	isolated map[string]bool
	links    map[*link]struct{}
}

// New returns a network with every member connected.
func New() *Net {
	return &Net{owner: map[string]string{}, isolated: map[string]bool{}, links: map[*link]struct{}{}}
}

// ErrCut is what a dial across a cut returns.
var ErrCut = errors.New("netsim: link cut")

// Member returns the view of the network from member name.
func (n *Net) Member(name string) *Member { return &Member{net: n, name: name} }

// Isolate cuts name off from every other member.
func (n *Net) Isolate(name string) {
	n.mu.Lock()
	n.isolated[name] = true
	var cut []*link
	for l := range n.links {
		if l.src == name || l.dst == name {
			cut = append(cut, l)
			delete(n.links, l)
		}
	}
	n.mu.Unlock()
	for _, l := range cut {
		l.Conn.Close()
	}
}

// Heal reconnects every member.
func (n *Net) Heal() {
	n.mu.Lock()
	clear(n.isolated)
	n.mu.Unlock()
}

func (n *Net) blocked(a, b string) bool { return a != b && (n.isolated[a] || n.isolated[b]) }

// Member is one member's view; it implements quorum.Network.
type Member struct {
	net  *Net
	name string
}

// Listen listens on addr and records that this member owns it.
func (m *Member) Listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	m.net.mu.Lock()
	m.net.owner[addr] = m.name
	m.net.mu.Unlock()
	return ln, nil
}

// Dial connects to addr unless a cut lies between this member and addr's owner.
func (m *Member) Dial(addr string, timeout time.Duration) (net.Conn, error) {
	m.net.mu.Lock()
	dst := m.net.owner[addr]
	blocked := m.net.blocked(m.name, dst)
	m.net.mu.Unlock()
	if blocked {
		return nil, ErrCut
	}
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	l := &link{Conn: c, net: m.net, src: m.name, dst: dst}
	m.net.mu.Lock()
	if m.net.blocked(m.name, dst) { // cut while dialing
		m.net.mu.Unlock()
		c.Close()
		return nil, ErrCut
	}
	m.net.links[l] = struct{}{}
	m.net.mu.Unlock()
	return l, nil
}

// link is one dialed stream; closing it (or a cut) ends it for both ends.
type link struct {
	net.Conn
	net      *Net
	src, dst string
}

func (l *link) Close() error {
	l.net.mu.Lock()
	delete(l.net.links, l)
	l.net.mu.Unlock()
	return l.Conn.Close()
}
