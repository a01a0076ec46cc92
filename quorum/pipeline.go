package quorum

import (
	"errors"
	"sync"

	"github.com/hashicorp/raft"
)

// pipeline is raft's pipelined replication to one follower with two mends: the commit
// index of every AppendEntries is clamped (leaderLog.clampCommit), and the transport's
// responses reach raft through forward, which keeps reading them once raft has stopped.
//
// Raft's pipeline decoder returns at the first response that refuses the entries or
// carries a newer term, and its sender may still send another batch before it notices
// (hashicorp/raft v1.7 and v1.8). With NetworkTransport's default of two RPCs in flight
// the transport's two queues are unbuffered, so its response reader then waits forever to
// hand over the next response, the sender waits forever to queue its batch, and the
// pipeline's Close, deferred behind the sender, never runs. The follower would get
// heartbeats and never another entry, and raft's Shutdown would wait for that sender
// forever. Here the sender's call returns, raft sees the decoder gone at its next turn
// and closes the pipeline, and replication to that follower starts again.
type pipeline struct {
	raft.AppendPipeline
	id  raft.ServerID // the follower's
	log *leaderLog
	// reach hears of the batches the transport failed to deliver (nil in tests): raft
	// then stops pipelining and retries only on a new write or its CommitTimeout, so the
	// peer counts as down until it answers again, which nudges replication (peerBack).
	reach *reachability
	out   chan raft.AppendFuture
	done  chan struct{}
	once  sync.Once
}

func newPipeline(p raft.AppendPipeline, log *leaderLog, id raft.ServerID) *pipeline {
	pl := &pipeline{AppendPipeline: p, id: id, log: log, out: make(chan raft.AppendFuture), done: make(chan struct{})}
	go pl.forward()
	return pl
}

func (p *pipeline) AppendEntries(args *raft.AppendEntriesRequest, resp *raft.AppendEntriesResponse) (raft.AppendFuture, error) {
	p.log.clampCommit(args)
	f, err := p.AppendPipeline.AppendEntries(args, resp)
	if err != nil {
		p.failed(err)
	}
	return f, err
}

// failed tells reach of a batch the transport could not send or got no answer to.
func (p *pipeline) failed(err error) {
	select {
	case <-p.done:
		return // closed: by raft, or as its peer's outage began (contactTransport.dropStale)
	default:
	}
	if p.reach != nil && !errors.Is(err, raft.ErrPipelineShutdown) && !errors.Is(err, raft.ErrTransportShutdown) {
		p.reach.failed(p.id, err)
	}
}

// Consumer is where raft's decoder reads the answered batches.
func (p *pipeline) Consumer() <-chan raft.AppendFuture { return p.out }

func (p *pipeline) Close() error {
	p.once.Do(func() { close(p.done) })
	return p.AppendPipeline.Close()
}

// forward notes what the follower stored (fresh_read.go) and hands raft each answered
// batch until raft's decoder has returned (the answer it returns at was handed over),
// then drops the rest, so the transport never waits on a reader that is gone. It ends
// with Close.
func (p *pipeline) forward() {
	in := p.AppendPipeline.Consumer()
	decoding := true
	for {
		select {
		case f := <-in:
			if !decoding {
				continue
			}
			if err := f.Error(); err != nil {
				p.failed(err)
			}
			req, resp := f.Request(), f.Response()
			decoding = resp.Success && resp.Term <= req.Term // the decoder's own tests
			if p.log != nil {
				p.log.noteAccepted(p.id, req, resp)
			}
			select {
			case p.out <- f:
			case <-p.done:
				return
			}
		case <-p.done:
			return
		}
	}
}
