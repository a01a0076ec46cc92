package server

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"golang.org/x/sys/unix"

	"github.com/zkraft/zkraft/server/ztest"
)

// A standalone server whose transaction log write fails (here: the disk is full where
// the write lands) stops with the error, as ZooKeeper stops ("Severe unrecoverable
// error"), instead of running on with a log that takes no more writes: before, it
// stayed up refusing every write, electing itself and stepping down ten times a second,
// even after the disk had room again. Restarted, it has every acknowledged write and
// takes writes again. The disk is a 40 MiB tmpfs (the test is skipped where it cannot
// be mounted); a hole punched in the log segment after its last frame makes the next
// frame need new pages.
func TestStandaloneStopsWhenItsLogFails(t *testing.T) {
	disk := t.TempDir()
	if err := syscall.Mount("tmpfs", disk, "tmpfs", 0, "size=40m"); err != nil {
		t.Skipf("cannot mount a tmpfs to fill: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(disk, 0) })
	srv, err := ztest.StartZkraft(ztest.Options{Logf: t.Logf, DataDir: filepath.Join(disk, "data")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop() })
	c := migConnect(t, srv.Addr, 10*time.Second)
	if _, err := c.Create("/acked", []byte("a"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}

	segs, _ := filepath.Glob(filepath.Join(disk, "data", "zkraft", "log", "wal-*.log"))
	if len(segs) == 0 {
		t.Fatal("no log segment")
	}
	sort.Strings(segs)
	seg, err := os.OpenFile(segs[len(segs)-1], os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := seg.Stat()
	const frames = 64 << 10 // well past the frames written so far
	err = unix.Fallocate(int(seg.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, frames, fi.Size()-frames)
	seg.Close()
	if err != nil {
		t.Skipf("cannot punch a hole in the log segment: %v", err)
	}
	fill := filepath.Join(disk, "fill")
	f, err := os.Create(fill)
	if err != nil {
		t.Fatal(err)
	}
	for chunk := make([]byte, 1<<20); err == nil; {
		_, err = f.Write(chunk)
	}
	f.Close()
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("filling the disk: %v", err)
	}

	go c.Create("/lost", bytes.Repeat([]byte("x"), 2*frames), 0, zk.WorldACL(zk.PermAll)) // not acknowledged
	for deadline := time.Now().Add(20 * time.Second); srv.Running(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the server runs on after its log failed:\n%s", srv.Log())
		}
	}
	c.Close()
	if log := srv.Log(); !strings.Contains(log, "the transaction log failed") || !strings.Contains(log, "no space left on device") {
		t.Fatalf("the server stopped without saying why:\n%s", log)
	}

	if err := os.Remove(fill); err != nil {
		t.Fatal(err)
	}
	if err := srv.Restart(true); err != nil {
		t.Fatal(err)
	}
	c = migConnect(t, srv.Addr, 10*time.Second)
	defer c.Close()
	if data, _, err := c.Get("/acked"); err != nil || string(data) != "a" {
		t.Fatalf("the acknowledged write after the restart: %q, %v", data, err)
	}
	if _, err := c.Create("/after", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("a write after the restart: %v", err)
	}
}
