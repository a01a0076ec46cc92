package datatree

import (
	"errors"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// statsTrack is ZooKeeper's StatsTrack: the "count=…,bytes=…" text of a quota's
// zookeeper_limits and zookeeper_stats nodes, as a map of keys to numbers. A key that is
// not there reads as -1.
type statsTrack map[string]int64

// The keys ZooKeeper 3.8 writes.
const (
	stCount          = "count"
	stBytes          = "bytes"
	stCountHardLimit = "countHardLimit"
	stByteHardLimit  = "byteHardLimit"
)

var (
	statsPairSep       = regexp.MustCompile("[,;]+")
	errStatsTrack      = errors.New("datatree: not a StatsTrack")
	errStatsTrackValue = errors.New("datatree: StatsTrack value is not a long")
)

// parseStatsTrack reads data as StatsTrack's constructor does: pairs split on runs of
// ',' and ';', each "key=value" with an empty value meaning -1. Where Java throws (null
// data, a pair without '=', a value that is not a long) it returns an error.
func parseStatsTrack(data []byte) (statsTrack, error) {
	if data == nil {
		return nil, errStatsTrack
	}
	st := statsTrack{}
	if len(data) == 0 {
		return st, nil
	}
	for _, pair := range dropTrailingEmpty(statsPairSep.Split(string(data), -1)) {
		kv := javaSplit(pair, "=")
		if len(kv) < 2 {
			return nil, errStatsTrack
		}
		v := kv[1]
		if v == "" {
			v = "-1"
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, errStatsTrackValue
		}
		st[kv[0]] = n
	}
	return st, nil
}

// dropTrailingEmpty drops the trailing empty strings, as Java's Pattern.split does.
func dropTrailingEmpty(parts []string) []string {
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

func (st statsTrack) get(key string) int64 {
	if v, ok := st[key]; ok {
		return v
	}
	return -1
}

// bytes is StatsTrack.toString: count and bytes first, then, after an extra '=' (so a
// 3.4 parser ignores them), the other keys sorted, each after a ';'.
func (st statsTrack) bytes() []byte {
	var b strings.Builder
	b.WriteString("count=" + strconv.FormatInt(st.get(stCount), 10))
	b.WriteString(",bytes=" + strconv.FormatInt(st.get(stBytes), 10))
	var rest []string
	for k := range st {
		if k != stCount && k != stBytes {
			rest = append(rest, k)
		}
	}
	if len(rest) > 0 {
		sort.Strings(rest)
		b.WriteString("=")
		for _, k := range rest {
			b.WriteString(";" + k + "=" + strconv.FormatInt(st[k], 10))
		}
	}
	return []byte(b.String())
}
