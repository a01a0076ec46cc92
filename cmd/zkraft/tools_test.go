package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/persistence"
	"github.com/zkraft/zkraft/server"
	"github.com/zkraft/zkraft/session"
)

// startWithClient starts a standalone server on dir and connects go-zookeeper to it.
func startWithClient(t *testing.T, dir string) (*server.Server, *zk.Conn) {
	t.Helper()
	cfg := server.DefaultConfig()
	cfg.ClientPort, cfg.ClientPortAddress, cfg.DataDir = 0, "127.0.0.1", dir
	s, err := server.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	c, _, err := zk.Connect([]string{s.Addr().String()}, 5*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	return s, c
}

func runRoot(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRootCommand()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

// The offline tools read what a real server wrote: snapshot inspect and dump (text and
// JSON), log dump and restore; wipe leaves a standalone server's store.
func TestSnapshotAndLogTools(t *testing.T) {
	dir := t.TempDir()
	s, c := startWithClient(t, dir)
	for _, p := range []string{"/tool-a", "/tool-a/b", "/tool-c"} {
		if _, err := c.Create(p, []byte("v"+p), 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Create("/tool-e", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermRead)); err != nil {
		t.Fatal(err)
	}
	if err := s.Snapshot(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create("/after-snapshot", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	c.Close()
	s.Close()

	out, err := runRoot(t, "snapshot", "inspect", dir)
	if err != nil {
		t.Fatalf("inspect: %v\n%s", err, out)
	}
	// "/", /zookeeper, /zookeeper/quota, /zookeeper/config and the four created before it.
	for _, want := range []string{"znodes\t8\n", "ephemerals\t1\n", "sessions\t1\n", "digest\t0x"} {
		if !strings.Contains(out, want) {
			t.Fatalf("inspect lacks %q:\n%s", want, out)
		}
	}
	out, err = runRoot(t, "snapshot", "dump", dir)
	if err != nil || !strings.Contains(out, "\n/tool-a/b\n") || !strings.Contains(out, `data = "v/tool-a/b"`) || strings.Contains(out, "after-snapshot") {
		t.Fatalf("dump: %v\n%s", err, out)
	}
	out, err = runRoot(t, "snapshot", "dump", "--json", dir)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Nodes []struct {
			Path string  `json:"path"`
			Data *string `json:"data"`
		} `json:"nodes"`
		Sessions []struct {
			ID string `json:"id"`
		} `json:"sessions"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("dump --json is not JSON: %v\n%s", err, out)
	}
	found := false
	for _, n := range doc.Nodes {
		found = found || n.Path == "/tool-c" && n.Data != nil && *n.Data == "v/tool-c"
	}
	if !found || len(doc.Sessions) != 1 {
		t.Fatalf("dump --json: %s", out)
	}
	out, err = runRoot(t, "log", "dump", dir)
	if err != nil {
		t.Fatalf("log dump: %v\n%s", err, out)
	}
	for _, want := range []string{"op=createSession", "op=create path=/tool-a/b", "op=create path=/after-snapshot"} {
		if !strings.Contains(out, want) {
			t.Fatalf("log dump lacks %q:\n%s", want, out)
		}
	}
	// restore loads the snapshot and the log after it: /after-snapshot is there, and the
	// closed session and its ephemeral are gone (4 system nodes and 4 created).
	restored := t.TempDir()
	out, err = runRoot(t, "restore", "--from", dir, "--data-dir", restored)
	if err != nil || !strings.Contains(out, "restored 8 znodes and 0 sessions") {
		t.Fatalf("restore: %v %s", err, out)
	}
	out, err = runRoot(t, "snapshot", "inspect", restored)
	if err != nil || !strings.Contains(out, "znodes\t8\n") {
		t.Fatalf("inspect of the restored dir: %v\n%s", err, out)
	}
	if _, err := runRoot(t, "restore", "--from", dir, "--data-dir", restored); err == nil {
		t.Fatal("restore over an existing store")
	}
	if _, err := runRoot(t, "restore", "--data-dir", t.TempDir()); err == nil || !strings.Contains(err.Error(), `"from"`) {
		t.Fatalf("restore without --from: %v", err)
	}
	// A standalone server's store is the only copy of its data: wipe leaves it.
	if out, err := runRoot(t, "wipe", "--data-dir", dir); err == nil || !strings.Contains(err.Error(), "only voter") {
		t.Fatalf("wipe of a standalone server's store: %v %s", err, out)
	}
	if _, err := runRoot(t, "snapshot", "inspect", dir); err != nil {
		t.Fatalf("the snapshot after a refused wipe: %v", err)
	}
}

// backup copies the newest snapshot of a running server; restore seeds a new data dir
// from the copy, which holds the state as of that snapshot.
func TestBackupOfARunningServer(t *testing.T) {
	dir := t.TempDir()
	s, c := startWithClient(t, dir)
	defer c.Close()
	for i := 0; i < 20; i++ {
		if _, err := c.Create(fmt.Sprintf("/b%02d", i), []byte("v"), 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Snapshot(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create("/after", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	backup := t.TempDir()
	out, err := runRoot(t, "backup", "--data-dir", dir, "--to", backup)
	if err != nil || !strings.Contains(out, "backed up the snapshot") {
		t.Fatalf("backup of a running server: %v %s", err, out)
	}
	if _, err := c.Create("/still-serving", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("the server stopped serving during the backup: %v", err)
	}
	restored := t.TempDir()
	if out, err := runRoot(t, "restore", "--from", backup, "--data-dir", restored); err != nil {
		t.Fatalf("restore: %v %s", err, out)
	}
	out, err = runRoot(t, "snapshot", "dump", "--json", restored)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, `"path": "/b19"`) || strings.Contains(out, `"/after"`) {
		t.Fatalf("restored backup: %s", out)
	}
}

// dump --json gives every znode's data byte for byte: text as a JSON string, and data
// that is not UTF-8 (a JSON string cannot hold it: its bytes came out as U+FFFD) in
// base64.
func TestSnapshotDumpJSONKeepsBinaryData(t *testing.T) {
	tree := datatree.New(datatree.Options{})
	open := []jute.ACL{{Perms: jute.PermAll, Id: jute.Id{Scheme: "world", Id: "anyone"}}}
	nodes := map[string][]byte{"/text": []byte("héllo"), "/binary": {0xff, 'P', 'B', 'U', 'F', 0, 0x80}, "/empty": {}, "/null": nil}
	zxid := int64(0)
	for p, d := range nodes {
		zxid++
		if _, code, _ := tree.Apply(datatree.Txn{Zxid: zxid}, jute.OpCreate, &jute.CreateRequest{Path: p, Data: d, Acl: open}); code != jute.OK {
			t.Fatal(p, code)
		}
	}
	var out bytes.Buffer
	if err := dumpState(&out, &persistence.State{Zxid: zxid, Tree: tree, Sessions: session.NewTable()}, true); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Nodes []struct {
			Path       string  `json:"path"`
			Data       *string `json:"data"`
			DataBase64 *string `json:"data_base64"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out.String())
	}
	seen := 0
	for _, n := range doc.Nodes {
		want, ok := nodes[n.Path]
		if !ok {
			continue
		}
		seen++
		var got []byte
		switch {
		case n.DataBase64 != nil:
			b, err := base64.StdEncoding.DecodeString(*n.DataBase64)
			if err != nil || n.Data != nil {
				t.Fatalf("%s: data %v beside data_base64 %q (%v)", n.Path, n.Data, *n.DataBase64, err)
			}
			got = b
		case n.Data != nil:
			got = []byte(*n.Data)
		}
		if !bytes.Equal(got, want) || (got == nil) != (want == nil) {
			t.Errorf("%s: dumped %q, stored %q", n.Path, got, want)
		}
	}
	if seen != len(nodes) {
		t.Fatalf("%d of %d nodes in the dump:\n%s", seen, len(nodes), out.String())
	}
}

// export warns of TTL nodes: ZooKeeper 3.8 runs with extended types off unless told
// (zookeeper.extendedTypesEnabled), and then takes a TTL node for an ephemeral of a
// session that is gone and deletes it as it starts (checked with Debian's 3.8.0 on an
// exported snapshot: the TTL nodes were gone, the rest there). zkraft takes TTL nodes by
// default, so a rollback lost them without a word.
func TestExportWarnsOfTTLNodes(t *testing.T) {
	dir := t.TempDir()
	s, c := startWithClient(t, dir)
	if _, err := c.Create("/plain", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	c.Close()
	s.Close()
	out, err := runRoot(t, "export", "--to-zookeeper", t.TempDir(), "--data-dir", dir)
	if err != nil || strings.Contains(out, "extendedTypesEnabled") {
		t.Fatalf("export without TTL nodes: %v\n%s", err, out)
	}

	dir = t.TempDir()
	s, c = startWithClient(t, dir)
	for _, p := range []string{"/ttl-a", "/ttl-b"} {
		if _, err := c.CreateTTL(p, nil, zk.FlagTTL, zk.WorldACL(zk.PermAll), time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	c.Close()
	s.Close()
	out, err = runRoot(t, "export", "--to-zookeeper", t.TempDir(), "--data-dir", dir)
	if err != nil || !strings.Contains(out, "2 TTL nodes") || !strings.Contains(out, "-Dzookeeper.extendedTypesEnabled=true") {
		t.Fatalf("export with TTL nodes: %v, no warning:\n%s", err, out)
	}
}

// A server writes its first snapshot only after snapCount entries, so on a new or
// lightly written server there is nothing for backup to copy: it says so, and what to
// do instead, rather than only that there is no snapshot.
func TestBackupBeforeTheFirstSnapshot(t *testing.T) {
	dir := t.TempDir()
	_, c := startWithClient(t, dir)
	defer c.Close()
	if _, err := c.Create("/only", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	out, err := runRoot(t, "backup", "--data-dir", dir, "--to", t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "snapCount") || !strings.Contains(err.Error(), "commands/snapshot") {
		t.Fatalf("backup before the first snapshot: %v\n%s", err, out)
	}
}
