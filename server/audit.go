package server

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/jute"
)

// The audit log, ZooKeeper's (audit.enable, off by default; ZooKeeper 3.6+'s AuditHelper
// and Slf4jAuditLogger). Each event is one line of the server's log, message "audit",
// with ZooKeeper's fields in its order: session, user, ip, operation, znode, znode_type,
// acl, then result (success and invoked at INFO, failure at ERROR, as ZooKeeper logs
// them). A field ZooKeeper leaves out (null) is left out.
//
// What is audited, as in ZooKeeper 3.8:
//   - the server's start (serverStart) and stop (serverStop, result invoked), by the
//     user the server runs as;
//   - every write a client of this server sent, once its outcome is known, on the
//     server holding the connection: create (createContainer too; a createTTL alone is
//     not audited, as in ZooKeeper), delete, setData, setAcl (with the request's ACL),
//     reconfig; a multi as one line per create, delete and setData in it when it
//     succeeded, or one multiOperation failure;
//   - the deletion of a closed or expired session's ephemeral nodes
//     (ephemeralZNodeDeletionOnSessionCloseOrExpire), by the server's user, on every
//     member, as every ZooKeeper member applies it. Unlike ZooKeeper, zkraft does not
//     log them again when it replays its log at start.
//
// The user of a client's event is its identities as ZooKeeper's AuthUtil.getUsers gives
// them: each id's user name (the ip, digest's name before the colon, x509's and sasl's
// id) joined by commas, ids of schemes without a provider (super) left out.

// auditResult is an event's outcome.
type auditResult string

const (
	auditSuccess auditResult = "success"
	auditFailure auditResult = "failure"
	auditInvoked auditResult = "invoked"
)

// auditEvent is one event; an empty field is left out of the line.
type auditEvent struct {
	session, user, ip, operation, znode, znodeType, acl string
	result                                              auditResult
}

// auditSanitize drops what ZooKeeper drops from a value: tabs and line ends.
func auditSanitize(v string) string {
	return strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, v)
}

// attrs are the event's fields in ZooKeeper's order.
func (e auditEvent) attrs() []any {
	var out []any
	for _, f := range [...][2]string{{"session", e.session}, {"user", e.user}, {"ip", e.ip}, {"operation", e.operation},
		{"znode", e.znode}, {"znode_type", e.znodeType}, {"acl", e.acl}} {
		if f[1] != "" {
			out = append(out, slog.String(f[0], auditSanitize(f[1])))
		}
	}
	return append(out, slog.String("result", string(e.result)))
}

// audit logs e when the audit log is on.
func (s *Server) audit(e auditEvent) {
	if !s.cfg.Audit {
		return
	}
	level := slog.LevelInfo
	if e.result == auditFailure {
		level = slog.LevelError
	}
	s.log.Log(context.Background(), level, "audit", e.attrs()...)
}

// auditServer logs an event of the server itself (start, stop).
func (s *Server) auditServer(operation string, result auditResult) {
	s.audit(auditEvent{user: s.serverUser(), operation: operation, result: result})
}

// serverUser is the user the server runs as, Java's user.name (ZooKeeper's
// ServerCnxnFactory.getUserName without a Kerberos login).
func (s *Server) serverUser() string { return javaUserName() }

var javaUserName = sync.OnceValue(func() string {
	for _, f := range processFacts() {
		if f[0] == "user.name" {
			return f[1]
		}
	}
	return "?"
})

// auditEphemerals logs the deletion of a closed session's ephemeral nodes.
func (s *Server) auditEphemerals(session int64, paths []string) {
	if !s.cfg.Audit {
		return
	}
	user := s.serverUser()
	for _, p := range paths {
		s.audit(auditEvent{session: sessionHex(session), user: user, operation: "ephemeralZNodeDeletionOnSessionCloseOrExpire",
			znode: p, result: auditSuccess})
	}
}

// sessionHex is Java's "0x" + Long.toHexString: the bits unsigned, so a session of a
// member whose id is 128 or more is not printed negative.
func sessionHex(id int64) string { return fmt.Sprintf("0x%x", uint64(id)) }

// auditUsers is AuthUtil.getUsers of a caller's ids.
func auditUsers(ids []jute.Id) string {
	var users []string
	for _, id := range ids {
		var name string
		switch id.Scheme {
		case "ip", "x509", "sasl":
			name = id.Id
		case "digest":
			name, _, _ = strings.Cut(id.Id, ":")
		}
		if strings.TrimSpace(name) != "" {
			users = append(users, name)
		}
	}
	return strings.Join(users, ",")
}

// auditCreateMode is CreateMode's name in lower case, "" for flags that are none.
func auditCreateMode(flags int32) string {
	switch flags {
	case jute.FlagPersistent:
		return "persistent"
	case jute.FlagEphemeral:
		return "ephemeral"
	case jute.FlagPersistentSequential:
		return "persistent_sequential"
	case jute.FlagEphemeralSequential:
		return "ephemeral_sequential"
	case jute.FlagContainer:
		return "container"
	case jute.FlagPersistentWithTTL:
		return "persistent_with_ttl"
	case jute.FlagPersistentSequentialWithTTL:
		return "persistent_sequential_with_ttl"
	}
	return ""
}

// auditACL is ZKUtil.aclToString: scheme:id:perms of each entry, perms in cdrwa order,
// the entries run together.
func auditACL(acl []jute.ACL) string {
	var b strings.Builder
	for _, a := range acl {
		b.WriteString(a.Id.Scheme + ":" + a.Id.Id + ":")
		for _, p := range [...]struct {
			bit int32
			c   byte
		}{{jute.PermCreate, 'c'}, {jute.PermDelete, 'd'}, {jute.PermRead, 'r'}, {jute.PermWrite, 'w'}, {jute.PermAdmin, 'a'}} {
			if a.Perms&p.bit != 0 {
				b.WriteByte(p.c)
			}
		}
	}
	return b.String()
}

// auditWrite logs the outcome of a client's write: op and req as the client sent them,
// ids its identities when it was proposed, code and resp the outcome.
func (c *conn) auditWrite(op int32, req jute.Record, ids []jute.Id, code jute.Code, resp jute.Record) {
	if !c.srv.cfg.Audit {
		return
	}
	base := auditEvent{session: sessionHex(c.sessionID()), user: auditUsers(ids), ip: c.ip, result: auditSuccess}
	if code != jute.OK {
		base.result = auditFailure
	}
	if op == jute.OpMulti {
		c.auditMulti(base, req, resp)
		return
	}
	e, ok := auditOne(base, op, req, resp, code == jute.OK)
	if ok {
		c.srv.audit(e)
	}
}

// auditOne is the event of a write that is not a multi; false for one ZooKeeper does
// not audit.
func auditOne(e auditEvent, op int32, req, resp jute.Record, ok bool) (auditEvent, bool) {
	switch r := req.(type) {
	case *jute.CreateRequest: // create, create2, createContainer
		e.operation, e.znode, e.znodeType = "create", r.Path, auditCreateMode(r.Flags)
		if ok {
			e.znode = createdPath(resp, r.Path)
		}
	case *jute.DeleteRequest:
		e.operation, e.znode = "delete", r.Path
	case *jute.SetDataRequest:
		e.operation, e.znode = "setData", r.Path
	case *jute.SetACLRequest:
		e.operation, e.znode, e.acl = "setAcl", r.Path, auditACL(r.Acl)
	default:
		if op != jute.OpReconfig {
			return e, false
		}
		e.operation = "reconfig"
		if ok {
			e.znode = datatree.ConfigPath
		}
	}
	return e, true
}

// createdPath is the path a create's answer names, or path.
func createdPath(resp jute.Record, path string) string {
	switch r := resp.(type) {
	case *jute.CreateResponse:
		return r.Path
	case *jute.Create2Response:
		return r.Path
	}
	return path
}

// auditMulti logs a multi as ZooKeeper does: when it succeeded, a line per create,
// delete and setData in it (a create's type only when the node has the path the op
// named: ZooKeeper looks it up by the created path, which a sequential create changes);
// when it failed, one multiOperation failure.
func (c *conn) auditMulti(base auditEvent, req, resp jute.Record) {
	m, _ := req.(*jute.MultiRequest)
	r, _ := resp.(*jute.MultiResponse)
	failed := base.result == auditFailure || m == nil || r == nil || len(r.Results) != len(m.Ops)
	for i := 0; !failed && i < len(r.Results); i++ {
		failed = r.Results[i].Type == jute.OpError
	}
	if failed {
		base.operation, base.result = "multiOperation", auditFailure
		c.srv.audit(base)
		return
	}
	modes := map[string]string{}
	for _, op := range m.Ops {
		if cr, ok := op.Req.(*jute.CreateRequest); ok {
			modes[cr.Path] = auditCreateMode(cr.Flags)
		}
	}
	for i, op := range m.Ops {
		e := base
		switch q := op.Req.(type) {
		case *jute.CreateRequest:
			e.operation, e.znode = "create", createdPath(r.Results[i].Resp, q.Path)
			e.znodeType = modes[e.znode]
		case *jute.CreateTTLRequest:
			e.operation, e.znode = "create", createdPath(r.Results[i].Resp, q.Path)
			e.znodeType = modes[e.znode]
		case *jute.DeleteRequest:
			e.operation, e.znode = "delete", q.Path
		case *jute.SetDataRequest:
			e.operation, e.znode = "setData", q.Path
		default:
			continue
		}
		c.srv.audit(e)
	}
}
