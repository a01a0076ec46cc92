package server

import "github.com/zkraft/zkraft/jute"

// authenticate handles addauth in the processor, in request order, so every later
// request of the connection carries the new identity and no earlier one does. An unknown
// scheme, and digest with a null auth, fail with AuthFailed and the connection is closed
// after the reply, as ZooKeeper does.
func (c *conn) authenticate(p *pending) {
	a := p.req.(*jute.AuthPacket)
	switch {
	case !c.srv.cfg.schemeRegistered(a.Scheme):
		// No provider for the scheme (digest may be disabled): AuthFailed, as for any
		// unknown scheme.
		c.authFailed(a.Scheme)
		p.err, p.close = jute.ErrAuthFailed, true
	case a.Scheme == "digest":
		if a.Auth == nil {
			// ZooKeeper's DigestAuthenticationProvider makes a String of the null auth
			// and fails with the NullPointerException, which processPacket answers
			// AuthFailed (the connection closed after the reply).
			c.authFailed(a.Scheme)
			p.err, p.close = jute.ErrAuthFailed, true
			return
		}
		// DigestAuthenticationProvider makes a Java String of the bytes first.
		id := c.srv.digest(jute.JavaString(a.Auth))
		next := *c.caller.Load()
		next.Ids = append([]jute.Id(nil), next.Ids...)
		if c.srv.cfg.SuperDigest != "" && id == c.srv.cfg.SuperDigest {
			next.Super = true
			next.Ids = appendID(next.Ids, jute.Id{Scheme: "super", Id: ""})
		}
		next.Ids = appendID(next.Ids, jute.Id{Scheme: "digest", Id: id})
		c.caller.Store(&next)
	case a.Scheme == "ensemble":
		c.authenticateEnsemble(p, a.Auth)
	case a.Scheme == "ip":
		// The connection already has its ip identity.
	case a.Scheme == "x509":
		// X509AuthenticationProvider checks the connection's certificate again: a client
		// that showed one keeps its identity; any other fails as an unknown scheme.
		if !c.hasX509() {
			c.authFailed(a.Scheme)
			p.err, p.close = jute.ErrAuthFailed, true
		}
	default:
		c.authFailed(a.Scheme)
		p.err, p.close = jute.ErrAuthFailed, true
	}
}

// authFailed logs a failed addauth. It is not counted in auth_failed_count: ZooKeeper
// 3.8 counts only failed TLS handshakes there (tls.go), not what processPacket answers
// AuthFailed.
func (c *conn) authFailed(scheme string) {
	c.srv.log.Warn("authentication failed", "scheme", scheme, "client", c.nc.RemoteAddr().String())
}

// hasX509 reports whether the client showed a certificate at connect.
func (c *conn) hasX509() bool {
	for _, id := range c.Caller().Ids {
		if id.Scheme == "x509" {
			return true
		}
	}
	return false
}

func appendID(ids []jute.Id, id jute.Id) []jute.Id {
	for _, have := range ids {
		if have == id {
			return ids
		}
	}
	return append(ids, id)
}
