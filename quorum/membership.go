package quorum

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
)

// ParsePeer reads one of ZooKeeper's server lines, server.N=SPEC, given N and SPEC:
// host:peerPort:electionPort[:participant|:observer][;[clientHost:]clientPort], an IPv6
// host in brackets ([::1]:2888:3888). The peer port carries forwarded writes, the
// election port Raft. A client part of only a port means every interface, as in
// ZooKeeper.
func ParsePeer(id, spec string) (Peer, error) {
	if n, err := strconv.Atoi(id); err != nil || n < 1 || n > 254 {
		return Peer{}, fmt.Errorf("server id %q is not 1..254", id)
	}
	var client string
	if i := strings.IndexByte(spec, ';'); i >= 0 {
		spec, client = spec[:i], strings.TrimSpace(spec[i+1:])
	}
	host, parts, err := splitHost(strings.TrimSpace(spec))
	if err != nil {
		return Peer{}, err
	}
	if len(parts) < 2 || len(parts) > 3 || host == "" {
		return Peer{}, fmt.Errorf("%q is not host:peerPort:electionPort[:observer]", spec)
	}
	for _, port := range parts[:2] {
		if !isPort(port) {
			return Peer{}, fmt.Errorf("%q is not a port", port)
		}
	}
	p := Peer{ID: id, PeerAddr: net.JoinHostPort(host, parts[0]), RaftAddr: net.JoinHostPort(host, parts[1])}
	if len(parts) == 3 {
		switch parts[2] {
		case "observer":
			p.Observer = true
		case "participant":
		default:
			return Peer{}, fmt.Errorf("role %q is not observer or participant", parts[2])
		}
	}
	if client != "" {
		host, port := "0.0.0.0", client
		if strings.ContainsRune(client, ':') {
			h, rest, err := splitHost(client)
			if err != nil || len(rest) != 1 {
				return Peer{}, fmt.Errorf("client address %q is not [host:]port", client)
			}
			host, port = h, rest[0]
		}
		if !isPort(port) || host == "" {
			return Peer{}, fmt.Errorf("client address %q is not [host:]port", client)
		}
		p.ClientAddr = net.JoinHostPort(host, port)
	}
	return p, nil
}

// splitHost splits s at its colons into a host and the fields after it; a host in
// brackets (an IPv6 literal, [::1]:2888:3888) keeps its own colons, as ZooKeeper's
// ConfigUtils.getHostAndPort reads it.
func splitHost(s string) (host string, fields []string, err error) {
	if strings.HasPrefix(s, "[") {
		i := strings.Index(s, "]:")
		if i < 0 {
			return "", nil, fmt.Errorf("%q starts with '[' but has no matching ']:'", s)
		}
		return s[1:i], strings.Split(s[i+2:], ":"), nil
	}
	parts := strings.Split(s, ":")
	return parts[0], parts[1:], nil
}

func isPort(s string) bool {
	n, err := strconv.Atoi(s)
	return err == nil && n >= 1 && n <= 65535
}

// Spec is the peer in ZooKeeper's dynamic configuration form (QuorumServer.toString).
func (p Peer) Spec() string {
	host, peerPort, _ := net.SplitHostPort(p.PeerAddr)
	_, electionPort, _ := net.SplitHostPort(p.RaftAddr)
	role := "participant"
	if p.Observer {
		role = "observer"
	}
	// An IPv6 host keeps its brackets, as QuorumServer.delimitedHostString writes it.
	s := net.JoinHostPort(host, peerPort) + ":" + electionPort + ":" + role
	if p.ClientAddr != "" {
		s += ";" + p.ClientAddr
	}
	return s
}

// Membership is the cluster's configuration as /zookeeper/config holds it: the members
// and the zxid of the entry that set it (ZooKeeper's config version).
type Membership struct {
	Peers   []Peer // sorted by numeric id
	Version int64
}

// String is ZooKeeper's dynamic configuration text (QuorumMaj.toString).
func (m Membership) String() string {
	var b strings.Builder
	for _, p := range m.Peers {
		fmt.Fprintf(&b, "server.%s=%s\n", p.ID, p.Spec())
	}
	fmt.Fprintf(&b, "version=%x", m.Version)
	return b.String()
}

// Voters counts the members that vote.
func (m Membership) Voters() int {
	n := 0
	for _, p := range m.Peers {
		if !p.Observer {
			n++
		}
	}
	return n
}

// Peer returns the member with id.
func (m Membership) Peer(id string) (Peer, bool) {
	for _, p := range m.Peers {
		if p.ID == id {
			return p, true
		}
	}
	return Peer{}, false
}

// ParseMembership reads ZooKeeper's dynamic configuration: server.N=SPEC lines and a
// version=HEX line, separated by newlines (or commas, as reconfig -members allows).
func ParseMembership(text string) (Membership, error) {
	var m Membership
	seen := map[string]bool{}
	for _, line := range strings.FieldsFunc(text, func(r rune) bool { return r == '\n' || r == ',' }) {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		key, val, ok := strings.Cut(line, "=")
		if !ok {
			return Membership{}, fmt.Errorf("%q is not key=value", line)
		}
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		switch {
		case key == "version":
			v, err := strconv.ParseInt(val, 16, 64)
			if err != nil {
				return Membership{}, fmt.Errorf("version %q is not hexadecimal", val)
			}
			m.Version = v
		case strings.HasPrefix(key, "server."):
			p, err := ParsePeer(strings.TrimPrefix(key, "server."), val)
			if err != nil {
				return Membership{}, fmt.Errorf("%s: %w", key, err)
			}
			if seen[p.ID] {
				return Membership{}, fmt.Errorf("%s is listed twice", key)
			}
			seen[p.ID] = true
			m.Peers = append(m.Peers, p)
		default:
			return Membership{}, fmt.Errorf("unknown key %q", key)
		}
	}
	m.sort()
	return m, nil
}

func (m *Membership) sort() {
	slices.SortFunc(m.Peers, func(a, b Peer) int {
		x, _ := strconv.Atoi(a.ID)
		y, _ := strconv.Atoi(b.ID)
		return x - y
	})
}

// reconfigure computes the membership a ZooKeeper reconfig asks for (PrepRequestProcessor):
// members replaces the whole set; otherwise the leaving ids go and the joining
// server.N=SPEC entries (which must name a client port) are added or replaced. The
// result must keep at least two voters. An error is ZooKeeper's BadArguments.
func (m Membership) reconfigure(joining, leaving, members string) (Membership, error) {
	var next Membership
	if members != "" {
		n, err := ParseMembership(members)
		if err != nil {
			return Membership{}, err
		}
		next.Peers = n.Peers
	} else {
		byID := map[string]Peer{}
		for _, p := range m.Peers {
			byID[p.ID] = p
		}
		for _, id := range splitList(leaving) {
			if _, err := strconv.ParseInt(id, 10, 64); err != nil {
				return Membership{}, fmt.Errorf("leaving server %q is not an id", id)
			}
			delete(byID, id)
		}
		var joiners []Peer
		for _, j := range splitList(joining) {
			key, spec, ok := strings.Cut(j, "=")
			if !ok {
				return Membership{}, fmt.Errorf("wrong format of server string %q", j)
			}
			id := key[strings.LastIndexByte(key, '.')+1:]
			p, err := ParsePeer(strings.TrimSpace(id), spec)
			if err != nil {
				return Membership{}, err
			}
			if p.ClientAddr == "" {
				return Membership{}, fmt.Errorf("%q: each server needs its peer, election and client ports", j)
			}
			byID[p.ID] = p
			joiners = append(joiners, p)
		}
		// A joiner may not take an address another server of the new membership has
		// (ZooKeeper's checkAddressDuplicate; wildcard addresses aside).
		for _, j := range joiners {
			for _, q := range byID {
				if q.ID == j.ID {
					continue
				}
				if a, ok := sharedAddr(j, q); ok {
					return Membership{}, fmt.Errorf("%s of server.%s conflicts %s of server.%s", a, j.ID, a, q.ID)
				}
			}
		}
		for _, p := range byID {
			next.Peers = append(next.Peers, p)
		}
		next.sort()
	}
	if next.Voters() < 2 {
		return Membership{}, fmt.Errorf("the new configuration must include at least 2 followers")
	}
	return next, nil
}

// sharedAddr returns an address a and b both use (peer, election or client port), if
// any; a wildcard or portless address is nobody's.
func sharedAddr(a, b Peer) (string, bool) {
	norm := func(addr string) string {
		host, port, err := net.SplitHostPort(addr)
		if err != nil || port == "" {
			return ""
		}
		if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
			return ""
		}
		return net.JoinHostPort(host, port)
	}
	for _, x := range []string{a.PeerAddr, a.RaftAddr, a.ClientAddr} {
		if x = norm(x); x == "" {
			continue
		}
		for _, y := range []string{b.PeerAddr, b.RaftAddr, b.ClientAddr} {
			if x == norm(y) {
				return x, true
			}
		}
	}
	return "", false
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// InMembership reports whether this member is in the newest membership it holds: a
// member that applied a reconfig removing it is not (it follows as a non-voter, in Raft's
// configuration but not in /zookeeper/config). One that never received that entry cannot
// know, as a ZooKeeper server cut off during the reconfig cannot. Before the first
// membership is written, Raft's configuration decides.
func (n *Node) InMembership() bool {
	if m, ok := n.FSM.Members(); ok {
		_, in := m.Peer(n.cfg.ID)
		return in
	}
	f := n.raft.GetConfiguration()
	if f.Error() != nil {
		return true
	}
	for _, s := range f.Configuration().Servers {
		if string(s.ID) == n.cfg.ID {
			return true
		}
	}
	return false
}
