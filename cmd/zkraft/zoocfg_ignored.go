package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/zkraft/zkraft/server"
)

// ignoredKey is a ZooKeeper key that has no effect in zkraft: a warning names it and
// why. read, if set, refuses a value ZooKeeper's QuorumPeerConfig refuses, so a zoo.cfg
// ZooKeeper would not start does not start zkraft either; initLimit is also kept to be
// shown (a member's conf prints it, as ZooKeeper's does).
type ignoredKey struct {
	why  string
	read func(*server.Config, string) error
}

var (
	anyInt  = intKey(func(*server.Config, int) {})
	anyBool = configBool(func(*server.Config, bool) {})
)

const (
	raftTiming     = "zkraft's Raft timing follows tickTime"
	globalSessions = "every zkraft session is global"
	multiAddress   = "a zkraft member has the one address of its server line"
	noJVM          = "there is no JVM to watch"
	quorumSASL     = "zkraft's members authenticate with TLS (sslQuorum), not SASL"
)

var ignoredKeys = map[string]ignoredKey{
	"initLimit":                               {raftTiming, intKey(func(c *server.Config, n int) { c.InitLimit = n })},
	"connectToLearnerMasterLimit":             {raftTiming, anyInt},
	"autopurge.purgeInterval":                 {"zkraft compacts its log behind snapshots on its own", anyInt},
	"standaloneEnabled":                       {"zkraft runs standalone when no servers are listed", anyBool},
	"clientPortListenBacklog":                 {"Go listens with the system's backlog (net.core.somaxconn)", anyInt},
	"localSessionsEnabled":                    {globalSessions, anyBool},
	"localSessionsUpgradingEnabled":           {globalSessions, anyBool},
	"quorumListenOnAllIPs":                    {"a member listens on the addresses of its own server line", anyBool},
	"syncEnabled":                             {"an observer keeps the log as every member does", anyBool},
	"observerMasterPort":                      {"observers follow the leader over its peer port", anyInt},
	"quorum.cnxn.threads.size":                {"zkraft's members need no connection threads", anyInt},
	"electionAlg":                             {"zkraft elects its leader with Raft", electionAlg},
	"peerType":                                {"a member's role is the one its server line gives", peerType},
	"multiAddress.enabled":                    {multiAddress, anyBool},
	"multiAddress.reachabilityCheckEnabled":   {multiAddress, anyBool},
	"multiAddress.reachabilityCheckTimeoutMs": {multiAddress, anyInt},
	"quorum.auth.enableSasl":                  {quorumSASL, anyBool},
	"quorum.auth.serverRequireSasl":           {quorumSASL, refuseOn(quorumSASL)},
	"quorum.auth.learnerRequireSasl":          {quorumSASL, refuseOn(quorumSASL)},
	"preAllocSize":                            {"not needed by zkraft's log", nil},
	"requireClientAuthScheme":                 {"ZooKeeper 3.8 does not read it either; sessionRequireClientSASLAuth=true requires SASL", nil},
	"jaasLoginRenew":                          {"it renews Kerberos logins; zkraft's SASL is DIGEST-MD5, which has none", nil},
	"kerberos.removeHostFromPrincipal":        {"it rewrites Kerberos names; a DIGEST-MD5 identity is the user name", nil},
	"kerberos.removeRealmFromPrincipal":       {"it rewrites Kerberos names; a DIGEST-MD5 identity is the user name", nil},
	"sslQuorumReloadCertFiles":                {"zkraft reads the member certificates at start; restart a member to load new ones", anyBool},
}

// electionAlg accepts 3, the only algorithm ZooKeeper 3.8 has left.
func electionAlg(_ *server.Config, v string) error {
	if n, err := strconv.ParseInt(v, 10, 32); err != nil || n != 3 {
		return fmt.Errorf("%q: only 3 is supported, as in ZooKeeper", v)
	}
	return nil
}

func peerType(_ *server.Config, v string) error {
	if !strings.EqualFold(v, "observer") && !strings.EqualFold(v, "participant") {
		return fmt.Errorf("%q is not observer or participant", v)
	}
	return nil
}

// refuseOn accepts a boolean key that is false: true asks for something zkraft does not
// do, and a member is never started with weaker checks than the operator meant.
func refuseOn(why string) func(*server.Config, string) error {
	return func(c *server.Config, v string) error {
		if err := anyBool(c, v); err != nil {
			return err
		}
		if strings.EqualFold(v, "true") {
			return errors.New(why)
		}
		return nil
	}
}
