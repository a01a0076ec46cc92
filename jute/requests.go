package jute

// NewRequest returns an empty record for the request body of op (nil for ops without
// one: ping, whoAmI, closeSession) and whether op is a client op code at all.
func NewRequest(op int32) (Record, bool) {
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
