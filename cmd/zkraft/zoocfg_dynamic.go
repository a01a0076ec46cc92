package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/zkraft/zkraft/quorum"
)

// readDynamicConfig reads the members from ZooKeeper's dynamic configuration file (the
// zoo.cfg key dynamicConfigFile, as ZooKeeper 3.5+ and reconfig write it): server.N
// lines only, as QuorumPeerConfig.parse takes them. Its version is the file name's
// suffix, never a key; another key is refused, as ZooKeeper refuses it.
func readDynamicConfig(path string) ([]quorum.Peer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	props, err := readProperties(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	var peers []quorum.Peer
	for _, p := range props {
		key, val := strings.TrimSpace(p.key), strings.TrimSpace(p.value)
		switch {
		case key == "version":
			return nil, fmt.Errorf("%s: line %d: a dynamic file has no version inside (it is the file name's suffix)", path, p.line)
		case strings.HasPrefix(key, "group") || strings.HasPrefix(key, "weight"):
			return nil, fmt.Errorf("%s: line %d: %s: zkraft has no hierarchical quorums", path, p.line, key)
		case !strings.HasPrefix(key, "server."):
			return nil, fmt.Errorf("%s: line %d: %s is not a server.N line: only those belong in a dynamic file", path, p.line, key)
		}
		peer, err := quorum.ParsePeer(strings.TrimPrefix(key, "server."), val)
		if err != nil {
			return nil, fmt.Errorf("%s: line %d: %s: %v", path, p.line, key, err)
		}
		peers = append(peers, peer)
	}
	return peers, nil
}
