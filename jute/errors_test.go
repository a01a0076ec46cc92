package jute

import (
	"errors"
	"fmt"
	"testing"
)

func TestCodeOf(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want Code
	}{
		{nil, OK},
		{ErrNoNode, ErrNoNode},
		{fmt.Errorf("create /a: %w", ErrNodeExists), ErrNodeExists},
		{errors.New("disk on fire"), ErrSystemError},
	} {
		if got := CodeOf(tt.err); got != tt.want {
			t.Errorf("CodeOf(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
	if ErrNoNode.Error() != "NONODE" || Code(-9999).Error() != "zookeeper error -9999" {
		t.Fatal("Code.Error")
	}
	var c Code
	if !errors.As(fmt.Errorf("x: %w", ErrBadVersion), &c) || c != ErrBadVersion {
		t.Fatal("errors.As")
	}
}

// Every code has a ZooKeeper name: the table is complete.
func TestCodeNames(t *testing.T) {
	codes := []Code{OK, ErrSystemError, ErrRuntimeInconsistency, ErrDataInconsistency, ErrConnectionLoss,
		ErrMarshallingError, ErrUnimplemented, ErrOperationTimeout, ErrBadArguments, ErrUnknownSession,
		ErrNewConfigNoQuorum, ErrReconfigInProgress, ErrAPIError, ErrNoNode, ErrNoAuth, ErrBadVersion,
		ErrNoChildrenForEphemera, ErrNodeExists, ErrNotEmpty, ErrSessionExpired, ErrInvalidCallback,
		ErrInvalidACL, ErrAuthFailed, ErrSessionMoved, ErrNotReadOnly, ErrEphemeralOnLocal, ErrNoWatcher,
		ErrRequestTimeout, ErrReconfigDisabled, ErrSessionClosedSASL, ErrQuotaExceeded, ErrThrottled}
	if len(codes) != len(codeNames) {
		t.Fatalf("%d codes, %d names", len(codes), len(codeNames))
	}
	for _, c := range codes {
		if _, ok := codeNames[c]; !ok {
			t.Errorf("code %d has no name", int32(c))
		}
	}
}
