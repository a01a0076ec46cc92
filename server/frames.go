package server

import (
	"sync"

	"github.com/zkraft/zkraft/jute"
)

// Replies and notifications are encoded into buffers lent by framePool; the writer gives
// each back once it is written, so answering a request allocates no frame. A frame that
// leaves the outbox any other way (a connection closed with frames queued) is simply
// collected.
var framePool = sync.Pool{New: func() any {
	b := make([]byte, 0, frameCap)
	return &b
}}

const (
	// frameCap is a new buffer's capacity: a setData or create reply takes 88 bytes, a
	// getData of 100 bytes 192.
	frameCap = 256
	// frameKeep is the largest buffer given back; a larger one (a big getData or
	// getChildren) is left to the collector rather than held by the pool.
	frameKeep = 4 << 10
)

// replyFrame encodes a reply (or, with XidNotification, a watch event) into a lent buffer.
func replyFrame(xid int32, zxid int64, code jute.Code, body jute.Record) *[]byte {
	f := framePool.Get().(*[]byte)
	*f = jute.AppendReply((*f)[:0], xid, zxid, code, body)
	return f
}

// releaseFrames gives written frames back to the pool.
func releaseFrames(fs []*[]byte) {
	for _, f := range fs {
		if cap(*f) <= frameKeep {
			framePool.Put(f)
		}
	}
}
