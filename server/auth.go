package server

import (
	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/jute"
)

// authenticate handles addauth in the reader, so every later request of the connection
// carries the new identity. An unknown scheme fails with AuthFailed and the connection
// is closed after the reply, as ZooKeeper does.
func (c *conn) authenticate(p *pending) {
	a := p.req.(*jute.AuthPacket)
	switch a.Scheme {
	case "digest":
		id := datatree.DigestID(string(a.Auth))
		c.authMu.Lock()
		if c.srv.cfg.SuperDigest != "" && id == c.srv.cfg.SuperDigest {
			c.super = true
			c.ids = appendID(c.ids, jute.Id{Scheme: "super", Id: ""})
		}
		c.ids = appendID(c.ids, jute.Id{Scheme: "digest", Id: id})
		c.authMu.Unlock()
	case "ip":
		// The connection already has its ip identity.
	default:
		c.srv.log.Warn("authentication failed: unknown scheme", "scheme", a.Scheme, "client", c.nc.RemoteAddr().String())
		p.err = jute.ErrAuthFailed
		p.close = true
	}
}

func appendID(ids []jute.Id, id jute.Id) []jute.Id {
	for _, have := range ids {
		if have == id {
			return ids
		}
	}
	return append(ids, id)
}
