package persistence

import (
	"os"
	"time"
)

// Slow fdatasyncs. ZooKeeper warns when an fsync of its transaction log takes longer
// than fsync.warningthresholdms (1 s by default): on a shared, saturated or failing disk
// that is where a write's time goes, and every client waits for it. The WAL times each
// of its fdatasyncs, the syncer's too (wal_deferred.go), and reports those above the
// threshold to whoever asked (quorum logs them).

// SlowSync is one fdatasync of the transaction log that took longer than the threshold.
type SlowSync struct {
	Path string // the segment file
	Took time.Duration
	Size int64 // the segment file's size
}

type slowSyncs struct {
	threshold time.Duration
	report    func(SlowSync) // nil: nobody asked
}

// WarnSlowSyncs has the WAL call report after every fdatasync that took longer than
// threshold. Call it before the log is written to.
func (w *WAL) WarnSlowSyncs(threshold time.Duration, report func(SlowSync)) {
	w.slow = slowSyncs{threshold: threshold, report: report}
}

// WarnSlowSyncs has the store's transaction log report its slow fdatasyncs
// (WAL.WarnSlowSyncs).
func (s *Store) WarnSlowSyncs(threshold time.Duration, report func(SlowSync)) {
	s.wal.WarnSlowSyncs(threshold, report)
}

// timedSync makes seg's file durable with sync and reports it if that was slow; seg is
// not written meanwhile (the writer holds wmu, or waits for the syncer).
func (w *WAL) timedSync(seg *segment, sync func(*os.File) error) error {
	start := time.Now()
	err := sync(seg.f)
	if took := time.Since(start); w.slow.report != nil && took > w.slow.threshold {
		w.slow.report(SlowSync{Path: seg.path, Took: took, Size: seg.size})
	}
	return err
}
