package persistence

import (
	"fmt"
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
}

type slowSyncs struct {
	threshold time.Duration
	report    func(SlowSync) // nil: nobody asked
	// observe hears of every fdatasync's duration; nil: nobody asked.
	observe func(took time.Duration)
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

// ObserveSyncs has the WAL call observe with the duration of every fdatasync it makes,
// the syncer's too (the server counts them as ZooKeeper's fsynctime). Call it before the
// log is written to; observe must not block.
func (w *WAL) ObserveSyncs(observe func(took time.Duration)) { w.slow.observe = observe }

// ObserveSyncs has the store's transaction log report every fdatasync's duration
// (WAL.ObserveSyncs).
func (s *Store) ObserveSyncs(observe func(took time.Duration)) { s.wal.ObserveSyncs(observe) }

// timedSync makes seg's file durable with sync (unless the WAL skips its syncs), and
// returns the sync if it was slow and someone asked (reportSlow tells them, once nobody
// waits on the caller any more).
func (w *WAL) timedSync(seg *segment, sync func(*os.File) error) (*SlowSync, error) {
	if w.noSync {
		return nil, nil
	}
	start := time.Now()
	err := sync(seg.f)
	took := time.Since(start)
	if w.slow.observe != nil {
		w.slow.observe(took)
	}
	if w.slow.report != nil && took > w.slow.threshold {
		return &SlowSync{Path: seg.path, Took: took}, err
	}
	return nil, err
}

func (w *WAL) reportSlow(s *SlowSync) {
	if s != nil {
		w.slow.report(*s)
	}
}

// syncFailed is the error of a failed fdatasync of seg, after which the log takes no
// more writes.
func syncFailed(seg *segment, err error) error {
	return fmt.Errorf("persistence: fdatasync of %s failed, the transaction log takes no more writes until a restart: %w", seg.path, err)
}
