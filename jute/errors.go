package jute

import (
	"errors"
	"fmt"
)

// Code is a ZooKeeper error code (KeeperException.Code) as carried in a reply header.
// Code(0) is success. A Code is an error value, so a failing operation returns it directly.
type Code int32

// The error codes of KeeperException.Code.
const (
	OK                       Code = 0
	ErrSystemError           Code = -1
	ErrRuntimeInconsistency  Code = -2
	ErrDataInconsistency     Code = -3
	ErrConnectionLoss        Code = -4
	ErrMarshallingError      Code = -5
	ErrUnimplemented         Code = -6
	ErrOperationTimeout      Code = -7
	ErrBadArguments          Code = -8
	ErrUnknownSession        Code = -12
	ErrNewConfigNoQuorum     Code = -13
	ErrReconfigInProgress    Code = -14
	ErrAPIError              Code = -100
	ErrNoNode                Code = -101
	ErrNoAuth                Code = -102
	ErrBadVersion            Code = -103
	ErrNoChildrenForEphemera Code = -108
	ErrNodeExists            Code = -110
	ErrNotEmpty              Code = -111
	ErrSessionExpired        Code = -112
	ErrInvalidCallback       Code = -113
	ErrInvalidACL            Code = -114
	ErrAuthFailed            Code = -115
	ErrSessionMoved          Code = -118
	ErrNotReadOnly           Code = -119
	ErrEphemeralOnLocal      Code = -120
	ErrNoWatcher             Code = -121
	ErrRequestTimeout        Code = -122
	ErrReconfigDisabled      Code = -123
	ErrSessionClosedSASL     Code = -124
	ErrQuotaExceeded         Code = -125
	ErrThrottled             Code = -127
)

// codeNames is the one table from codes to ZooKeeper's names for them.
var codeNames = map[Code]string{
	OK: "OK", ErrSystemError: "SYSTEMERROR", ErrRuntimeInconsistency: "RUNTIMEINCONSISTENCY",
	ErrDataInconsistency: "DATAINCONSISTENCY", ErrConnectionLoss: "CONNECTIONLOSS",
	ErrMarshallingError: "MARSHALLINGERROR", ErrUnimplemented: "UNIMPLEMENTED",
	ErrOperationTimeout: "OPERATIONTIMEOUT", ErrBadArguments: "BADARGUMENTS",
	ErrUnknownSession: "UNKNOWNSESSION", ErrNewConfigNoQuorum: "NEWCONFIGNOQUORUM",
	ErrReconfigInProgress: "RECONFIGINPROGRESS", ErrAPIError: "APIERROR", ErrNoNode: "NONODE",
	ErrNoAuth: "NOAUTH", ErrBadVersion: "BADVERSION", ErrNoChildrenForEphemera: "NOCHILDRENFOREPHEMERALS",
	ErrNodeExists: "NODEEXISTS", ErrNotEmpty: "NOTEMPTY", ErrSessionExpired: "SESSIONEXPIRED",
	ErrInvalidCallback: "INVALIDCALLBACK", ErrInvalidACL: "INVALIDACL", ErrAuthFailed: "AUTHFAILED",
	ErrSessionMoved: "SESSIONMOVED", ErrNotReadOnly: "NOTREADONLY", ErrEphemeralOnLocal: "EPHEMERALONLOCALSESSION",
	ErrNoWatcher: "NOWATCHER", ErrRequestTimeout: "REQUESTTIMEOUT", ErrReconfigDisabled: "RECONFIGDISABLED",
	ErrSessionClosedSASL: "SESSIONCLOSEDREQUIRESASLAUTH", ErrQuotaExceeded: "QUOTAEXCEEDED",
	ErrThrottled: "THROTTLEDOP",
}

func (c Code) Error() string {
	if n, ok := codeNames[c]; ok {
		return n
	}
	return fmt.Sprintf("zookeeper error %d", int32(c))
}

// CodeOf maps an error to its wire code: nil is OK, a Code is itself (also when wrapped,
// as fmt.Errorf("...: %w", ErrNoNode) does), anything else is a system error.
func CodeOf(err error) Code {
	if err == nil {
		return OK
	}
	var c Code
	if errors.As(err, &c) {
		return c
	}
	return ErrSystemError
}
