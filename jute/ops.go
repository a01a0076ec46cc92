package jute

// OpInfo is what the server knows of one client op code, in one place: its request
// record, whether it changes state, whether a client may send it on its own, and the
// names the server prints for it.
type OpInfo struct {
	Name    string // ZooDefs.OpCode's name: "create", "setData", ... (log dumps)
	Short   string // FinalRequestProcessor's last-operation name cons prints ("CREA")
	Write   bool   // it changes state: it goes through the replicated log
	Request bool   // a client may send it as a request of its own (Request.isValid)
	record  func() Record
}

// ops is the table of op codes (ZooDefs.OpCode). A check is a write that only a multi may
// carry since ZooKeeper 3.9.3 and 3.8.5 (ZOOKEEPER-2623); createSession is the connect
// handshake, never a request frame; both are still decoded from a log. deleteContainer is
// the server's own (its container cleanup): 3.8's Request.isValid takes it from a client
// only to refuse it, which the server's decode does with BadArguments.
var ops = map[int32]OpInfo{
	OpCreate:               {"create", "CREA", true, true, func() Record { return &CreateRequest{} }},
	OpCreate2:              {"create2", "CREA", true, true, func() Record { return &CreateRequest{} }},
	OpCreateContainer:      {"createContainer", "CREA", true, true, func() Record { return &CreateRequest{} }},
	OpCreateTTL:            {"createTTL", "CREA", true, true, func() Record { return &CreateTTLRequest{} }},
	OpDelete:               {"delete", "DELE", true, true, func() Record { return &DeleteRequest{} }},
	OpDeleteContainer:      {"deleteContainer", "DELE", true, false, nil},
	OpSetData:              {"setData", "SETD", true, true, func() Record { return &SetDataRequest{} }},
	OpSetACL:               {"setACL", "SETA", true, true, func() Record { return &SetACLRequest{} }},
	OpCheck:                {"check", "CHEC", true, false, func() Record { return &CheckVersionRequest{} }},
	OpMulti:                {"multi", "MULT", true, true, func() Record { return &MultiRequest{} }},
	OpReconfig:             {"reconfig", "RECO", true, true, func() Record { return &ReconfigRequest{} }},
	OpCreateSession:        {"createSession", "SESS", true, false, nil},
	OpCloseSession:         {"closeSession", "CLOS", true, true, nil},
	OpSync:                 {"sync", "SYNC", false, true, func() Record { return &SyncRequest{} }},
	OpExists:               {"exists", "EXIS", false, true, func() Record { return &ExistsRequest{} }},
	OpGetData:              {"getData", "GETD", false, true, func() Record { return &GetDataRequest{} }},
	OpGetACL:               {"getACL", "GETA", false, true, func() Record { return &GetACLRequest{} }},
	OpGetChildren:          {"getChildren", "GETC", false, true, func() Record { return &GetChildrenRequest{} }},
	OpGetChildren2:         {"getChildren2", "GETC", false, true, func() Record { return &GetChildren2Request{} }},
	OpMultiRead:            {"multiRead", "MLTR", false, true, func() Record { return &MultiRequest{} }},
	OpCheckWatches:         {"checkWatches", "CHKW", false, true, func() Record { return &CheckWatchesRequest{} }},
	OpRemoveWatches:        {"removeWatches", "REMW", false, true, func() Record { return &RemoveWatchesRequest{} }},
	OpPing:                 {"ping", "PING", false, true, nil},
	OpAuth:                 {"auth", "", false, true, func() Record { return &AuthPacket{} }},
	OpSetWatches:           {"setWatches", "SETW", false, true, func() Record { return &SetWatches{} }},
	OpSetWatches2:          {"setWatches2", "STW2", false, true, func() Record { return &SetWatches2{} }},
	OpSASL:                 {"sasl", "", false, true, func() Record { return &GetSASLRequest{} }},
	OpGetEphemerals:        {"getEphemerals", "GETE", false, true, func() Record { return &GetEphemeralsRequest{} }},
	OpGetAllChildrenNumber: {"getAllChildrenNumber", "GETACN", false, true, func() Record { return &GetAllChildrenNumberRequest{} }},
	OpAddWatch:             {"addWatch", "ADDW", false, true, func() Record { return &AddWatchRequest{} }},
	OpWhoAmI:               {"whoAmI", "HOMI", false, true, nil},
}

// Op returns what the table knows of op, and whether op is in it.
func Op(op int32) (OpInfo, bool) {
	info, ok := ops[op]
	return info, ok
}

// NewRecord returns an empty record for the op's request body, nil for an op without
// one (ping, whoAmI, closeSession, createSession, deleteContainer).
func (o OpInfo) NewRecord() Record {
	if o.record == nil {
		return nil
	}
	return o.record()
}

// IsWrite reports whether op changes state and so goes through the replicated log.
func IsWrite(op int32) bool { return ops[op].Write }
