package datatree

import (
	"fmt"

	"github.com/zkraft/zkraft/jute"
)

// createMode is CreateMode.
type createMode struct {
	ephemeral, sequential, container, ttl bool
}

// modeOf is CreateMode.fromFlag; ok is false for an unknown flag (BadArguments).
func modeOf(flags int32) (createMode, bool) {
	switch flags {
	case jute.FlagPersistent:
		return createMode{}, true
	case jute.FlagEphemeral:
		return createMode{ephemeral: true}, true
	case jute.FlagPersistentSequential:
		return createMode{sequential: true}, true
	case jute.FlagEphemeralSequential:
		return createMode{ephemeral: true, sequential: true}, true
	case jute.FlagContainer:
		return createMode{container: true}, true
	case jute.FlagPersistentWithTTL:
		return createMode{ttl: true}, true
	case jute.FlagPersistentSequentialWithTTL:
		return createMode{ttl: true, sequential: true}, true
	}
	return createMode{}, false
}

// createArgs is one create request, whatever its record.
type createArgs struct {
	op    int32 // OpCreate, OpCreate2, OpCreateContainer or OpCreateTTL: decides the node kind
	path  string
	data  []byte
	acl   []jute.ACL
	flags int32
	ttl   int64 // -1 unless the request was a CreateTTLRequest
}

func createArgsOf(op int32, req jute.Record) (createArgs, bool) {
	switch r := req.(type) {
	case *jute.CreateRequest:
		if op == jute.OpCreateTTL {
			return createArgs{}, false
		}
		return createArgs{op: op, path: r.Path, data: r.Data, acl: r.Acl, flags: r.Flags, ttl: -1}, true
	case *jute.CreateTTLRequest:
		if op != jute.OpCreateTTL {
			return createArgs{}, false
		}
		return createArgs{op: op, path: r.Path, data: r.Data, acl: r.Acl, flags: r.Flags, ttl: r.Ttl}, true
	}
	return createArgs{}, false
}

// create is PrepRequestProcessor.pRequest2TxnCreate followed by DataTree.createNode.
// The checks run in ZooKeeper's order: flags, TTL rules, path shape, ACL, parent,
// CREATE permission, sequential name, full path, existence, ephemeral parent, quota.
// The stat is the new node's as created, before quota bookkeeping may fill it in.
func (t *Tree) create(tx Txn, a createArgs) (path string, st jute.Stat, err jute.Code, ev []Event) {
	mode, ok := modeOf(a.flags)
	if !ok {
		return "", jute.Stat{}, jute.ErrBadArguments, nil
	}
	if mode.ttl && !t.opts.ExtendedTypes {
		return "", jute.Stat{}, jute.ErrUnimplemented, nil
	}
	// EphemeralType.validateTTL.
	if mode.ttl {
		if a.ttl <= 0 || a.ttl > MaxTTL {
			return "", jute.Stat{}, jute.ErrBadArguments, nil
		}
	} else if a.ttl >= 0 {
		return "", jute.Stat{}, jute.ErrBadArguments, nil
	}
	if a.op == jute.OpCreateTTL && !mode.ttl {
		// ZooKeeper lets createTTL with a non-TTL mode and a negative ttl through its
		// checks and then fails applying it (TTL.toEphemeralOwner throws); refuse it here.
		return "", jute.Stat{}, jute.ErrBadArguments, nil
	}
	parentPath, _, ok := splitParent(a.path)
	if !ok {
		return "", jute.Stat{}, jute.ErrBadArguments, nil
	}
	acl, code := t.opts.fixupACL(a.acl, tx.Caller)
	if code != jute.OK {
		return "", jute.Stat{}, code, nil
	}
	parent := t.lookup(parentPath)
	if parent == nil {
		return "", jute.Stat{}, jute.ErrNoNode, nil
	}
	if code := t.opts.checkACL(t.acls.get(parent.acl), jute.PermCreate, tx.Caller); code != jute.OK {
		return "", jute.Stat{}, code, nil
	}
	path = a.path
	if mode.sequential {
		path += fmt.Sprintf("%010d", parent.cversion)
	}
	if !validPath(path) {
		return "", jute.Stat{}, jute.ErrBadArguments, nil
	}
	name := path[len(parentPath)+1:]
	taken, at := t.childAt(parent, name)
	if taken != 0 || path == "/" {
		return "", jute.Stat{}, jute.ErrNodeExists, nil
	}
	if t.kind(parent) == kindEphemeral {
		return "", jute.Stat{}, jute.ErrNoChildrenForEphemera, nil
	}
	if code := t.checkQuota(path, int64(len(a.data)), 1); code != jute.OK {
		return "", jute.Stat{}, code, nil
	}

	// The node's kind comes from the op, as DataTree.processTxn decides it: a plain
	// create is ephemeral or persistent (a container flag on OpCreate makes a
	// persistent node), createContainer always makes a container.
	var owner int64
	switch {
	case a.op == jute.OpCreateContainer:
		owner = containerOwner
	case a.op == jute.OpCreateTTL:
		owner = ttlOwner(a.ttl)
	case mode.ephemeral:
		owner = tx.Caller.Session
	}
	ps := parent.stat()
	ps.Cversion++
	ps.Pzxid = tx.Zxid
	t.setStat(parent, ps)
	id, n := t.newNode(name, a.data, t.acls.acquire(acl), storedStat{
		Czxid: tx.Zxid, Mzxid: tx.Zxid, Pzxid: tx.Zxid,
		Ctime: tx.Time, Mtime: tx.Time,
		EphemeralOwner: owner,
	})
	t.link(parent, path, id, n, at) // nothing changed parent's children since childAt
	st = t.clientStat(n)
	t.quotaCreated(path, n)
	return path, st, jute.OK, []Event{
		{Type: jute.EventNodeCreated, Path: path, ACL: t.acls.get(n.acl)},
		{Type: jute.EventNodeChildrenChanged, Path: eventParent(parentPath), ACL: t.acls.get(parent.acl)},
	}
}
