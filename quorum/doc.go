// Package quorum owns consensus: the hashicorp/raft node, the state machine (FSM) that
// applies committed entries to the znode tree and the session table, the log entry
// format, the peer streams between members (forwarded writes, session pings, commit
// and durable notices), the leader's duties (session expiry, container and TTL cleanup,
// membership), the vote gate of a member started on an empty store with
// zookeeper.db.autocreate=false (empty_store_votes.go), and the replacement of the whole
// state through the leader that the restore admin command asks for (user_restore.go).
//
// It knows nothing of sockets or the client protocol's framing: the server hands it
// entries (a connection's writes through its Stream, anything else through Propose) and
// reads through FSM.Read (after Node.WaitFreshRead, which waits for every command another
// member may already have applied, fresh_read.go); watches fire into the watch registry,
// whose watchers the server implements.
//
// Entry format and upgrades: an entry is a type byte and a Jute-encoded body (see
// entry.go). A server panics on a type byte it does not know, so a new entry type or a
// changed body gets a new type byte, and every version keeps applying the older bytes
// its log may hold. Type byte 2 (the connection's cursor) is written by this version;
// a version that knows only byte 1 cannot apply it, so a cluster is upgraded to it
// whole (all members stopped, then started on the new version), not one member at a
// time.
//
// Apply path: raft hands committed entries over in batches (FSM.ApplyBatch; raft passes
// commands and configuration changes, never its no-ops or barriers). A batch, or a run
// applied on a notice, takes the apply lock and publishes its commit point once, and
// the tree's write lock once per applyHold entries (apply.go). Results, state and watch
// events are those of applying the entries one at a time; an entry's waiters hear of it
// when its hold of the lock ends (raft answers its own futures after the whole batch).
//
// Forwarded entries: the leader decodes an entry a member forwards whole, as every
// member's apply will (bytes that do not decode end the stream and never reach the log),
// then writes its time, and its verdict on a reconfig, into the received bytes at their
// fixed offsets and appends those, without a second encoding (Entry.restamp). For the
// bytes a member's Marshal wrote, that is what encoding the entry again gave; other
// bytes that decode (no zkraft member sends them) are decoded alike on every member.
//
// Determinism: Apply reads no clock (the proposer stamps Entry.Time), draws no random
// numbers, and lets no map order reach the tree, a result or a snapshot. zxid is the
// Raft index of the entry. A connection's write applies only right after its previous
// one (session.Table.Advance); the cursor lives in the session table and its snapshot,
// so every member refuses the same writes.
//
// Commit notices, and why acting on them is safe. hashicorp/raft tells a follower the
// commit index only in its next AppendEntries, so a follower would apply a write one
// round (and two fsyncs) after the leader. Instead, whenever a member applies commands
// (a batch raft hands over, or a run a notice allows) it records the (index, term) of
// the last one — applied means committed — and the leader sends that point on every
// member's peer stream as soon as it changes (but not to a follower that told the leader
// it stored the entries up to it and was sent a durable notice covering them: that one
// applies them on its own, durable_notice.go). A member told (i, t) applies its
// own log up to i, ahead of raft, only if the entry it holds at i has term t:
//
//   - By raft's Log Matching property, two logs holding an entry with the same index and
//     term are identical up to it. The leader's entry i with term t is committed, so the
//     member's entries 1..i are exactly the committed ones.
//   - Committed entries are never removed or changed by any later leader (Leader
//     Completeness), so raft cannot truncate or rewrite entries 1..i under the reader.
//     An entry the member does not hold yet, or holds with another term (a stale one a
//     new leader will overwrite), is not applied; the member tries again when raft
//     hands the log store its next batch.
//   - The member may apply entries from the batch raft is still writing, before its own
//     fsync returns (noticedLogs): raft has checked the batch against the log and
//     deleted what it replaces before it stores it, and the noticed entries are durable
//     on a quorum already, so a crash loses only this member's copy, which raft sends
//     again. A ZooKeeper follower likewise applies a COMMIT without waiting for its own
//     log write.
//   - One mutex (FSM.applyMu) orders raft's apply and these early ones; FSM.appliedIndex
//     is the last index applied either way, and raft's later ApplyBatch of an entry at
//     or below it returns the kept result without applying it again. A snapshot may so
//     hold state past the index raft records for it; restoring it sets appliedIndex to
//     the state's own zxid, and the entries between that and raft's index, which raft
//     then replays, are skipped or are not commands.
//   - The member may also apply from the entries it received but raft has not stored yet
//     (received.go): raft's follower reads no AppendEntries while it stores one, so its
//     streams are read ahead of it (read_ahead.go). Those entries are a run the leader of
//     one term sent; a leader never rewrites its log in its term, so the run is a piece of
//     one log, and Log Matching holds for it as for the member's own: if it holds entry i
//     with term t, its entries up to i are the committed ones. They are applied only if
//     the run starts at or below the FSM's next index, so nothing between is missing.
//
// The leader's log write overlaps replication (leader_log.go). hashicorp/raft's leader
// stores a batch before it replicates it, which put the leader's fdatasync and a
// follower's one after the other on every write; a ZooKeeper leader logs a proposal
// while it sends it. Here the leader's batches of commands are stored deferred: the store
// returns once the frame is written and the WAL's syncer fdatasyncs it meanwhile (at
// most one frame pending, so a crash still tears only the last frame). Raft then counts
// the leader's copy towards a quorum before it is durable. Call an index truly committed
// when raft's rule holds on durable copies alone: a majority holds the entries up to it
// on disk, an entry of the leader's term among them. What raft calls committed is acted
// on only once it is truly committed:
//
//   - Followers never defer (a follower's answer to AppendEntries says the entries are on
//     its disk), nor does the leader for a batch with a configuration change; raft sets
//     its state only on the goroutine that stores, so "leader" seen there is exact.
//   - Raft advanced its commit index c by counting a majority, of which every follower
//     holds the entries up to c durably, and the leader. Once the leader's own log is
//     durable up to c, c is truly committed. So the leader's FSM applies a batch only
//     after waiting for its log to be durable up to raft's commit index (not only up to
//     the batch's last entry: an earlier term's entries are committed by the leader's
//     no-op, which may be the entry still pending) and records that index as safe.
//   - Every AppendEntries the leader sends carries a truly committed index: raft's commit
//     index when the leader's log is durable up to it (no frame pending at or below it),
//     else the safe index (a lower one than the leader knows is always allowed). Commit
//     notices name only applied commands. So no follower applies what is not truly
//     committed, and followers still hear of a commit the FSM is never handed (a new
//     leader's no-op with nothing after its snapshot).
//   - A client is answered after the apply, so an acknowledged write is on a majority of
//     disks, as before. A leader that crashes with its pending frame lost (a power cut:
//     kill -9 leaves it in the page cache) lost only entries nobody applied. A member
//     killed during an fdatasync (its own or the syncer's) may come back with a whole
//     frame that is still only in the page cache; the WAL fdatasyncs every segment it
//     replays before it opens, so what a restarted member's log holds is on its disk
//     before raft or a durable notice counts it.
//
// Durable notices: a follower of three voters applies without the leader's count
// (durable_notice.go). When the leader's syncer has made its newest deferred batch
// durable, the leader sends the (index, term) of that batch's last entry on the stream
// of each follower, if its membership has exactly three voters and that follower is one
// of them, and the batch is of the term it leads in now. A follower applies up to the lower of that index and its own last stored
// entry, if the entry there has the notice's term and that term is its current term:
//
//   - The entry is then on two voters' disks: the leader's (the notice says so, and a
//     frame is written only once the one before it is durable, so the whole prefix is)
//     and this member's (a follower's store returns once its frame is durable, and the
//     follower reads only what its store has stored, never the batch raft is writing).
//   - Both took it in its own term t: the leader created it, and this member holds it
//     while its current term is still t, so it accepted it before voting in any later
//     term. That is the premise of raft's Leader Completeness proof for an entry of the
//     leader's own term stored on a majority: every later leader holds it. By Log
//     Matching the member's entries before it are the leader's, committed with it.
//   - Membership: two of three voters intersect every majority. hashicorp/raft starts a
//     membership change only once the previous one is committed (by its count, which
//     may rest on the leader's copy not yet durable; but the new membership's entry is
//     stored durably, after every frame before it, so once it is in the log the previous
//     one is committed on durable copies too), so the entries up to
//     the notice are governed either by the three-voter membership the leader checks
//     when it sends the notice, or by the one before it, which differs from it by one
//     server: four voters (one was removed since), where two still intersect every
//     majority of three, or two voters (one was added since), where the leader or the
//     member is in every majority; the entries before that earlier membership's own
//     entry are committed with it. Observers (non-voters) get no durable notices.
//   - A member that took the entry from a later leader (the situation of the Raft
//     paper's Figure 8, an old entry replicated by a newer term) has a current term
//     above the entry's, and ignores the notice; the term is checked again once the
//     entry is read, under the apply lock.
//
// With five voters a leader and one follower are not a majority; commit notices alone
// serve there. A follower applies on whichever notice comes first.
//
// A standalone server stores every batch durably: it has no replication to overlap.
//
// Prompt elections (prompt_election.go): a voting follower whose stream to the leader
// broke, and whose dials to the leader's peer and raft ports are both refused while raft
// still names that leader, hands its own raft a TimeoutNow and so stands for election at
// once. Raft's safety never rests on when a member stands: a vote still needs a term
// above every voter's and a log at least as up to date as each granting voter's, so no
// committed entry is lost and no two leaders share a term. What the request adds to a
// timeout firing early is liveness, not safety: raft's pre-vote is skipped, and voters
// grant their vote although they still name a leader (until their own timeouts fire). A
// wrong guess (a live leader whose ports refuse only this member) costs an election, not
// an entry. Survivors stand one after another by rank, each only while no leader has been
// named since, so two seldom split a vote and one whose log is behind is followed by the next.
//
// Notices cost nothing while idle: they are sent only after an apply, and raft's
// CommitTimeout is long (Config.CommitTimeout; the server makes it a tick), as the
// fallback that carries the commit index when no notice arrives (a member that just
// connected gets the current point at once). It is also when raft's leader tries again
// to reach a member it could not: a member cut off for a moment would stay behind one to
// two CommitTimeouts after the cut healed, so the leader appends a barrier when a member
// that failed to answer answers again (Node.peerBack; the transport sees both, the
// pipeline's failures included), and the member catches up about one heartbeat after.
package quorum
