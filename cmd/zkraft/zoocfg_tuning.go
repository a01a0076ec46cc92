package main

// zooKeeperTuning are settings of ZooKeeper's Java internals (its request pipeline,
// election, learner protocol, caches, Netty, JVM) that have no counterpart in zkraft,
// with why. ZooKeeper takes each as a zoo.cfg key, with or without "zookeeper.", or as a
// -Dzookeeper. property; so does zkraft, and a warning says why it has no effect instead
// of calling the key unknown. A key that would make zkraft check less than ZooKeeper does
// is not here: it stops the start (sslquorum.go, tlscfg.go).
var zooKeeperTuning = map[string]string{
	"globalOutstandingLimit":             "each zkraft connection has its own bound of requests in flight, and zookeeper.request_throttle_max_requests bounds them all",
	"enableEagerACLCheck":                "a write the client may not make is refused with NoAuth either way; zkraft checks when it applies the write",
	"flushDelay":                         flushBatching,
	"maxWriteQueuePollTime":              flushBatching,
	"maxBatchSize":                       flushBatching,
	"commitLogCount":                     "a member catches up from zkraft's log and snapshots",
	"snapshot.compression.method":        "zkraft's snapshots have their own format; `zkraft export` writes ZooKeeper's, uncompressed",
	"snapshot.trust.empty":               "zkraft's store is checked as a whole at start",
	"txnLogSizeLimitInKb":                "zkraft's log rolls its own segments",
	"digest.enabled":                     "zkraft always keeps the tree's digest (the hash command)",
	"cnxTimeout":                         zabOnly,
	"electionPortBindRetry":              zabOnly,
	"fastleader.minNotificationInterval": zabOnly,
	"fastleader.maxNotificationInterval": zabOnly,
	"maxTimeToWaitForEpoch":              zabOnly,
	"quorumCnxnTimeoutMs":                zabOnly,
	"leader.closeSocketAsync":            zabOnly,
	"learner.closeSocketAsync":           zabOnly,
	"learner.asyncSending":               zabOnly,
	"maxConcurrentSnapSyncs":             zabOnly,
	"maxConcurrentDiffSyncs":             zabOnly,
	"forward_learner_requests_to_commit_processor_disabled": zabOnly,
	"observer.reconnectDelayMs":                             zabOnly,
	"observer.election.DelayMs":                             zabOnly,
	"tcpKeepAlive":                                          "zkraft's sockets always have TCP keep-alive",
	"clientTcpKeepAlive":                                    "zkraft's sockets always have TCP keep-alive",
	"maxResponseCacheSize":                                  noResponseCache,
	"maxGetChildrenResponseCacheSize":                       noResponseCache,
	"bitHashCacheSize":                                      watchTable,
	"maxInProcessingDeadWatchers":                           watchTable,
	"watcherCleanThreshold":                                 watchTable,
	"watcherCleanIntervalInSeconds":                         watchTable,
	"watcherCleanThreadsNum":                                watchTable,
	"watchManagerName":                                      watchTable,
	"advancedFlowControlEnabled":                            nettyOnly,
	"outstandingHandshake.limit":                            "ZooKeeper reads zookeeper.netty.server.outstandingHandshake.limit; this spelling has no effect there either",
	"ssl.handshakeDetectionTimeoutMillis":                   "ZooKeeper 3.8 times only the member port's TLS detection with it (ssl.quorum.handshakeDetectionTimeoutMillis)",
	"commitProcessor.numWorkerThreads":                      pipeline,
	"commitProcessor.maxReadBatchSize":                      pipeline,
	"commitProcessor.maxCommitBatchSize":                    pipeline,
	"commitProcessor.shutdownTimeout":                       pipeline,
	"follower.skipLearnerRequestToNextProcessor":            pipeline,
	"nio.numSelectorThreads":                                nioOnly,
	"nio.numWorkerThreads":                                  nioOnly,
	"nio.directBufferBytes":                                 nioOnly,
	"nio.shutdownTimeout":                                   nioOnly,
	"netty.advancedFlowControl.enabled":                     nettyOnly,
	"intBufferStartingSizeBytes":                            "zkraft sizes each answer's buffer itself",
	"closeSessionTxn.enabled":                               "zkraft's closeSession entry always names the session's ephemerals",
	"snapshotSizeFactor":                                    "Raft sends a member behind the leader's log a snapshot, whatever its size",
	"forceSnapshotSync":                                     "Raft sends a member behind the leader's log a snapshot, whatever its size",
	"leaderConnectDelayDuringRetryMs":                       zabOnly,
	"leader.ackLoggingFrequency":                            zabOnly,
	"leader.maxConcurrentSnapSyncs":                         zabOnly,
	"leader.maxConcurrentDiffSyncs":                         zabOnly,
	"leader.maxTimeToWaitForEpoch":                          zabOnly,
	"observer.syncEnabled":                                  "an observer keeps the log as every member does",
	"observerMaster.sizeLimit":                              "observers follow the leader over its peer port",
	"messageTracker.BufferSize":                             zabOnly,
	"messageTracker.Enabled":                                zabOnly,
	"pathStats.enabled":                                     "zkraft keeps no per-path request statistics",
	"pathStats.sampleRate":                                  "zkraft keeps no per-path request statistics",
	"pathStats.maxDepth":                                    "zkraft keeps no per-path request statistics",
	"pathStats.slotCapacity":                                "zkraft keeps no per-path request statistics",
	"pathStats.slotDuration":                                "zkraft keeps no per-path request statistics",
	"pathStats.initialDelay":                                "zkraft keeps no per-path request statistics",
	"pathStats.delay":                                       "zkraft keeps no per-path request statistics",
	"pathStats.topPathMax":                                  "zkraft keeps no per-path request statistics",
	"jmx.log4j.disable":                                     noJVM,
	"jmx.log4j.mbean":                                       noJVM,
	"metricsProvider.numWorkerThreads":                      "zkraft's metrics need no worker threads",
	"metricsProvider.maxQueueSize":                          "zkraft's metrics need no worker threads",
	"metricsProvider.workerShutdownTimeoutMs":               "zkraft's metrics need no worker threads",
	"jute.maxbuffer.extrasize":                              "ZooKeeper pads jute's length bound with it to read its own logs, snapshots and learner packets; a client's frame is bound by jute.maxbuffer alone there as in zkraft, whose store is read without that bound",
	"serializeLastProcessedZxid.enabled":                    "the ZooKeeper snapshots zkraft writes always end with the last processed zxid, as ZooKeeper 3.9's do by default",
}

const (
	flushBatching   = "zkraft batches the writes to its log on its own"
	zabOnly         = "it tunes ZooKeeper's election and learner protocol; zkraft's members use Raft"
	noResponseCache = "zkraft serves reads from the tree, with no cache of encoded answers"
	watchTable      = "it tunes ZooKeeper's watch manager; zkraft's watch table needs no cleaner"
	nettyOnly       = "it tunes ZooKeeper's Netty server"
	nioOnly         = "it tunes ZooKeeper's NIO server; a zkraft connection is served by its own goroutines"
	pipeline        = "it tunes ZooKeeper's request processors; zkraft's connections read and answer in order themselves"
)

func init() {
	for k, why := range zooKeeperTuning {
		ignoredKeys[k] = ignoredKey{why: why}
		ignoredKeys["zookeeper."+k] = ignoredKey{why: why}
		systemProperties["zookeeper."+k] = true
	}
}
