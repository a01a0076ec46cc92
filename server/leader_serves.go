package server

// leaderServes=no (ZooKeeper's zookeeper.leaderServes): the leader's client port serves
// nobody, so it spends itself on coordinating writes. Its handshakes are refused and its
// four-letter words answer as a member that does not serve, as ZooKeeper's leader, which
// then has no ZooKeeperServer on its client port. Its AdminServer still serves (ZooKeeper
// hands that one the leader's server). A member that becomes leader drops its clients,
// which move to the followers, as every client of a ZooKeeper member does in an election.

// leaderRefusesClients reports whether this member leads with leaderServes=no.
func (s *Server) leaderRefusesClients() bool {
	return s.cfg.LeaderServesNo && s.node.IsClustered() && s.node.IsLeader()
}

// clientPortServing is serving as the client port sees it: four-letter words and
// handshakes.
func (s *Server) clientPortServing() bool { return s.serving() && !s.leaderRefusesClients() }

// dropClientsOfLeader drops every client connection of a member that has become leader
// with leaderServes=no.
func (s *Server) dropClientsOfLeader() {
	if !s.leaderRefusesClients() {
		return
	}
	if n := s.dropClients(closedLeaderServesNo); n > 0 {
		s.log.Info("leading with leaderServes=no: dropped client connections", "count", n)
	}
}
