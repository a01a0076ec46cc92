package datatree

import (
	"fmt"
	"strings"

	"github.com/zkraft/zkraft/jute"
)

// Quotas, as ZooKeeper 3.8 keeps them (DataTree, StatsTrack, ZooKeeperServer.checkQuota).
// A quota on path P is the node /zookeeper/quota/P/zookeeper_limits; its usage is kept in
// /zookeeper/quota/P/zookeeper_stats ("count=N,bytes=B"). Clients (zkCli's setquota,
// delquota) create and change those nodes with ordinary writes; the tree:
//
//   - indexes every zookeeper_limits node under /zookeeper/quota (ZooKeeper's pTrie);
//   - replaces the data of a zookeeper_stats node when it is created with the count and
//     bytes of the subtree at P (updateQuotaForPath);
//   - on every create, delete and setData below the deepest quota path that holds the
//     node, adds the change to that quota's stats (updateQuotaStat): the data changes,
//     the stats node's stat (mzxid, mtime, version) does not, no watch fires, and
//     approximateDataSize is not adjusted, all as in ZooKeeper;
//   - with quotas enforced (SetEnforceQuota), refuses a create or setData that would take the count or
//     bytes above a hard limit (QuotaExceeded) and reports soft limits (OnQuota).
//
// The index is a function of the tree, so a tree read from a snapshot rebuilds it; the
// stats are the replicated data itself, never recomputed on restore.
const (
	quotaRoot      = "/zookeeper/quota"
	quotaLimitName = "zookeeper_limits"
	quotaStatsName = "zookeeper_stats"
)

// QuotaEvent is a create or setData that went over a quota while quotas are enforced:
// ZooKeeper logs it ("Quota exceeded: …"), and for a hard limit also refuses the write
// and counts it in quota_exceeded_error_per_namespace.
type QuotaEvent struct {
	Hard      bool   // the write got QuotaExceeded
	Namespace string // the top name of the written path; "" if it has none
	Message   string // ZooKeeper's log message
}

// SetEnforceQuota turns the QuotaExceeded checks on or off (ZooKeeper's
// zookeeper.enforceQuota). It is replicated state: the caller applies it from the log.
func (t *Tree) SetEnforceQuota(on bool) { t.enforceQuota = on }

// EnforceQuota reports whether quotas are enforced.
func (t *Tree) EnforceQuota() bool { return t.enforceQuota }

// quotaKey is how ZooKeeper's PathTrie sees a path: its names with the blank ones left
// out, joined by '/' ("" for none).
func quotaKey(path string) string {
	parts := strings.Split(path, "/")
	out := parts[:0]
	for _, p := range parts {
		if strings.TrimFunc(p, func(r rune) bool { return r <= ' ' }) != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, "/")
}

// limitQuotaKey is the key of the quota a node at path sets if it is a zookeeper_limits
// node below /zookeeper/quota, and ok.
func limitQuotaKey(path string) (string, bool) {
	parent, name, _ := splitParent(path)
	if name != quotaLimitName || !strings.HasPrefix(parent, quotaRoot+"/") {
		return "", false
	}
	k := quotaKey(parent[len(quotaRoot):])
	return k, k != ""
}

func (t *Tree) addQuota(key string, d int) {
	t.quotas[key] += d
	if t.quotas[key] == 0 {
		delete(t.quotas, key)
	}
}

// indexQuota adds (d = 1) or removes (d = -1) the quota a node at path may set.
func (t *Tree) indexQuota(path string, d int) {
	if key, ok := limitQuotaKey(path); ok {
		t.addQuota(key, d)
		t.logUndo(func() { t.addQuota(key, -d) })
	}
}

// maxQuotaPrefix is DataTree.getMaxPrefixWithQuota over keys: the deepest quota path
// that is path or above it, as "/a/b", or "" for none.
func maxQuotaPrefix(keys map[string]int, path string) string {
	if len(keys) == 0 {
		return ""
	}
	key := quotaKey(path)
	for key != "" {
		if keys[key] > 0 {
			return "/" + key
		}
		i := strings.LastIndexByte(key, '/')
		if i < 0 {
			break
		}
		key = key[:i]
	}
	return ""
}

// quotaCreated is what createNode does for quotas after adding the node at path with
// data: index a limit node, fill a new stats node, count the node.
func (t *Tree) quotaCreated(path string, n *node) {
	sent := int64(max(n.dataLen, 0)) // counted as sent, even for a stats node filled below
	t.indexQuota(path, 1)
	// ZooKeeper's test is a string prefix: under /zookeeper/quotaX the stats are those of
	// the path "X", which names no node (count 0).
	if parent, name, _ := splitParent(path); name == quotaStatsName && strings.HasPrefix(parent, quotaRoot) {
		count, bytes := int64(0), int64(0)
		if top := t.lookup(parent[len(quotaRoot):]); top != nil {
			count, bytes = t.subtreeUsage(top)
		}
		t.setQuotaData(n, statsTrack{stCount: count, stBytes: bytes}.bytes())
	}
	t.updateQuotaStats(path, sent, 1)
}

func (t *Tree) subtreeUsage(n *node) (count, bytes int64) {
	count, bytes = 1, int64(max(n.dataLen, 0))
	t.eachChild(n, func(_ nodeID, c *node) bool {
		cc, cb := t.subtreeUsage(c)
		count, bytes = count+cc, bytes+cb
		return true
	})
	return count, bytes
}

// quotaDeleted is what deleteNode does for quotas after removing the node at path.
func (t *Tree) quotaDeleted(path string, n *node) {
	t.indexQuota(path, -1)
	t.updateQuotaStats(path, -int64(max(n.dataLen, 0)), -1)
}

// updateQuotaStats is updateQuotaStat for the deepest quota at or above path.
func (t *Tree) updateQuotaStats(path string, bytesDiff, countDiff int64) {
	prefix := maxQuotaPrefix(t.quotas, path)
	if prefix == "" {
		return
	}
	n := t.lookup(quotaRoot + prefix + "/" + quotaStatsName)
	if n == nil {
		return
	}
	st, err := parseStatsTrack(t.data(n))
	if err != nil {
		return // ZooKeeper throws here; the numbers stay as they are
	}
	st[stCount] = st.get(stCount) + countDiff
	st[stBytes] = st.get(stBytes) + bytesDiff
	t.setQuotaData(n, st.bytes())
}

// setQuotaData replaces a quota node's data as ZooKeeper does behind the node's back:
// no stat change, no approximateDataSize change.
func (t *Tree) setQuotaData(n *node, data []byte) { t.replaceData(n, data) }

// RecomputeQuotas is ZooKeeper's setupQuota, what it does after loading a snapshot: every
// zookeeper_limits node without children names a quota whose zookeeper_stats node gets
// the count and bytes of the quota's subtree. An imported ZooKeeper database gets this.
func (t *Tree) RecomputeQuotas() {
	base := t.lookup(quotaRoot)
	if base == nil {
		return
	}
	var limits []string
	var visit func(path string, n *node)
	visit = func(path string, n *node) {
		if n.kids == 0 {
			if i := strings.Index(path, "/"+quotaLimitName); strings.HasSuffix(path, "/"+quotaLimitName) {
				limits = append(limits, path[len(quotaRoot):i])
			}
			return
		}
		t.eachChild(n, func(_ nodeID, c *node) bool {
			visit(path+"/"+t.name(c), c)
			return true
		})
	}
	visit(quotaRoot, base)
	for _, real := range limits {
		stats := t.lookup(quotaRoot + real + "/" + quotaStatsName)
		if stats == nil {
			continue
		}
		count, bytes := int64(0), int64(0)
		if top := t.lookup(real); top != nil {
			count, bytes = t.subtreeUsage(top)
		}
		t.setQuotaData(stats, statsTrack{stCount: count, stBytes: bytes}.bytes())
	}
}

// quotaView is where a quota check reads limits and usage: the tree itself, or, inside
// a multi, the tree as it was before the multi (ZooKeeper checks every op of a multi
// against the committed tree, not against the ops before it).
type quotaView struct {
	keys  map[string]int
	nodes map[string][]byte // limit and stats paths -> data; absent: no node
}

// quotaBase captures the quota nodes for the checks of a multi.
func (t *Tree) quotaBase() *quotaView {
	v := &quotaView{keys: make(map[string]int, len(t.quotas)), nodes: map[string][]byte{}}
	for k, c := range t.quotas {
		v.keys[k] = c
		for _, name := range []string{quotaLimitName, quotaStatsName} {
			p := quotaRoot + "/" + k + "/" + name
			if n := t.lookup(p); n != nil {
				v.nodes[p] = t.dataCopy(n)
			}
		}
	}
	return v
}

func (t *Tree) quotaData(path string) ([]byte, bool) {
	if t.multiQuota != nil {
		d, ok := t.multiQuota.nodes[path]
		return d, ok
	}
	n := t.lookup(path)
	if n == nil {
		return nil, false
	}
	return t.data(n), true
}

// checkQuota is ZooKeeperServer.checkQuota for a write at path that changes the count by
// countDiff and the bytes by bytesDiff.
func (t *Tree) checkQuota(path string, bytesDiff, countDiff int64) jute.Code {
	if !t.enforceQuota {
		return jute.OK
	}
	keys := t.quotas
	if t.multiQuota != nil {
		keys = t.multiQuota.keys
	}
	prefix := maxQuotaPrefix(keys, path)
	if prefix == "" {
		return jute.OK
	}
	data, ok := t.quotaData(quotaRoot + prefix + "/" + quotaLimitName)
	if !ok {
		return jute.OK
	}
	limit, err := parseStatsTrack(data)
	if err != nil {
		return jute.OK
	}
	checkCount := countDiff != 0 && (limit.get(stCount) > -1 || limit.get(stCountHardLimit) > -1)
	checkBytes := bytesDiff != 0 && (limit.get(stBytes) > -1 || limit.get(stByteHardLimit) > -1)
	if !checkCount && !checkBytes {
		return jute.OK
	}
	data, ok = t.quotaData(quotaRoot + prefix + "/" + quotaStatsName)
	if !ok {
		return jute.OK
	}
	usage, err := parseStatsTrack(data)
	if err != nil {
		return jute.OK
	}
	if checkCount && t.overQuota(path, prefix, "count", "Count", usage.get(stCount)+countDiff,
		limit.get(stCountHardLimit), limit.get(stCount)) {
		return jute.ErrQuotaExceeded
	}
	if checkBytes && t.overQuota(path, prefix, "bytes", "Byte", usage.get(stBytes)+bytesDiff,
		limit.get(stByteHardLimit), limit.get(stBytes)) {
		return jute.ErrQuotaExceeded
	}
	return jute.OK
}

// overQuota reports whether value goes over the limit (the hard one if set, else the
// soft one), tells Options.OnQuota if so, and is true for a hard limit.
func (t *Tree) overQuota(path, prefix, what, kind string, value, hard, soft int64) bool {
	isHard := hard > -1
	limit := soft
	if isHard {
		limit = hard
	}
	if value <= limit {
		return false
	}
	if t.opts.OnQuota != nil {
		level := "soft"
		if isHard {
			level = "hard"
		}
		t.opts.OnQuota(QuotaEvent{Hard: isHard, Namespace: topNamespace(path),
			Message: fmt.Sprintf("Quota exceeded: %s [current %s=%d, %s%sLimit=%d]", prefix, what, value, level, kind, limit)})
	}
	return isHard
}

// topNamespace is PathUtils.getTopNamespace: the first name of path.
func topNamespace(path string) string {
	parts := javaSplit(path, "/")
	if len(parts) > 1 {
		return parts[1]
	}
	return ""
}

// QuotaMetrics is QuotaMetricsUtils' walk: for every leaf below /zookeeper/quota named
// zookeeper_limits or zookeeper_stats, summed by the top name of its quota path; limits
// take the hard limit where one is set. Namespaces are in no particular order.
func (t *Tree) QuotaMetrics() (countLimit, bytesLimit, countUsage, bytesUsage map[string]int64) {
	countLimit, bytesLimit = map[string]int64{}, map[string]int64{}
	countUsage, bytesUsage = map[string]int64{}, map[string]int64{}
	base := t.lookup(quotaRoot)
	if base == nil {
		return
	}
	var visit func(path string, n *node)
	visit = func(path string, n *node) {
		if n.kids != 0 {
			t.eachChild(n, func(_ nodeID, c *node) bool {
				visit(path+"/"+t.name(c), c)
				return true
			})
			return
		}
		isLimit := strings.HasSuffix(path, "/"+quotaLimitName)
		if !isLimit && !strings.HasSuffix(path, "/"+quotaStatsName) {
			return
		}
		ns := topNamespace(path[len(quotaRoot):])
		if ns == "" || n.dataLen < 0 {
			return
		}
		st, err := parseStatsTrack(t.data(n))
		if err != nil {
			return
		}
		if isLimit {
			countLimit[ns] += pick(st.get(stCountHardLimit), st.get(stCount))
			bytesLimit[ns] += pick(st.get(stByteHardLimit), st.get(stBytes))
		} else {
			countUsage[ns] += st.get(stCount)
			bytesUsage[ns] += st.get(stBytes)
		}
	}
	visit(quotaRoot, base)
	return
}

func pick(hard, soft int64) int64 {
	if hard > -1 {
		return hard
	}
	return soft
}
