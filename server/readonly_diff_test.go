package server

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/server/ztest"
)

// readOnlyOptions configure read-only mode as ZooKeeper 3.8 needs it: the system property,
// and local sessions (without them, since ZOOKEEPER-3863, its read-only server answers a
// read-only ConnectRequest with a NotReadOnly reply header that no client can parse),
// which become global when they create an ephemeral (without that, such a create is
// EphemeralOnLocalSession).
// zkraft reads the property from JVMFLAGS and warns that the two local session keys are
// not supported.
func readOnlyOptions(t *testing.T) ztest.Options {
	return ztest.Options{Logf: t.Logf, JVMFlags: []string{"-Dreadonlymode.enabled=true"},
		ExtraConfig: map[string]string{"localSessionsEnabled": "true", "localSessionsUpgradingEnabled": "true"}}
}

// A 3-member ZooKeeper 3.8 ensemble and a 3-process zkraft cluster, both with read-only
// mode, lose two members each; a read-only client of the survivor must see the same
// thing from both: when read-only mode starts, the handshake's answer, reads, the error
// of writes, isro, srvr and mntr, kazoo's read-only client, and what happens to it when
// the two come back.
func TestReadOnlyModeMatchesZooKeeper(t *testing.T) {
	requireClient(t, "ZooKeeper 3.8, java and kazoo", ztest.Available() == nil)
	want := readOnlyTranscript(t, "zookeeper", ztest.StartZooKeeperEnsemble)
	got := readOnlyTranscript(t, "zkraft", ztest.StartZkraftCluster)
	if len(want) < 15 {
		t.Fatalf("reference transcript too short:\n%s", strings.Join(want, "\n"))
	}
	compareLines(t, want, got)
	t.Logf("zookeeper:\n%s", strings.Join(want, "\n"))
}

func readOnlyTranscript(t *testing.T, name string, start func(int, ztest.Options) (*ztest.Cluster, error)) []string {
	t.Helper()
	c, err := start(3, readOnlyOptions(t))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	defer c.Stop()
	var out []string
	say := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }

	leader := c.Leader()
	w := dial(t, c.Members[leader].Addr)
	w.connect(0, nil)
	if h := w.call(jute.OpCreate, &jute.CreateRequest{Path: "/ro", Data: []byte("hello"), Acl: openACL}, nil); h.Err != 0 {
		t.Fatalf("%s: create: %d", name, h.Err)
	}
	survivor := (leader + 1) % 3
	addr := c.Members[survivor].Addr
	r := dial(t, addr)
	r.connect(0, nil)
	if h := r.call(jute.OpSync, &jute.SyncRequest{Path: "/ro"}, &jute.SyncResponse{}); h.Err != 0 {
		t.Fatalf("%s: sync on the survivor: %d", name, h.Err)
	}
	e := dial(t, addr)
	e.connect(0, nil)
	if h := e.call(jute.OpCreate, &jute.CreateRequest{Path: "/roe", Acl: openACL, Flags: jute.FlagEphemeral}, nil); h.Err != 0 {
		t.Fatalf("%s: create an ephemeral: %d", name, h.Err)
	}
	e.nc.Close()
	kazoo := startKazooAcrossCut(t, addr, "/ro")
	zxid := r.call(jute.OpExists, &jute.ExistsRequest{Path: "/ro"}, &jute.ExistsResponse{}).Zxid
	w.nc.Close()
	r.nc.Close()

	cut := time.Now()
	for i, m := range c.Members {
		if i != survivor {
			m.Kill()
		}
	}
	awaitFourLetter(t, addr, "isro", "ro", 30*time.Second)
	took := time.Since(cut)
	t.Logf("%s: read-only %v after two members died", name, took)
	say("read-only within 2s..10s of losing the quorum: %v", took >= 2*time.Second && took < 10*time.Second)

	ro := dial(t, addr)
	resp := ro.tryConnect(readOnlyConnect(0, nil))
	if resp == nil {
		t.Fatalf("%s: no read-only session", name)
	}
	say("handshake: readOnly=%v timeout=%d id's server=%v password=%d bytes", resp.ReadOnly, resp.TimeOut,
		resp.SessionId>>56 == int64(survivor+1), len(resp.Passwd))
	var gd jute.GetDataResponse
	h := ro.call(jute.OpGetData, &jute.GetDataRequest{Path: "/ro"}, &gd)
	say("getData /ro: err=%d data=%q zxid is the last seen: %v", h.Err, gd.Data, h.Zxid == zxid)
	say("create: err=%d", ro.call(jute.OpCreate, &jute.CreateRequest{Path: "/x", Acl: openACL}, nil).Err)
	say("setData: err=%d", ro.call(jute.OpSetData, &jute.SetDataRequest{Path: "/ro", Version: -1}, nil).Err)
	say("sync: err=%d", ro.call(jute.OpSync, &jute.SyncRequest{Path: "/"}, nil).Err)
	for _, op := range []struct {
		op  int32
		req jute.Record
	}{{jute.OpGetChildren, &jute.GetChildrenRequest{Path: "/", Watch: true}}, {jute.OpGetEphemerals, &jute.GetEphemeralsRequest{PrefixPath: "/"}},
		{jute.OpAddWatch, &jute.AddWatchRequest{Path: "/ro", Mode: jute.AddWatchPersistent}},
		{jute.OpCheckWatches, &jute.CheckWatchesRequest{Path: "/", Type: jute.WatcherChildren}},
		{jute.OpRemoveWatches, &jute.RemoveWatchesRequest{Path: "/ro", Type: jute.WatcherAny}},
		{jute.OpMultiRead, &jute.MultiRequest{Ops: []jute.MultiOp{{Type: jute.OpGetData, Req: &jute.GetDataRequest{Path: "/ro"}}}}}} {
		say("op %d: err=%d", op.op, ro.call(op.op, op.req, nil).Err)
	}
	ended := dial(t, addr)
	if c := ended.tryConnect(readOnlyConnect(0, nil)); c == nil {
		t.Fatalf("%s: no second read-only session", name)
	}
	h = ended.call(jute.OpCloseSession, nil, nil)
	say("closeSession of a read-only session: err=%d zxid is the last seen: %v, then %s", h.Err, h.Zxid == zxid, afterReply(ended))
	if e := dial(t, addr).tryConnect(readOnlyConnect(ended.sid, ended.pw)); e != nil {
		say("closed read-only session reattached: timeout=%d id=%d readOnly=%v", e.TimeOut, e.SessionId, e.ReadOnly)
	} else {
		say("closed read-only session reattached: closed")
	}
	say("isro: %s", askFourLetter(t, addr, "isro"))
	for _, l := range strings.Split(askFourLetter(t, addr, "srvr"), "\n") {
		if strings.HasPrefix(l, "READ-ONLY") || strings.HasPrefix(l, "Mode:") {
			say("srvr: %s", l)
		}
	}
	for _, l := range strings.Split(askFourLetter(t, addr, "mntr"), "\n") {
		if strings.HasPrefix(l, "zk_server_state") || strings.HasPrefix(l, "zk_peer_state") {
			say("mntr: %s", l)
		}
	}
	plain := jute.Connect{ConnectRequest: jute.ConnectRequest{TimeOut: 10000, Passwd: make([]byte, 16)}, HasReadOnly: true}
	say("read-write client answered: %v", dial(t, addr).tryConnect(plain) != nil)
	if e := dial(t, addr).tryConnect(readOnlyConnect(resp.SessionId+1000, nil)); e != nil {
		say("unknown session: timeout=%d id=%d readOnly=%v", e.TimeOut, e.SessionId, e.ReadOnly)
	} else {
		say("unknown session: closed")
	}
	for _, s := range []struct {
		what string
		c    *rawClient
	}{{"read-write session", r}, {"read-write session owning an ephemeral", e}} {
		seen := readOnlyConnect(s.c.sid, s.c.pw)
		seen.LastZxidSeen = zxid
		if a := dial(t, addr).tryConnect(seen); a != nil {
			say("%s reattached read-only: timeout=%d id=%d readOnly=%v", s.what, a.TimeOut, a.SessionId, a.ReadOnly)
		} else {
			say("%s reattached read-only: closed", s.what)
		}
	}
	for _, l := range kazoo() {
		say("kazoo across the cut: %s", l)
	}
	for _, l := range strings.Split(strings.TrimSpace(run(t, time.Minute, systemPy, "testdata/kazoo_readonly.py", addr, "/ro")), "\n") {
		say("kazoo: %s", l)
	}
	cli := startZkCliReadOnly(t, addr, "get -w /ro", "ls /", "create /x y", "set /ro z", "sync /", "delete /ro")

	for i, m := range c.Members {
		if i != survivor {
			if err := m.Restart(false); err != nil {
				t.Fatalf("%s: restart member %d: %v", name, i+1, err)
			}
		}
	}
	ro.nc.SetReadDeadline(time.Now().Add(60 * time.Second))
	_, err = jute.ReadFrame(ro.br, nil, jute.DefaultMaxBuffer)
	say("read-only client once the quorum is back: closed=%v", err != nil && !isTimeout(err))
	awaitFourLetter(t, addr, "isro", "rw", 60*time.Second)
	for _, l := range kazoo() {
		say("kazoo across the quorum's return: %s", l)
	}
	back := dial(t, addr)
	if r := back.tryConnect(readOnlyConnect(0, nil)); r != nil {
		say("read-only client of the read-write member: readOnly=%v", r.ReadOnly)
	}
	// zkCli's Java client has only seen a read-only member: it comes back without a
	// session id and gets a read-write session.
	time.Sleep(3 * time.Second)
	for _, l := range cli("get /ro", "create /x y", "quit") {
		say("zkCli -r: %s", l)
	}
	return out
}

// startZkCliReadOnly starts `zkCli.sh -r` (a read-only capable Java client) on addr and
// runs commands, a second apart; the function returned runs more, then waits for it to
// end and returns its output, stdout then stderr, as normalizeCli makes it comparable.
func startZkCliReadOnly(t *testing.T, addr string, commands ...string) func(...string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	cmd := exec.CommandContext(ctx, zkCli, "-r", "-server", addr)
	stdin, sc, stderr := startPiped(t, cmd)
	t.Cleanup(func() { cancel(); cmd.Wait() })
	var stdout []string
	done := make(chan struct{})
	go func() {
		for sc.Scan() {
			stdout = append(stdout, sc.Text())
		}
		close(done)
	}()
	send := func(commands []string) {
		for _, l := range commands {
			fmt.Fprintln(stdin, l)
			time.Sleep(time.Second)
		}
	}
	send(commands)
	return func(more ...string) []string {
		send(more)
		stdin.Close()
		<-done
		cmd.Wait()
		return normalizeCli(strings.Join(stdout, "\n") + "\n" + stderr.String())
	}
}

// startKazooAcrossCut starts testdata/kazoo_readonly_partition.py, a read-only capable
// kazoo client connected to addr while it has a quorum, and returns once it asks for the
// cut. Each call of the function returned lets it go on (after the cut, after the quorum
// is back) and returns what it printed until it asks for the next step or ends.
func startKazooAcrossCut(t *testing.T, addr, path string) func() []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	cmd := exec.CommandContext(ctx, systemPy, "testdata/kazoo_readonly_partition.py", addr, path)
	stdin, sc, stderr := startPiped(t, cmd)
	t.Cleanup(func() { cancel(); cmd.Wait() })
	upTo := func() []string {
		var lines []string
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "@") {
				return lines
			}
			lines = append(lines, sc.Text())
		}
		if err := cmd.Wait(); err != nil {
			t.Fatalf("kazoo: %v\n%s\n%s", err, strings.Join(lines, "\n"), stderr.String())
		}
		return lines
	}
	first := upTo()
	return func() []string {
		fmt.Fprintln(stdin, "go")
		lines := append(first, upTo()...)
		first = nil
		return lines
	}
}
