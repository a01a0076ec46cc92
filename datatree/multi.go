package datatree

import "github.com/zkraft/zkraft/jute"

// multiCreateOp is how ZooKeeper's MultiOperationRecord re-types a create: it rebuilds
// each create with Op.create, so a container or TTL flag decides the op code whatever
// the header says. A create2 stays a create2, whose result carries the new node's stat
// (ZooKeeper 3.8.2 and 3.9.0, ZOOKEEPER-4026; 3.8.0 made it a plain create, without
// stat); a container flag makes createContainer, and a createTTL whose flags are not
// TTL loses its ttl. A TTL flag on a record without a ttl is ok false: ZooKeeper's
// prep step fails the whole request with a marshalling error when it reaches that op
// (it casts the record to a CreateTTLRequest), and never reaches it after an op that
// failed.
func multiCreateOp(op int32, req jute.Record) (int32, jute.Record, bool) {
	var flags int32
	switch r := req.(type) {
	case *jute.CreateRequest:
		if op == jute.OpCreateTTL {
			return 0, nil, false
		}
		flags = r.Flags
	case *jute.CreateTTLRequest:
		if op != jute.OpCreateTTL {
			return 0, nil, false
		}
		flags = r.Flags
		if m, _ := modeOf(flags); !m.ttl {
			req = &jute.CreateRequest{Path: r.Path, Data: r.Data, Acl: r.Acl, Flags: r.Flags}
		}
	default:
		return 0, nil, false
	}
	m, _ := modeOf(flags) // unknown flags act as persistent here; create refuses them
	switch {
	case m.ttl:
		if _, isTTL := req.(*jute.CreateTTLRequest); !isTTL {
			return 0, nil, false
		}
		return jute.OpCreateTTL, req, true
	case m.container:
		return jute.OpCreateContainer, req, true
	case op == jute.OpCreate2:
		return jute.OpCreate2, req, true
	}
	return jute.OpCreate, req, true
}

// multi is ZooKeeper's multi: all or nothing, each op seeing the ones before it.
//
// On failure the tree is as before, there are no events, and the reply header is OK
// (ZooKeeper puts the failure only in the results; checked with a real 3.8.0): every
// result is OpError, the ops before the failing one with Err OK, the failing one with
// its code, the rest with ErrRuntimeInconsistency.
//
// On success the results are typed as ZooKeeper's OpResult classes serialise: a create
// is OpCreate with a CreateResponse, a create2, container or TTL create is OpCreate2
// with a Create2Response, setData is OpSetData with a SetDataResponse, delete and check carry
// no record. Events are those of every op, in order.
//
// An op that cannot be in a write multi (reads included: ZooKeeper refuses to mix
// them, and a read-only multi fails in its prep step) fails the whole request with
// ErrMarshallingError, as ZooKeeper does. So does a create that multiCreateOp refuses,
// once every op before it has succeeded (ZooKeeper's prep step stops at the first op
// that fails, and answers the others RuntimeInconsistency without looking at them).
func (t *Tree) multi(tx Txn, m *jute.MultiRequest) (jute.Record, jute.Code, []Event) {
	type step struct {
		op  int32
		req jute.Record // nil: a create multiCreateOp refused
	}
	steps := make([]step, len(m.Ops))
	for i, o := range m.Ops {
		switch o.Type {
		case jute.OpCreate, jute.OpCreate2, jute.OpCreateContainer, jute.OpCreateTTL:
			op, req, ok := multiCreateOp(o.Type, o.Req)
			if !ok {
				op, req = o.Type, nil
			}
			steps[i] = step{op, req}
		case jute.OpDelete, jute.OpSetData, jute.OpCheck:
			steps[i] = step{o.Type, o.Req}
		default:
			return nil, jute.ErrMarshallingError, nil
		}
	}

	t.undo = make([]func(), 0, 2*len(steps))
	if t.enforceQuota {
		// Even with no quota yet: one the multi creates must not apply to its own later
		// ops, which ZooKeeper checks against the committed tree.
		t.multiQuota = t.quotaBase()
	}
	applied := false
	defer func() {
		t.undo, t.multiQuota = nil, nil
		t.endMulti(applied)
	}()
	results := make([]jute.MultiResult, len(steps))
	var events []Event
	for i, s := range steps {
		resp, code, ev := jute.Record(nil), jute.ErrMarshallingError, []Event(nil)
		if s.req != nil {
			resp, code, ev = t.applyOne(tx, s.op, s.req)
		}
		if code == jute.ErrMarshallingError {
			t.rollback()
			return nil, code, nil
		}
		if code != jute.OK {
			t.rollback()
			for j := range results {
				r := jute.MultiResult{Type: jute.OpError, Err: jute.ErrRuntimeInconsistency}
				switch {
				case j < i:
					r.Err = jute.OK
				case j == i:
					r.Err = code
				}
				results[j] = r
			}
			return &jute.MultiResponse{Results: results}, jute.OK, nil
		}
		results[i] = multiResult(s.op, resp)
		events = append(events, ev...)
	}
	applied = true
	return &jute.MultiResponse{Results: results}, jute.OK, events
}

func multiResult(op int32, resp jute.Record) jute.MultiResult {
	switch op {
	case jute.OpCreate:
		return jute.MultiResult{Type: jute.OpCreate, Resp: resp}
	case jute.OpCreate2, jute.OpCreateContainer, jute.OpCreateTTL:
		return jute.MultiResult{Type: jute.OpCreate2, Resp: resp}
	case jute.OpSetData:
		return jute.MultiResult{Type: jute.OpSetData, Resp: resp}
	}
	return jute.MultiResult{Type: op}
}

// rollback undoes the changes of the running multi, newest first.
func (t *Tree) rollback() {
	for i := len(t.undo) - 1; i >= 0; i-- {
		t.undo[i]()
	}
	t.undo = t.undo[:0]
}
