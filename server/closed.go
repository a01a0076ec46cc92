package server

import (
	"errors"
	"io"
	"net"
	"os"
	"sync/atomic"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// closeReason says why the server closed a client connection. Every close is counted
// by reason (stats.closed) and exported as connections_closed_total{reason=...}, so an
// operator sees slow clients, bad frames and session moves apart from clients leaving.
type closeReason uint8

const (
	closedByClient       closeReason = iota // the client closed or reset the connection
	closedBadFrame                          // a frame too large, or too short for a request header
	closedReadError                         // any other read error
	closedIdle                              // no ConnectRequest within SessionlessTimeout, or a read-only client silent for its session timeout
	closedHandshake                         // the connect request was refused or unreadable
	closedFourLetter                        // a four-letter word was answered
	closedAfterReply                        // closeSession, an auth failure or an unknown op was answered
	closedSlowClient                        // more than maxQueuedBytes waited for the client
	closedWriteTimeout                      // a write to the client did not finish within writeDeadline
	closedWriteFailed                       // a write to the client failed
	closedProposalFailed                    // a write's outcome is unknown (leadership lost, shutdown)
	closedSessionMoved                      // the session moved to another connection or server
	closedNoQuorum                          // no leader for longer than clients are kept waiting
	closedReadOnlyChange                    // read-only mode began or ended
	closedStateReplaced                     // a snapshot from the leader replaced the state
	closedShutdown                          // the server is stopping
	closedTLSHandshake                      // a TLS handshake failed or did not finish in time
	closedStaleRequest                      // the request throttle dropped a stale request
	closedSessionExpired                    // its session was closed, not by a closeSession it sent: the session expired
	closedLargeRequest                      // a large request would pass largeRequestMaxBytes
	closedConnThrottle                      // the connection throttle had no token for its ConnectRequest
	closedLeaderServesNo                    // this member became leader with leaderServes=no
	closedTLSOverLimit                      // more TLS handshakes were in progress than netty.server.outstandingHandshake.limit
	closedNotServing                        // a secure port's connection before its TLS handshake, nothing serving (earlyDropSecureConnectionHandshakes)
	numCloseReasons
)

var closeReasonNames = [numCloseReasons]string{
	closedByClient:       "client_closed",
	closedBadFrame:       "bad_frame",
	closedReadError:      "read_error",
	closedIdle:           "idle",
	closedHandshake:      "handshake_refused",
	closedFourLetter:     "four_letter_word",
	closedAfterReply:     "closed_after_reply",
	closedSlowClient:     "slow_client",
	closedWriteTimeout:   "write_timeout",
	closedWriteFailed:    "write_failed",
	closedProposalFailed: "proposal_failed",
	closedSessionMoved:   "session_moved",
	closedNoQuorum:       "no_quorum",
	closedReadOnlyChange: "read_only_change",
	closedStateReplaced:  "state_replaced",
	closedShutdown:       "shutdown",
	closedTLSHandshake:   "tls_handshake",
	closedStaleRequest:   "stale_request",
	closedSessionExpired: "session_expired",
	closedLargeRequest:   "large_request",
	closedConnThrottle:   "connection_throttle",
	closedLeaderServesNo: "leader_serves_no",
	closedTLSOverLimit:   "tls_handshake_limit",
	closedNotServing:     "not_serving",
}

func (r closeReason) String() string { return closeReasonNames[r] }

// closedCounts counts closed connections by reason; srst leaves them (they are
// Prometheus counters).
type closedCounts [numCloseReasons]atomic.Int64

// writeDeadline bounds how long a write to a client may make no progress: a client that
// reads nothing for this long while replies wait is closed (its session lives on for its
// timeout), so a stuck peer never holds a writer goroutine and its memory forever.
// Atomic: tests shorten it while an earlier test's connection goroutines may still be
// ending.
var writeDeadline atomic.Int64

func init() { writeDeadline.Store(int64(10 * time.Second)) }

// writeDeadlineFromNow is the deadline of a write that starts now.
func writeDeadlineFromNow() time.Time { return time.Now().Add(time.Duration(writeDeadline.Load())) }

// readReason classifies the error that ended a connection's read loop.
func readReason(err error) closeReason {
	var big *jute.ErrFrameTooLarge
	var ne net.Error
	switch {
	case errors.As(err, &big):
		return closedBadFrame
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed):
		return closedByClient
	case errors.Is(err, os.ErrDeadlineExceeded):
		return closedIdle
	case errors.As(err, &ne) && !ne.Timeout():
		return closedByClient // connection reset by the client
	}
	return closedReadError
}

// writeReason classifies a failed write.
func writeReason(err error) closeReason {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return closedWriteTimeout
	}
	return closedWriteFailed
}
