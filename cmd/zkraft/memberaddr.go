package main

import (
	"fmt"
	"net"
	"strconv"

	"github.com/zkraft/zkraft/server"
)

// memberClientAddress makes a cluster member serve clients where its own server line
// says (the part after ';'), as ZooKeeper's QuorumPeerConfig.setupClientPort does: a
// zoo.cfg of ZooKeeper 3.5+ often has no clientPort and names each member's port there.
// A clientPort (and clientPortAddress other than a wildcard) that disagrees with it is
// refused, as ZooKeeper refuses it.
func memberClientAddress(cfg *server.Config) error {
	var own string
	for _, p := range cfg.Servers {
		if p.ID == strconv.Itoa(cfg.ServerID) {
			own = p.ClientAddr
		}
	}
	if own == "" {
		return nil
	}
	host, portText, err := net.SplitHostPort(own)
	if err != nil {
		return err
	}
	port, _ := strconv.Atoi(portText) // quorum.ParsePeer checked it
	if isWildcard(host) {
		host = ""
	}
	if cfg.ClientPort != unsetPort {
		sameHost := isWildcard(cfg.ClientPortAddress) || cfg.ClientPortAddress == host ||
			net.ParseIP(cfg.ClientPortAddress).Equal(net.ParseIP(host))
		if cfg.ClientPort != port || !sameHost {
			return fmt.Errorf("clientPort %s is not server.%d's client address %s", net.JoinHostPort(cfg.ClientPortAddress, strconv.Itoa(cfg.ClientPort)), cfg.ServerID, own)
		}
	}
	cfg.ClientPort, cfg.ClientPortAddress = port, host
	return nil
}

// reachableMembers refuses a server line whose host is a wildcard (0.0.0.0, [::]).
// ZooKeeper takes server.N=0.0.0.0:2888:3888 on member N itself, to listen on every
// address, because each ZooKeeper member dials the others from its own zoo.cfg. zkraft's
// members share one membership, the one the first leader wrote: 0.0.0.0 there would
// send every other member to itself when it dials member N.
func reachableMembers(cfg *server.Config) error {
	for _, p := range cfg.Servers {
		if host, _, err := net.SplitHostPort(p.RaftAddr); err == nil && host != "" && isWildcard(host) {
			return fmt.Errorf("server.%s: %s is not an address the other members can reach; name member %s's host (it listens there)", p.ID, host, p.ID)
		}
	}
	return nil
}

// isWildcard reports whether host listens on every address.
func isWildcard(host string) bool {
	ip := net.ParseIP(host)
	return host == "" || (ip != nil && ip.IsUnspecified())
}
