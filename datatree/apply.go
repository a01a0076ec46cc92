package datatree

import "github.com/zkraft/zkraft/jute"

// Apply applies one write and returns the response record (nil when the op has none),
// the error code, and the events (nil on failure). Request records are the tree's from
// then on: it may keep their byte slices.
//
//	OpCreate                     *jute.CreateRequest    -> *jute.CreateResponse
//	OpCreate2, OpCreateContainer *jute.CreateRequest    -> *jute.Create2Response
//	OpCreateTTL                  *jute.CreateTTLRequest -> *jute.Create2Response
//	OpDelete                     *jute.DeleteRequest    -> nil
//	OpSetData                    *jute.SetDataRequest   -> *jute.SetDataResponse
//	OpSetACL                     *jute.SetACLRequest    -> *jute.SetACLResponse
//	OpCheck                      *jute.CheckVersionRequest -> nil
//	OpMulti                      *jute.MultiRequest     -> *jute.MultiResponse (see multi)
//	OpDeleteContainer            *jute.DeleteRequest    -> nil (leader cleanup, see deleteContainer)
//
// A record of the wrong type for op is ErrMarshallingError; an op that is not a tree
// write is ErrUnimplemented.
func (t *Tree) Apply(tx Txn, op int32, req jute.Record) (jute.Record, jute.Code, []Event) {
	switch op {
	case jute.OpMulti:
		r, ok := req.(*jute.MultiRequest)
		if !ok {
			return nil, jute.ErrMarshallingError, nil
		}
		return t.multi(tx, r)
	case jute.OpDeleteContainer:
		r, ok := req.(*jute.DeleteRequest)
		if !ok {
			return nil, jute.ErrMarshallingError, nil
		}
		code, ev := t.deleteContainer(tx, r.Path)
		return nil, code, ev
	}
	return t.applyOne(tx, op, req)
}

// applyOne applies an op that may also appear inside a multi.
func (t *Tree) applyOne(tx Txn, op int32, req jute.Record) (jute.Record, jute.Code, []Event) {
	switch op {
	case jute.OpCreate, jute.OpCreate2, jute.OpCreateContainer, jute.OpCreateTTL:
		a, ok := createArgsOf(op, req)
		if !ok {
			return nil, jute.ErrMarshallingError, nil
		}
		path, st, code, ev := t.create(tx, a)
		if code != jute.OK {
			return nil, code, nil
		}
		if op == jute.OpCreate {
			return &jute.CreateResponse{Path: path}, jute.OK, ev
		}
		return &jute.Create2Response{Path: path, Stat: st}, jute.OK, ev
	case jute.OpDelete:
		r, ok := req.(*jute.DeleteRequest)
		if !ok {
			return nil, jute.ErrMarshallingError, nil
		}
		code, ev := t.delete(tx, r.Path, r.Version)
		return nil, code, ev
	case jute.OpSetData:
		r, ok := req.(*jute.SetDataRequest)
		if !ok {
			return nil, jute.ErrMarshallingError, nil
		}
		resp, code, ev := t.setDataOp(tx, r)
		if code != jute.OK {
			return nil, code, nil
		}
		return resp, code, ev
	case jute.OpSetACL:
		r, ok := req.(*jute.SetACLRequest)
		if !ok {
			return nil, jute.ErrMarshallingError, nil
		}
		resp, code := t.setACLOp(tx, r)
		if code != jute.OK {
			return nil, code, nil
		}
		return resp, code, nil
	case jute.OpCheck:
		r, ok := req.(*jute.CheckVersionRequest)
		if !ok {
			return nil, jute.ErrMarshallingError, nil
		}
		return nil, t.check(tx, r), nil
	}
	return nil, jute.ErrUnimplemented, nil
}
