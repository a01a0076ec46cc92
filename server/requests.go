package server

import "github.com/zkraft/zkraft/jute"

// requestRecord returns an empty record for op's request body (nil for ops without
// one) and whether zkraft knows op at all.
func requestRecord(op int32) (jute.Record, bool) {
	switch op {
	case jute.OpCreate, jute.OpCreate2, jute.OpCreateContainer:
		return &jute.CreateRequest{}, true
	case jute.OpCreateTTL:
		return &jute.CreateTTLRequest{}, true
	case jute.OpDelete:
		return &jute.DeleteRequest{}, true
	case jute.OpExists:
		return &jute.ExistsRequest{}, true
	case jute.OpGetData:
		return &jute.GetDataRequest{}, true
	case jute.OpSetData:
		return &jute.SetDataRequest{}, true
	case jute.OpGetACL:
		return &jute.GetACLRequest{}, true
	case jute.OpSetACL:
		return &jute.SetACLRequest{}, true
	case jute.OpGetChildren:
		return &jute.GetChildrenRequest{}, true
	case jute.OpGetChildren2:
		return &jute.GetChildren2Request{}, true
	case jute.OpSync:
		return &jute.SyncRequest{}, true
	case jute.OpCheck:
		return &jute.CheckVersionRequest{}, true
	case jute.OpMulti, jute.OpMultiRead:
		return &jute.MultiRequest{}, true
	case jute.OpReconfig:
		return &jute.ReconfigRequest{}, true
	case jute.OpCheckWatches:
		return &jute.CheckWatchesRequest{}, true
	case jute.OpRemoveWatches:
		return &jute.RemoveWatchesRequest{}, true
	case jute.OpAuth:
		return &jute.AuthPacket{}, true
	case jute.OpSetWatches:
		return &jute.SetWatches{}, true
	case jute.OpSetWatches2:
		return &jute.SetWatches2{}, true
	case jute.OpSASL:
		return &jute.GetSASLRequest{}, true
	case jute.OpGetEphemerals:
		return &jute.GetEphemeralsRequest{}, true
	case jute.OpGetAllChildrenNumber:
		return &jute.GetAllChildrenNumberRequest{}, true
	case jute.OpAddWatch:
		return &jute.AddWatchRequest{}, true
	case jute.OpPing, jute.OpWhoAmI, jute.OpCloseSession:
		return nil, true
	}
	return nil, false
}
