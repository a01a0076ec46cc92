package server

import (
	"strings"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/watch"
)

// read answers a request that does not change state, under the state machine's read
// lock: a watch it sets is registered before any later change can be applied.
func (c *conn) read(t *datatree.Tree, p *pending, zxid int64) (jute.Code, jute.Record) {
	switch p.op {
	case jute.OpPing, jute.OpAuth:
		return jute.OK, nil
	case jute.OpExists:
		return c.exists(t, p.req.(*jute.ExistsRequest))
	case jute.OpGetData:
		r := p.req.(*jute.GetDataRequest)
		return c.getData(t, r.Path, r.Watch)
	case jute.OpGetChildren:
		r := p.req.(*jute.GetChildrenRequest)
		kids, _, code := c.getChildren(t, r.Path, r.Watch)
		if code != jute.OK {
			return code, nil
		}
		return jute.OK, &jute.GetChildrenResponse{Children: kids}
	case jute.OpGetChildren2:
		r := p.req.(*jute.GetChildren2Request)
		kids, st, code := c.getChildren(t, r.Path, r.Watch)
		if code != jute.OK {
			return code, nil
		}
		return jute.OK, &jute.GetChildren2Response{Children: kids, Stat: c.shownStat(t, r.Path, st)}
	case jute.OpGetACL:
		return c.getACL(t, p.req.(*jute.GetACLRequest).Path)
	case jute.OpGetAllChildrenNumber:
		path := p.req.(*jute.GetAllChildrenNumberRequest).Path
		if code := t.CheckACL(path, jute.PermRead, c.Caller()); code != jute.OK {
			return code, nil
		}
		n, code := t.CountDescendants(path)
		if code != jute.OK {
			return code, nil
		}
		return jute.OK, &jute.GetAllChildrenNumberResponse{TotalNumber: n}
	case jute.OpGetEphemerals:
		prefix := p.req.(*jute.GetEphemeralsRequest).PrefixPath
		return jute.OK, &jute.GetEphemeralsResponse{Ephemerals: nonNil(t.Ephemerals(c.sessionID(), prefix))}
	case jute.OpWhoAmI:
		return jute.OK, &jute.WhoAmIResponse{ClientInfo: c.whoAmI()}
	case jute.OpCheckWatches:
		r := p.req.(*jute.CheckWatchesRequest)
		switch {
		case !watch.KnownType(r.Type):
			return jute.ErrMarshallingError, nil
		case !c.watches().Has(c, r.Path, r.Type):
			return jute.ErrNoWatcher, nil
		}
		return jute.OK, nil
	case jute.OpRemoveWatches:
		r := p.req.(*jute.RemoveWatchesRequest)
		switch {
		case !watch.KnownType(r.Type):
			return jute.ErrMarshallingError, nil
		case !c.watches().Remove(c, r.Path, r.Type):
			return jute.ErrNoWatcher, nil
		}
		return jute.OK, nil
	case jute.OpAddWatch:
		r := p.req.(*jute.AddWatchRequest)
		k := watch.Persistent
		if r.Mode == jute.AddWatchPersistentRecursive {
			k = watch.PersistentRecursive
		} else if r.Mode != jute.AddWatchPersistent {
			// ZooKeeper's WatcherMode.fromZooDef throws on an unknown mode, which its
			// FinalRequestProcessor answers with MarshallingError.
			return jute.ErrMarshallingError, nil
		}
		c.watches().Add(c, r.Path, k)
		return jute.OK, &jute.ErrorResponse{Err: 0}
	case jute.OpSetWatches:
		r := p.req.(*jute.SetWatches)
		c.setWatches(t, r.RelativeZxid, r.DataWatches, r.ExistWatches, r.ChildWatches, nil, nil)
		return jute.OK, nil
	case jute.OpSetWatches2:
		r := p.req.(*jute.SetWatches2)
		c.setWatches(t, r.RelativeZxid, r.DataWatches, r.ExistWatches, r.ChildWatches, r.PersistentWatches, r.PersistentRecursiveWatches)
		return jute.OK, nil
	case jute.OpMultiRead:
		m := p.req.(*jute.MultiRequest)
		switch readKinds(m) {
		case mixedOps:
			// ZooKeeper's MultiOperationRecord refuses to mix reads and writes as it is
			// read: MarshallingError, no body.
			return jute.ErrMarshallingError, nil
		case writeOps:
			// Writes alone are a valid record; ZooKeeper's FinalRequestProcessor has begun
			// its MultiResponse when it fails on the first ("Invalid type of readOp"), and
			// sends it, empty, behind the MarshallingError.
			return jute.ErrMarshallingError, &jute.MultiResponse{}
		}
		return jute.OK, c.multiRead(t, m)
	}
	return jute.ErrUnimplemented, nil
}

func (c *conn) watches() *watch.Registry { return c.srv.node.FSM.Watches }

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// exists answers a node's stat, or NoNode and then its watch waits for the creation. With
// ExistsACLCheck, a node that exists needs READ (ZooKeeper 3.9.2, ZOOKEEPER-2590): NoAuth
// sets no watch. A missing node is never checked, so anyone may still wait for it. A
// path holding a NUL is BadArguments, and sets no watch (ZooKeeper's exists alone checks
// for it; its other reads answer NoNode).
func (c *conn) exists(t *datatree.Tree, r *jute.ExistsRequest) (jute.Code, jute.Record) {
	if strings.IndexByte(r.Path, 0) >= 0 {
		return jute.ErrBadArguments, nil
	}
	st, code := t.Stat(r.Path)
	if code == jute.OK && c.srv.cfg.ExistsACLCheck {
		if code := t.CheckACL(r.Path, jute.PermRead, c.Caller()); code != jute.OK {
			return code, nil
		}
	}
	if r.Watch && (code == jute.OK || code == jute.ErrNoNode) {
		c.watches().Add(c, r.Path, watch.Data)
	}
	if code != jute.OK {
		return code, nil
	}
	return jute.OK, &jute.ExistsResponse{Stat: c.shownStat(t, r.Path, st)}
}

func (c *conn) getData(t *datatree.Tree, path string, w bool) (jute.Code, jute.Record) {
	if code := t.CheckACL(path, jute.PermRead, c.Caller()); code != jute.OK {
		return code, nil
	}
	data, st, code := t.Get(path)
	if code != jute.OK {
		return code, nil
	}
	if w {
		c.watches().Add(c, path, watch.Data)
	}
	if path == datatree.ConfigPath {
		data, st = configShown(c.srv.cfg.ReconfigEnabled, data, st)
	}
	return jute.OK, &jute.GetDataResponse{Data: data, Stat: st}
}

func (c *conn) getChildren(t *datatree.Tree, path string, w bool) ([]string, jute.Stat, jute.Code) {
	if code := t.CheckACL(path, jute.PermRead, c.Caller()); code != jute.OK {
		return nil, jute.Stat{}, code
	}
	kids, st, code := t.Children(path)
	if code != jute.OK {
		return nil, st, code
	}
	if w {
		c.watches().Add(c, path, watch.Child)
	}
	return nonNil(kids), st, jute.OK
}

// getACL needs READ or ADMIN; without ADMIN, digest hashes are hidden as ZooKeeper 3.8 hides them.
func (c *conn) getACL(t *datatree.Tree, path string) (jute.Code, jute.Record) {
	caller := c.Caller()
	if code := t.CheckACL(path, jute.PermRead|jute.PermAdmin, caller); code != jute.OK {
		return code, nil
	}
	acl, st, code := t.ACL(path)
	if code != jute.OK {
		return code, nil
	}
	if t.CheckACL(path, jute.PermAdmin, caller) != jute.OK {
		acl = datatree.RedactACL(acl)
	}
	return jute.OK, &jute.GetACLResponse{Acl: acl, Stat: c.shownStat(t, path, st)}
}

// setWatches restores a reconnecting client's watches with ZooKeeper's relativeZxid
// rule: a change the client missed fires at once instead of being watched.
func (c *conn) setWatches(t *datatree.Tree, rel int64, data, exist, child, persistent, recursive []string) {
	fire := func(typ int32, path string) {
		c.Notify(&jute.WatcherEvent{Type: typ, State: jute.StateSyncConnected, Path: path}, -1)
	}
	reg := c.watches()
	for _, p := range data {
		st, code := t.Stat(p)
		switch {
		case code != jute.OK:
			fire(jute.EventNodeDeleted, p)
		case st.Mzxid > rel:
			fire(jute.EventNodeDataChanged, p)
		default:
			reg.Add(c, p, watch.Data)
		}
	}
	for _, p := range exist {
		if _, code := t.Stat(p); code == jute.OK {
			fire(jute.EventNodeCreated, p)
		} else {
			reg.Add(c, p, watch.Data)
		}
	}
	for _, p := range child {
		st, code := t.Stat(p)
		switch {
		case code != jute.OK:
			fire(jute.EventNodeDeleted, p)
		case st.Pzxid > rel:
			fire(jute.EventNodeChildrenChanged, p)
		default:
			reg.Add(c, p, watch.Child)
		}
	}
	for _, p := range persistent {
		reg.Add(c, p, watch.Persistent)
	}
	for _, p := range recursive {
		reg.Add(c, p, watch.PersistentRecursive)
	}
}

// The kinds of op a multi holds, as ZooKeeper's MultiOperationRecord tells them apart.
const (
	readOps  = iota // getData and getChildren only, or none at all
	writeOps        // writes only (the ops of a multi)
	mixedOps        // both, which ZooKeeper refuses as it reads the record
)

// readKinds tells which kinds of op m holds.
func readKinds(m *jute.MultiRequest) int {
	reads, writes := false, false
	for _, op := range m.Ops {
		switch op.Req.(type) {
		case *jute.GetDataRequest, *jute.GetChildrenRequest:
			reads = true
		default:
			writes = true
		}
	}
	switch {
	case reads && writes:
		return mixedOps
	case writes:
		return writeOps
	}
	return readOps
}

// multiRead runs each read of m (it holds reads only) on its own: a failing op is an error
// result, the others still answer (multiRead is not atomic).
func (c *conn) multiRead(t *datatree.Tree, m *jute.MultiRequest) *jute.MultiResponse {
	out := &jute.MultiResponse{Results: make([]jute.MultiResult, 0, len(m.Ops))}
	for _, op := range m.Ops {
		var code jute.Code
		var body jute.Record
		switch r := op.Req.(type) {
		// Looked up as they are, as ZooKeeper's multiRead does (no path check: "/a/" is
		// NoNode, "" the root).
		case *jute.GetDataRequest:
			code, body = c.getData(t, r.Path, false)
		case *jute.GetChildrenRequest:
			var kids []string
			kids, _, code = c.getChildren(t, r.Path, false)
			body = &jute.GetChildrenResponse{Children: kids}
		}
		if code != jute.OK {
			out.Results = append(out.Results, jute.MultiResult{Type: jute.OpError, Err: code})
			continue
		}
		out.Results = append(out.Results, jute.MultiResult{Type: op.Type, Resp: body})
	}
	return out
}

// whoAmI lists the connection's identities as ZooKeeper's ClientInfo (digest users by name).
func (c *conn) whoAmI() []jute.ClientInfo {
	caller := c.Caller()
	out := make([]jute.ClientInfo, 0, len(caller.Ids))
	// ZooKeeper lists the identities added by addauth first and the connection's ip last.
	ids := make([]jute.Id, 0, len(caller.Ids))
	for _, id := range caller.Ids {
		if id.Scheme != "ip" {
			ids = append(ids, id)
		}
	}
	for _, id := range caller.Ids {
		if id.Scheme == "ip" {
			ids = append(ids, id)
		}
	}
	for _, id := range ids {
		user := id.Id
		if id.Scheme == "digest" {
			if i := strings.IndexByte(user, ':'); i >= 0 {
				user = user[:i]
			}
		}
		// ZooKeeper names the user through the scheme's provider, if any (AuthUtil.getUser):
		// none serves "super" (the x509 super user's id holds its subject), nor sasl
		// without SASLAuthenticationProvider.
		if id.Scheme == "super" || (id.Scheme == "sasl" && !c.srv.cfg.SASL.AuthProvider) {
			user = ""
		}
		out = append(out, jute.ClientInfo{AuthScheme: id.Scheme, User: user})
	}
	return out
}
