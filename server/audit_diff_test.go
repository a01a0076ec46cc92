package server

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/server/ztest"
)

// consoleLog4j writes a log4j.properties that sends one ZooKeeper logger's lines at INFO
// and above, and nothing else, to its standard output (where ztest keeps the server's
// log) in pattern, and returns its path (ztest.Options.Log4j).
func consoleLog4j(t *testing.T, logger, pattern string) string {
	t.Helper()
	props := filepath.Join(t.TempDir(), "log4j.properties")
	text := "log4j.rootLogger=OFF\n" +
		"log4j.appender.ONLY=org.apache.log4j.ConsoleAppender\n" +
		"log4j.appender.ONLY.layout=org.apache.log4j.PatternLayout\n" +
		"log4j.appender.ONLY.layout.ConversionPattern=" + pattern + "\n" +
		"log4j.logger." + logger + "=INFO, ONLY\n" +
		"log4j.additivity." + logger + "=false\n"
	if err := os.WriteFile(props, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return props
}

// auditLines are the audit events in a server's log, as ZooKeeper's text ("LEVEL
// k=v<TAB>k=v..."), zkraft's log lines turned into it.
func auditLines(t *testing.T, log string) []string {
	var out []string
	for _, line := range strings.Split(log, "\n") {
		switch {
		case strings.HasPrefix(line, "AUDIT "):
			out = append(out, strings.TrimPrefix(line, "AUDIT "))
		case strings.Contains(line, " msg=audit "):
			kv := logfmt(t, line)
			var fields []string
			for _, f := range kv[3:] { // after time, level and msg
				fields = append(fields, f[0]+"="+f[1])
			}
			out = append(out, kv[1][1]+" "+strings.Join(fields, "\t"))
		}
	}
	return out
}

// logfmt splits a line of slog's text handler into its keys and values.
func logfmt(t *testing.T, line string) [][2]string {
	var out [][2]string
	for rest := line; rest != ""; {
		key, after, ok := strings.Cut(rest, "=")
		if !ok {
			t.Fatalf("not a log line: %q", line)
		}
		var value string
		if strings.HasPrefix(after, `"`) {
			quoted, err := strconv.QuotedPrefix(after)
			if err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			value, _ = strconv.Unquote(quoted)
			after = after[len(quoted):]
		} else {
			value, after, _ = strings.Cut(after, " ")
			after = " " + after
		}
		out = append(out, [2]string{key, value})
		rest = strings.TrimPrefix(after, " ")
	}
	return out
}

// auditSteps drives every kind of write, refused ones too, and sessions that leave
// ephemeral nodes, through three clients of addr.
func auditSteps(t *testing.T, addr string) {
	connect := func() *zk.Conn { return zkConnect(t, addr, nil) }
	c1, c2, c3 := connect(), connect(), connect()
	defer c1.Close()
	acl := zk.WorldACL(zk.PermAll)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	refused := func(err error) {
		t.Helper()
		if err == nil {
			t.Fatal("a refused step succeeded")
		}
	}
	_, err := c1.Create("/a", []byte("x"), 0, acl)
	must(err)
	_, err = c1.Create("/a", nil, 0, acl)
	refused(err)
	_, err = c1.Create("/a/s-", nil, zk.FlagSequence, acl)
	must(err)
	_, err = c1.CreateContainer("/c", nil, zk.FlagContainer, acl)
	must(err)
	_, err = c1.CreateTTL("/t", nil, zk.FlagTTL, acl, 60*time.Second)
	must(err)
	_, err = c1.Set("/a", []byte("y"), -1)
	must(err)
	_, err = c1.Set("/a", []byte("z"), 99)
	refused(err)
	_, err = c1.Set("/nope", nil, -1)
	refused(err)
	_, err = c1.SetACL("/a", append(zk.DigestACL(zk.PermRead, "u", "p"), acl...), -1)
	must(err)
	_, err = c1.SetACL("/nope", zk.WorldACL(zk.PermRead|zk.PermWrite), -1)
	refused(err)
	_, err = c1.Multi(&zk.CreateRequest{Path: "/m", Acl: acl}, &zk.SetDataRequest{Path: "/m", Data: []byte("m"), Version: -1},
		&zk.CheckVersionRequest{Path: "/m", Version: -1}, &zk.CreateRequest{Path: "/m/q-", Acl: acl, Flags: zk.FlagSequence},
		&zk.CreateRequest{Path: "/m/r", Acl: acl, Flags: zk.FlagEphemeral}, &zk.DeleteRequest{Path: "/m/q-0000000000", Version: -1})
	must(err)
	_, err = c1.Multi(&zk.CreateRequest{Path: "/m2", Acl: acl}, &zk.DeleteRequest{Path: "/nope", Version: -1})
	refused(err)
	must(c1.Delete("/a/s-0000000000", -1))
	refused(c1.Delete("/nope", -1))
	_, err = c1.IncrementalReconfig([]string{"server.9=127.0.0.1:1:2;3"}, nil, -1)
	refused(err)
	_, err = c1.Sync("/a")
	must(err)
	_, _, err = c1.Get("/a")
	must(err)

	must(c3.AddAuth("digest", []byte("u:p")))
	_, err = c3.Create("/d", nil, 0, acl)
	must(err)
	c3.Close()

	_, err = c2.Create("/e", nil, zk.FlagEphemeral, acl)
	must(err)
	_, err = c2.Create("/es-", nil, zk.FlagEphemeral|zk.FlagSequence, acl)
	must(err)
	c2.Close()
	// The session's close is applied before its reply goes out.
}

// The audit log (audit.enable=true) records what ZooKeeper 3.8's does, event for event:
// the server's start and stop, every kind of write and refused write with its session,
// user (ip, then digest's name), ip, path, node type and ACL, a successful multi as its
// creates, deletes and setData (a sequential create's type left out, as ZooKeeper's
// lookup misses it), a failed one as one multiOperation failure, a refused reconfig, no
// createTTL, no reads, and the ephemeral nodes of a closed session deleted by the
// server's user. Sessions are compared by the order they first appear in.
func TestAuditLogMatchesZooKeeper(t *testing.T) {
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	// ZooKeeper's audit events, "AUDIT LEVEL message".
	props := consoleLog4j(t, "org.apache.zookeeper.audit.Slf4jAuditLogger", "AUDIT %p %m%n")
	servers := startBoth(t, func(string) ztest.Options {
		return ztest.Options{Logf: t.Logf, Log4j: props, ExtraConfig: map[string]string{"audit.enable": "true"}}
	})
	got := map[string][]string{}
	for name, s := range servers {
		auditSteps(t, s.Addr)
		// A graceful stop: ZooKeeper's shutdown hook and zkraft's Close log serverStop.
		s.Cmd.Process.Signal(syscall.SIGTERM)
		deadline := time.Now().Add(20 * time.Second)
		for !strings.Contains(s.Log(), "operation=serverStop") && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		got[name] = normalizeSessions(auditLines(t, s.Log()))
	}
	want := got["zookeeper"]
	t.Logf("zookeeper:\n%s", strings.Join(want, "\n"))
	if len(want) < 20 {
		t.Fatalf("ZooKeeper logged %d audit events", len(want))
	}
	compareLines(t, want, got["zkraft"])
}

// normalizeSessions names sessions S1, S2, ... in the order they first appear, and sorts
// each run of ephemeral deletions (ZooKeeper deletes a session's in a hash set's order).
func normalizeSessions(lines []string) []string {
	names := map[string]string{}
	session := regexp.MustCompile(`session=0x[0-9a-f]+`)
	out := make([]string, len(lines))
	for i, line := range lines {
		out[i] = session.ReplaceAllStringFunc(line, func(m string) string {
			if _, ok := names[m]; !ok {
				names[m] = fmt.Sprintf("session=S%d", len(names)+1)
			}
			return names[m]
		})
	}
	for i := 0; i < len(out); i++ {
		j := i
		for j < len(out) && strings.Contains(out[j], "operation=ephemeralZNodeDeletion") {
			j++
		}
		slices.Sort(out[i:j])
		i = max(i, j-1)
	}
	return out
}
