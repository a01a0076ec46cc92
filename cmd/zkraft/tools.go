package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hashicorp/raft"
	"github.com/spf13/cobra"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/persistence"
	"github.com/zkraft/zkraft/quorum"
)

// Offline tools, as ZooKeeper's zkSnapShotToolkit and zkTxnLogToolkit.

func newSnapshotCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "snapshot", Short: "Look inside a snapshot (offline)"}
	cmd.AddCommand(&cobra.Command{
		Use:   "inspect FILE",
		Short: "Summarize a snapshot: zxid, znodes, data size, sessions, digest",
		Long:  "FILE is a snapshot's state.bin, its directory, or a data dir (its newest snapshot).",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path, st, err := loadSnapshot(args[0])
			if err != nil {
				return err
			}
			eph := st.Tree.EphemeralSessions()
			n := 0
			for _, paths := range eph {
				n += len(paths)
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "snapshot\t%s\n", path)
			fmt.Fprintf(w, "zxid\t0x%x\n", st.Zxid)
			// NodeCount is ZooKeeper's zk_znode_count, which counts the root twice.
			fmt.Fprintf(w, "znodes\t%d\n", st.Tree.NodeCount()-1)
			fmt.Fprintf(w, "data_bytes\t%d\n", st.Tree.ApproximateDataSize())
			fmt.Fprintf(w, "ephemerals\t%d\n", n)
			fmt.Fprintf(w, "sessions\t%d\n", st.Sessions.Len())
			fmt.Fprintf(w, "digest\t0x%016x\n", st.Tree.Digest())
			return nil
		},
	})
	var asJSON bool
	dump := &cobra.Command{
		Use:   "dump FILE",
		Short: "Print every znode (path, stat, ACL, data) and every session, as text or JSON",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, st, err := loadSnapshot(args[0])
			if err != nil {
				return err
			}
			return dumpState(cmd.OutOrStdout(), st, asJSON)
		},
	}
	dump.Flags().BoolVar(&asJSON, "json", false, "one JSON document")
	cmd.AddCommand(dump)
	return cmd
}

// loadSnapshot finds and decodes the snapshot FILE names.
func loadSnapshot(arg string) (string, *persistence.State, error) {
	path := arg
	if fi, err := os.Stat(arg); err == nil && fi.IsDir() {
		switch {
		case exists(filepath.Join(arg, "state.bin")):
			path = filepath.Join(arg, "state.bin")
		default:
			all, _ := filepath.Glob(filepath.Join(persistence.SnapshotDir(persistence.StoreDir(arg)), "*", "state.bin"))
			var dirs []string
			for _, p := range all {
				if !strings.HasSuffix(filepath.Dir(p), ".tmp") { // being written
					dirs = append(dirs, p)
				}
			}
			if len(dirs) == 0 {
				return "", nil, fmt.Errorf("no snapshot under %s", arg)
			}
			sort.Strings(dirs) // ids start with term-index-time
			path = newestSnapshot(dirs)
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	st, err := persistence.ReadState(f, datatree.Options{ExtendedTypes: true})
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", path, err)
	}
	return path, st, nil
}

// newestSnapshot picks the state.bin whose meta.json has the highest index.
func newestSnapshot(paths []string) string {
	best, bestIndex := paths[len(paths)-1], uint64(0)
	for _, p := range paths {
		var m raft.SnapshotMeta
		b, err := os.ReadFile(filepath.Join(filepath.Dir(p), "meta.json"))
		if err == nil && json.Unmarshal(b, &m) == nil && m.Index >= bestIndex {
			best, bestIndex = p, m.Index
		}
	}
	return best
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

type dumpNode struct {
	Path string  `json:"path"`
	Data *string `json:"data"` // null for null data, and for data in DataBase64
	// DataBase64 holds data that is not UTF-8 text, which a JSON string cannot carry.
	DataBase64 *string    `json:"data_base64,omitempty"`
	ACL        []jute.ACL `json:"acl"`
	Stat       jute.Stat  `json:"stat"`
	raw        []byte
}

func dumpState(w io.Writer, st *persistence.State, asJSON bool) error {
	var nodes []dumpNode
	st.Tree.Nodes(func(sn datatree.StoredNode) {
		_, stat, _ := st.Tree.Get(sn.Path) // the stat as clients see it
		n := dumpNode{Path: sn.Path, ACL: sn.ACL, Stat: stat, raw: sn.Data}
		switch {
		case sn.Data != nil && utf8.Valid(sn.Data):
			s := string(sn.Data)
			n.Data = &s
		case sn.Data != nil:
			s := base64.StdEncoding.EncodeToString(sn.Data)
			n.DataBase64 = &s
		}
		nodes = append(nodes, n)
	})
	type dumpSession struct {
		ID      string `json:"id"`
		Timeout int32  `json:"timeout"`
		Owner   string `json:"owner,omitempty"`
	}
	var sessions []dumpSession
	for _, s := range st.Sessions.All() {
		sessions = append(sessions, dumpSession{ID: fmt.Sprintf("0x%x", s.ID), Timeout: s.Timeout, Owner: s.Owner})
	}
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"zxid": fmt.Sprintf("0x%x", st.Zxid), "nodes": nodes, "sessions": sessions})
	}
	ms := func(t int64) string { return time.UnixMilli(t).UTC().Format(time.RFC3339Nano) }
	fmt.Fprintf(w, "ZNode Details (count=%d):\n", len(nodes))
	for _, n := range nodes {
		s := n.Stat
		fmt.Fprintf(w, "----\n%s\n  cZxid = 0x%x\n  ctime = %s\n  mZxid = 0x%x\n  mtime = %s\n  pZxid = 0x%x\n  cversion = %d\n  dataVersion = %d\n  aclVersion = %d\n  ephemeralOwner = 0x%x\n  dataLength = %d\n  numChildren = %d\n",
			n.Path, s.Czxid, ms(s.Ctime), s.Mzxid, ms(s.Mtime), s.Pzxid, s.Cversion, s.Version, s.Aversion, s.EphemeralOwner, s.DataLength, s.NumChildren)
		for _, a := range n.ACL {
			fmt.Fprintf(w, "  acl = %s:%s:%d\n", a.Id.Scheme, a.Id.Id, a.Perms)
		}
		if n.raw != nil {
			fmt.Fprintf(w, "  data = %q\n", n.raw)
		}
	}
	fmt.Fprintf(w, "----\nSession Details (count=%d):\n", len(sessions))
	for _, s := range sessions {
		fmt.Fprintf(w, "%s timeout=%d owner=%q\n", s.ID, s.Timeout, s.Owner)
	}
	return nil
}

func newLogCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "log", Short: "Look inside a stopped server's Raft log (offline)"}
	cmd.AddCommand(&cobra.Command{
		Use:   "dump DIR",
		Short: "Print every log entry: zxid, term, time, session, operation, path",
		Long:  "DIR is a server's data dir (or its zkraft/ store dir). The server must be stopped:\nthe log file is locked while it runs.",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			if !exists(persistence.StablePath(dir)) {
				dir = persistence.StoreDir(dir)
			}
			log, closeLog, err := persistence.OpenLog(dir)
			if err != nil {
				return err
			}
			defer closeLog()
			return dumpLog(cmd.OutOrStdout(), log)
		},
	})
	return cmd
}

// replicatedOps names the entries only zkraft's log holds; client ops are named by
// jute's op table.
var replicatedOps = map[int32]string{
	quorum.OpMoveSession: "moveSession", quorum.OpSetConfig: "setConfig", quorum.OpReconfigNoQuorum: "reconfigNoQuorum", quorum.OpReconfigInProgress: "reconfigInProgress",
}

func dumpLog(w io.Writer, log raft.LogStore) error {
	first, err := log.FirstIndex()
	if err != nil {
		return err
	}
	last, err := log.LastIndex()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "entries %d..%d\n", first, last)
	for i := first; i <= last && last > 0; i++ {
		var l raft.Log
		if err := log.GetLog(i, &l); err != nil {
			return fmt.Errorf("entry %d: %w", i, err)
		}
		if l.Type != raft.LogCommand {
			fmt.Fprintf(w, "zxid=0x%x term=%d raft=%s\n", l.Index, l.Term, l.Type)
			continue
		}
		e, err := quorum.UnmarshalEntry(l.Data)
		if err != nil {
			return fmt.Errorf("entry %d: %w", i, err)
		}
		name := replicatedOps[e.Op]
		if info, ok := jute.Op(e.Op); ok {
			name = info.Name
		}
		if name == "" {
			name = fmt.Sprintf("op%d", e.Op)
		}
		fmt.Fprintf(w, "zxid=0x%x term=%d time=%s session=0x%x op=%s", l.Index, l.Term,
			time.UnixMilli(e.Time).UTC().Format(time.RFC3339Nano), e.Session, name)
		if p := requestPath(e.Req); p != "" {
			fmt.Fprintf(w, " path=%s", p)
		}
		fmt.Fprintln(w)
	}
	return nil
}

// requestPath is the Path field of a request record, if it has one.
func requestPath(r jute.Record) string {
	if r == nil {
		return ""
	}
	v := reflect.ValueOf(r)
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return ""
	}
	if f := v.FieldByName("Path"); f.IsValid() && f.Kind() == reflect.String {
		return f.String()
	}
	return ""
}
