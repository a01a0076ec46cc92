// Command zkbench is the load generator behind `make bench`: it runs the same workloads
// against zkraft and against Apache ZooKeeper 3.8, in one run on the same machine, and
// prints their figures side by side with the ratio zkraft/zookeeper.
//
// Usage:
//
//	zkbench [--targets zkraft,zookeeper [--zkraft-binary bin/zkraft] [--cluster 3|5 [--on-leader]] | --addr host:port[,host:port...] [--pid N]]
//	        [--sessions 1,16,64] [--duration 5s] [--warmup 2s] [--depth 4]
//	        [--workloads create,set,get,exists,getChildren,delete,multi,mixed,lock,watch,visibility-watch,visibility-poll]
//	        [--value-size 100] [--idle 10s] [--idle-sessions 3000] [--json results.json] [--quiet]
//	zkbench [--targets zkraft,zookeeper] --storage 100000,1000000 | [--cluster 3|5] --snapshot-tail 100000,1000000
//
// --storage and --snapshot-tail replace the workloads with measurements on large trees,
// each on servers of its own (standalone; the snapshot tail also on clusters): storage.go
// and snaptail.go say what they measure.
//
// With --idle, before the workloads every target sits with no client for that long, all in
// the same window, and zkbench prints the CPU seconds each used per 10 s (utime + stime of
// its processes from /proc/<pid>/stat): the cost of heartbeats and timers. With
// --idle-sessions N, each target then gets N sessions (raw connections, 16 opened at a
// time, spread over the members), which sit idle for 5 s; zkbench prints the RSS each
// added (the servers' RSS before and with them, over N): what a client that holds a
// session and does nothing costs the servers. They end with closeSession, so that they do
// not expire together in the middle of a later cell.
//
// # Servers
//
// Each target is started by server/ztest on a free loopback port with a fresh data dir
// and default settings (both fsync every write), except that maxClientCnxns=0 lifts the
// limit of 60 connections per address so that 64 sessions fit; all are stopped at the
// end. zkraft is the binary given by --zkraft-binary, by default a zkraft next to the
// zkbench executable (bin/ after `make build`), else ztest builds ./cmd/zkraft. With --addr an already
// running server is measured instead (RSS only if --pid is given). All znodes of a run
// live under /zkbench-<id>, removed at the end.
//
// With --cluster 3 or 5 each target is an ensemble of that many processes on loopback
// (same zoo.cfg server.N lines, myid, initLimit/syncLimit for both), the sessions of a
// cell spread round-robin over the members, so writes on followers are forwarded to the
// leader as in production; RSS is the sum over the members. Each session is pinned to its
// member (a one-address connect string). Before every cell the members are ordered
// followers first and the leader last, as their srvr says, and session i goes to member
// i mod N of that order: the same session has the same role on both targets, and a
// 1-session cell runs on a follower (as two of three clients do in production).
// --on-leader puts every session on the leader instead: the leader's own write path,
// without the forwarding hop (the write-path issue's "through the leader" figures).
//
// Before the first cell each server gets the read data set (100 dirs of 10 nodes each,
// --value-size bytes per node, created with multis), --warmup of the mixed workload, and
// then every workload of the run once, untimed, with 4 sessions for a quarter of
// --warmup each, so ZooKeeper's JIT has compiled the paths of every workload (creates,
// deletes, multis, sessions, locks, watches) before anything is measured.
//
// # What is measured
//
// A cell is one workload at one session count on one target. The cells interleave the
// targets (workload W at S sessions on zkraft, then on ZooKeeper, then the next S), so a
// drift of the machine during the run hits both alike. For each cell zkbench opens S new
// sessions (one github.com/go-zookeeper/zk Conn, that is one TCP connection, each), lets
// the workload prepare untimed, runs the timed part for --duration, cleans up untimed,
// and closes the sessions. It reports:
//
//   - ops/s: operations completed in the timed part divided by its length;
//   - p50, p99, p99.9 latency of one operation, from the call to its return, recorded in
//     a log-linear histogram (HdrHistogram-like, 64 sub-buckets per power of two: fixed
//     memory, values within 1.6%, reported at the bucket's upper edge);
//   - the server's RSS after the cell: VmRSS from /proc/<pid>/status of the server
//     process (for ZooKeeper the JVM, so it includes the heap the JVM has claimed, used
//     or not) plus any child processes;
//   - CPU/1k ms: the CPU time (user + system, from /proc/<pid>/stat) the server's processes
//     used during the timed part, per 1,000 operations completed: what an operation costs
//     the server, which on a machine shared with the load generator decides throughput.
//
// Failed operations are counted, not timed; a worker that fails 100 times in a row ends
// its cell, which is then reported as failed (n/a in the table) and zkbench exits 1.
//
// # Load shape
//
// The go-zookeeper client pipelines: concurrent calls on one Conn are written to the
// socket as they come and matched to their replies by xid, but it has no asynchronous
// API. So each session is driven by --depth goroutines (default 4) calling back to back
// (a closed loop), which keeps up to depth requests in flight per session; 64 sessions
// keep up to 256 in flight, which saturates a server rather than the client's round
// trips. The client's cost (its reflective codec, one write syscall per request) is the
// same for both servers; on a machine with few cores it shares the CPUs with the server,
// so absolute figures are lower than on separate machines, and the ratios are the point.
//
// Cells of the targets alternate. Before each cell starts, zkbench waits (at most 3 s)
// until the other targets' processes use under 5% of a core: a JVM goes on collecting
// and compiling for a while after its cell, which would otherwise run inside the next
// target's cell.
//
// Workloads (the table's legend says what one op is):
//
//   - create: persistent nodes with a value, unique names in one parent per cell;
//   - set, get, exists, getChildren: on random nodes (dirs) of the read data set;
//   - delete: single deletes of nodes prepared with multis, untimed, for at most half the
//     duration; if a worker runs out the cell ends early and the report says so;
//   - multi: 3 creates per multi (one op = one multi);
//   - mixed: 90% getData, 10% setData on the read data set;
//   - session: a new session on the worker's member, connected until it has its session,
//     then closed (one op = both). Each worker first makes 8 of them untimed (for at
//     most 20 s): each op costs go-zookeeper two 1.5 MiB buffers, and without the lead-in
//     the growth of zkbench's own heap in the first cell at a session count slowed
//     whichever target ran that cell first, by half or more at 64 sessions. The note
//     splits the timed ops into their connect (until the session is there) and their
//     close (until closeSession's answer, or go-zookeeper's give-up after a second):
//     p50, p99 and how many took a second or more;
//   - lock: every session takes and releases one lock with ZooKeeper's recipe (create
//     -e -s, getChildren, watch the predecessor); one op = one acquisition, its latency
//     from the create to holding the lock; one goroutine per session (--depth unused);
//   - watch: S sessions watch one node and one extra session sets it, in lock-step
//     rounds (the next set only when every watcher was notified and has set its watch
//     again); one op = one notification, its latency from the set being sent to the
//     event arriving. The writer is session S, on member S mod N;
//   - visibility-watch, visibility-poll: how far a member's view lags behind a write made
//     through another member. S writer/reader pairs, each with a node of its own, pair i's
//     writer on member i mod N and its reader on member (i+1) mod N (on a standalone
//     server both on it); one goroutine per pair (--depth unused), one op = one setData
//     made visible on the reader's member, its latency measured from the writer's reply.
//     visibility-watch arms a data watch through the reader before the set and takes the
//     time to the event; an event that came before the reply counts as 0, and the note
//     gives their share. visibility-poll reads the node through the reader back to back
//     from the reply on, as a client told of the write by other means would, and takes
//     the time until a read returns the new version, so it is at least one read's round
//     trip; the note gives the share of first reads that were stale.
//
// Nodes created by create and multi, and the prepared nodes delete left, are deleted
// with multis after the timed part, so the tree is the same size at the start of every
// cell and RSS compares like with like.
package main
