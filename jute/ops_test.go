package jute

import (
	"fmt"
	"testing"
)

// requestFor returns an empty request record for op as the server decodes it after the
// RequestHeader, and whether op has a body at all. The map is the test's own, written
// from ZooKeeper's FinalRequestProcessor and ClientCnxn, so that the tests and fuzzers
// do not trust a table the package under test might share.
func requestFor(op int32) (r Record, known bool) {
	switch op {
	case OpCreate, OpCreate2, OpCreateContainer:
		return &CreateRequest{}, true
	case OpCreateTTL:
		return &CreateTTLRequest{}, true
	case OpDelete:
		return &DeleteRequest{}, true
	case OpExists:
		return &ExistsRequest{}, true
	case OpGetData:
		return &GetDataRequest{}, true
	case OpSetData:
		return &SetDataRequest{}, true
	case OpGetACL:
		return &GetACLRequest{}, true
	case OpSetACL:
		return &SetACLRequest{}, true
	case OpGetChildren:
		return &GetChildrenRequest{}, true
	case OpGetChildren2:
		return &GetChildren2Request{}, true
	case OpSync:
		return &SyncRequest{}, true
	case OpCheck:
		return &CheckVersionRequest{}, true
	case OpMulti, OpMultiRead:
		return &MultiRequest{}, true
	case OpReconfig:
		return &ReconfigRequest{}, true
	case OpCheckWatches:
		return &CheckWatchesRequest{}, true
	case OpRemoveWatches:
		return &RemoveWatchesRequest{}, true
	case OpAuth:
		return &AuthPacket{}, true
	case OpSetWatches:
		return &SetWatches{}, true
	case OpSetWatches2:
		return &SetWatches2{}, true
	case OpSASL:
		return &GetSASLRequest{}, true
	case OpGetEphemerals:
		return &GetEphemeralsRequest{}, true
	case OpGetAllChildrenNumber:
		return &GetAllChildrenNumberRequest{}, true
	case OpAddWatch:
		return &AddWatchRequest{}, true
	case OpPing, OpWhoAmI, OpCloseSession:
		return nil, true
	}
	return nil, false
}

// responseFor returns an empty response record for a successful op, or nil if the
// reply is a bare header.
func responseFor(op int32) Record {
	switch op {
	case OpCreate:
		return &CreateResponse{}
	case OpCreate2, OpCreateContainer, OpCreateTTL:
		return &Create2Response{}
	case OpExists:
		return &ExistsResponse{}
	case OpGetData:
		return &GetDataResponse{}
	case OpSetData:
		return &SetDataResponse{}
	case OpGetACL:
		return &GetACLResponse{}
	case OpSetACL:
		return &SetACLResponse{}
	case OpGetChildren:
		return &GetChildrenResponse{}
	case OpGetChildren2:
		return &GetChildren2Response{}
	case OpSync:
		return &SyncResponse{}
	case OpMulti, OpMultiRead:
		return &MultiResponse{}
	case OpGetAllChildrenNumber:
		return &GetAllChildrenNumberResponse{}
	case OpGetEphemerals:
		return &GetEphemeralsResponse{}
	case OpWhoAmI:
		return &WhoAmIResponse{}
	case OpSASL:
		return &SetSASLResponse{}
	case OpAddWatch:
		return &ErrorResponse{}
	}
	return nil
}

// The op table must agree with the test's own for every op code: the same request
// record, and a client may send on its own exactly the ops ZooKeeper's Request.isValid
// takes, less check (ZOOKEEPER-2623); deleteContainer, which only the leader proposes, is
// valid and always refused.
func TestOpTableMatchesOracle(t *testing.T) {
	notRequests := map[int32]bool{OpCheck: true, OpCreateSession: true, OpDeleteContainer: true}
	rules := map[int32]ClientRule{OpCheck: NotFromClients, OpCreateSession: NotFromClients, OpDeleteContainer: RefusedFromClients}
	for op := int32(-20); op <= 200; op++ {
		want, wantKnown := requestFor(op)
		info, ok := Op(op)
		if wantKnown {
			if !ok || fmt.Sprintf("%T", want) != fmt.Sprintf("%T", info.NewRecord()) {
				t.Errorf("op %d: table %T (in it: %v), oracle %T", op, info.NewRecord(), ok, want)
			}
		} else if ok && !notRequests[op] {
			t.Errorf("op %d: in the table, not a client op code", op)
		}
		rule, special := rules[op]
		if !special {
			rule = FromClients
		}
		if ok && info.Client != rule {
			t.Errorf("op %d: client rule %d, want %d", op, info.Client, rule)
		}
		if ok && info.Name == "" {
			t.Errorf("op %d: no name", op)
		}
	}
	for _, op := range []int32{OpCreate, OpDelete, OpSetData, OpSetACL, OpCheck, OpMulti, OpReconfig,
		OpCreateSession, OpCloseSession, OpCreate2, OpCreateTTL, OpCreateContainer, OpDeleteContainer} {
		if !IsWrite(op) {
			t.Errorf("op %d is a write", op)
		}
	}
	for _, op := range []int32{OpSync, OpExists, OpGetData, OpPing, OpMultiRead, OpAuth, 999} {
		if IsWrite(op) {
			t.Errorf("op %d is not a write", op)
		}
	}
}
