package jute

import "fmt"

// MultiOp is one operation of a multi or multiRead request.
type MultiOp struct {
	Type int32  // OpCreate, OpCreate2, OpCreateContainer, OpCreateTTL, OpDelete, OpSetData, OpCheck, OpGetData, OpGetChildren
	Req  Record // the op's request record, of the type MultiOpRecord gives
}

// MultiRequest is the body of multi (op 14) and multiRead (op 22): a list of
// (MultiHeader, record) pairs ended by a header with done set.
type MultiRequest struct {
	Ops []MultiOp
}

// MultiOpRecord returns a new, empty request record for a multi op type, or nil if the
// type may not appear in a multi.
func MultiOpRecord(op int32) Record {
	switch op {
	case OpCreate, OpCreate2, OpCreateContainer:
		return &CreateRequest{}
	case OpCreateTTL:
		return &CreateTTLRequest{}
	case OpDelete:
		return &DeleteRequest{}
	case OpSetData:
		return &SetDataRequest{}
	case OpCheck:
		return &CheckVersionRequest{}
	case OpGetData:
		return &GetDataRequest{}
	case OpGetChildren:
		return &GetChildrenRequest{}
	}
	return nil
}

// Encode writes the ops and the closing header.
func (m *MultiRequest) Encode(e *Encoder) {
	for _, op := range m.Ops {
		(&MultiHeader{Type: op.Type, Done: false, Err: -1}).Encode(e)
		op.Req.Encode(e)
	}
	(&MultiHeader{Type: -1, Done: true, Err: -1}).Encode(e)
}

// Decode reads ops until the closing header. An op type that cannot be in a multi fails
// the decode, as ZooKeeper fails it with a marshalling error.
func (m *MultiRequest) Decode(d *Decoder) {
	m.Ops = m.Ops[:0]
	for d.Err == nil {
		var h MultiHeader
		h.Decode(d)
		if d.Err != nil || h.Done {
			return
		}
		r := MultiOpRecord(h.Type)
		if r == nil {
			d.Err = fmt.Errorf("jute: op %d cannot be part of a multi", h.Type)
			return
		}
		r.Decode(d)
		m.Ops = append(m.Ops, MultiOp{Type: h.Type, Req: r})
	}
}

// MultiResult is one op's result: Type is the op's type, or OpError with Err set.
type MultiResult struct {
	Type int32
	Err  Code
	Resp Record // CreateResponse, Create2Response, SetDataResponse, GetDataResponse, GetChildrenResponse, or nil
}

// MultiResponse is the reply body of multi and multiRead.
type MultiResponse struct {
	Results []MultiResult
}

// Encode writes each result (an error result carries an ErrorResponse) and the closing header.
func (m *MultiResponse) Encode(e *Encoder) {
	for _, r := range m.Results {
		if r.Type == OpError {
			(&MultiHeader{Type: OpError, Done: false, Err: int32(r.Err)}).Encode(e)
			(&ErrorResponse{Err: int32(r.Err)}).Encode(e)
			continue
		}
		(&MultiHeader{Type: r.Type, Done: false, Err: 0}).Encode(e)
		if r.Resp != nil {
			r.Resp.Encode(e)
		}
	}
	(&MultiHeader{Type: -1, Done: true, Err: -1}).Encode(e)
}

// Decode reads results until the closing header.
func (m *MultiResponse) Decode(d *Decoder) {
	m.Results = m.Results[:0]
	for d.Err == nil {
		var h MultiHeader
		h.Decode(d)
		if d.Err != nil || h.Done {
			return
		}
		r := MultiResult{Type: h.Type, Err: Code(h.Err)}
		switch h.Type {
		case OpError:
			var er ErrorResponse
			er.Decode(d)
			r.Err = Code(er.Err)
		case OpCreate:
			r.Resp = &CreateResponse{}
		case OpCreate2, OpCreateContainer, OpCreateTTL:
			r.Resp = &Create2Response{}
		case OpSetData:
			r.Resp = &SetDataResponse{}
		case OpGetData:
			r.Resp = &GetDataResponse{}
		case OpGetChildren:
			r.Resp = &GetChildrenResponse{}
		case OpDelete, OpCheck:
		default:
			d.Err = fmt.Errorf("jute: unknown multi result type %d", h.Type)
			return
		}
		if r.Resp != nil {
			r.Resp.Decode(d)
		}
		m.Results = append(m.Results, r)
	}
}
