package server

import (
	"slices"
	"sync/atomic"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// ZooKeeper's EnsembleAuthenticationProvider (authProvider.N=
// org.apache.zookeeper.server.auth.EnsembleAuthenticationProvider, with the names in
// zookeeper.ensembleAuthName): a client names the ensemble it means to reach with
// `addauth ensemble <name>`, and a server of another ensemble closes its connection, so
// the client tries another server instead of failing. It gives no identity, and no ACL
// may name the scheme.

// ensembleAuth counts the outcomes, as mntr's ensemble_auth_success, _fail and _skip.
type ensembleAuth struct {
	success, fail, skip atomic.Int64
	lastLogged          atomic.Int64 // unix ms of the last failure logged: one a second at most
}

// authenticateEnsemble handles addauth ensemble: an empty name, or a server given no
// names, lets it through; a name in the list too; any other closes the connection at
// once, with no reply (ZooKeeper closes it with FAILED_HANDSHAKE).
func (c *conn) authenticateEnsemble(p *pending, name []byte) {
	e := &c.srv.ensemble
	names := c.srv.cfg.EnsembleNames
	switch {
	case len(name) == 0 || names == nil:
		e.skip.Add(1)
	case slices.Contains(names, jute.JavaString(name)):
		e.success.Add(1)
	default:
		e.fail.Add(1)
		now := time.Now().UnixMilli()
		if last := e.lastLogged.Load(); now-last > 1000 && e.lastLogged.CompareAndSwap(last, now) {
			c.srv.log.Warn("unexpected ensemble name", "name", jute.JavaString(name), "client", c.ip)
		}
		p.err, p.close = jute.ErrAuthFailed, true
		c.close(closedHandshake)
	}
}

func (e *ensembleAuth) reset() {
	e.success.Store(0)
	e.fail.Store(0)
	e.skip.Store(0)
}
