package jute

// OpInfo is what the server knows of one client op code, in one place: its request
// record, whether it changes state, what becomes of it sent by a client, and the names
// the server prints for it.
type OpInfo struct {
	Name   string     // ZooDefs.OpCode's name: "create", "setData", ... (log dumps)
	Short  string     // FinalRequestProcessor's last-operation name cons prints ("CREA")
	Write  bool       // it changes state: it goes through the replicated log
	Client ClientRule // what the server does with it arriving from a client
	record func() Record
}

// ClientRule is what the server does with an op arriving from a client as a request of
// its own (ZooKeeper's Request.isValid and PrepRequestProcessor).
type ClientRule uint8

const (
	// NotFromClients is answered Unimplemented at zxid -1, its body unread, and the
	// connection is closed once that reply is written (UnimplementedRequestProcessor).
	NotFromClients ClientRule = iota
	// FromClients is a request a client may send.
	FromClients
	// RefusedFromClients is a valid request that a client is never allowed: it is
	// answered BadArguments, its body unread, and the connection stays.
	RefusedFromClients
)

// ops is the table of op codes (ZooDefs.OpCode). A check is a write that only a multi may
// carry since ZooKeeper 3.9.3 and 3.8.5 (ZOOKEEPER-2623); createSession is the connect
// handshake, never a request frame; both are still decoded from a log. deleteContainer is
// the server's own (its container cleanup): 3.8's Request.isValid takes it from a client
// only to refuse it.
var ops = map[int32]OpInfo{
	OpCreate:               {"create", "CREA", true, FromClients, func() Record { return &CreateRequest{} }},
	OpCreate2:              {"create2", "CREA", true, FromClients, func() Record { return &CreateRequest{} }},
	OpCreateContainer:      {"createContainer", "CREA", true, FromClients, func() Record { return &CreateRequest{} }},
	OpCreateTTL:            {"createTTL", "CREA", true, FromClients, func() Record { return &CreateTTLRequest{} }},
	OpDelete:               {"delete", "DELE", true, FromClients, func() Record { return &DeleteRequest{} }},
	OpDeleteContainer:      {"deleteContainer", "DELE", true, RefusedFromClients, nil},
	OpSetData:              {"setData", "SETD", true, FromClients, func() Record { return &SetDataRequest{} }},
	OpSetACL:               {"setACL", "SETA", true, FromClients, func() Record { return &SetACLRequest{} }},
	OpCheck:                {"check", "CHEC", true, NotFromClients, func() Record { return &CheckVersionRequest{} }},
	OpMulti:                {"multi", "MULT", true, FromClients, func() Record { return &MultiRequest{} }},
	OpReconfig:             {"reconfig", "RECO", true, FromClients, func() Record { return &ReconfigRequest{} }},
	OpCreateSession:        {"createSession", "SESS", true, NotFromClients, nil},
	OpCloseSession:         {"closeSession", "CLOS", true, FromClients, nil},
	OpSync:                 {"sync", "SYNC", false, FromClients, func() Record { return &SyncRequest{} }},
	OpExists:               {"exists", "EXIS", false, FromClients, func() Record { return &ExistsRequest{} }},
	OpGetData:              {"getData", "GETD", false, FromClients, func() Record { return &GetDataRequest{} }},
	OpGetACL:               {"getACL", "GETA", false, FromClients, func() Record { return &GetACLRequest{} }},
	OpGetChildren:          {"getChildren", "GETC", false, FromClients, func() Record { return &GetChildrenRequest{} }},
	OpGetChildren2:         {"getChildren2", "GETC", false, FromClients, func() Record { return &GetChildren2Request{} }},
	OpMultiRead:            {"multiRead", "MLTR", false, FromClients, func() Record { return &MultiRequest{} }},
	OpCheckWatches:         {"checkWatches", "CHKW", false, FromClients, func() Record { return &CheckWatchesRequest{} }},
	OpRemoveWatches:        {"removeWatches", "REMW", false, FromClients, func() Record { return &RemoveWatchesRequest{} }},
	OpPing:                 {"ping", "PING", false, FromClients, nil},
	OpAuth:                 {"auth", "", false, FromClients, func() Record { return &AuthPacket{} }},
	OpSetWatches:           {"setWatches", "SETW", false, FromClients, func() Record { return &SetWatches{} }},
	OpSetWatches2:          {"setWatches2", "STW2", false, FromClients, func() Record { return &SetWatches2{} }},
	OpSASL:                 {"sasl", "", false, FromClients, func() Record { return &GetSASLRequest{} }},
	OpGetEphemerals:        {"getEphemerals", "GETE", false, FromClients, func() Record { return &GetEphemeralsRequest{} }},
	OpGetAllChildrenNumber: {"getAllChildrenNumber", "GETACN", false, FromClients, func() Record { return &GetAllChildrenNumberRequest{} }},
	OpAddWatch:             {"addWatch", "ADDW", false, FromClients, func() Record { return &AddWatchRequest{} }},
	OpWhoAmI:               {"whoAmI", "HOMI", false, FromClients, nil},
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
