package server

import (
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/server/ztest"
)

// adminIdleSteps are what three connections to an AdminServer with admin.idleTimeout=1000
// see: one idle after a request (kept alive), one that sent half a request, one that sent
// nothing. Each line says whether the server closed it, without another answer, within
// four times the timeout.
func adminIdleSteps(t *testing.T, addr string) []string {
	awaitPort(t, addr)
	var lines []string
	for _, step := range []struct{ what, send string }{
		{"idle after a request", "GET /commands/ruok HTTP/1.1\r\nHost: x\r\n\r\n"},
		{"half a request", "GET /commands/ruok HTTP/1.1\r\n"},
		{"nothing sent", ""},
	} {
		nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		nc.SetDeadline(time.Now().Add(4 * time.Second))
		fmt.Fprint(nc, step.send)
		got, err := io.ReadAll(nc)
		answers := strings.Count(string(got), "HTTP/1.1 ")
		closed := err == nil // EOF: the server closed it
		lines = append(lines, fmt.Sprintf("%s: %d answers, closed by the server within 4 s: %v", step.what, answers, closed))
	}
	return lines
}

// admin.idleTimeout closes an AdminServer connection idle that long, as ZooKeeper's Jetty
// does: one kept alive after its answer, one with half a request, one that sent nothing,
// each without another answer.
func TestAdminIdleTimeoutMatchesZooKeeper(t *testing.T) {
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	ports := map[string]int{}
	startBoth(t, func(name string) ztest.Options {
		ports[name] = mustFreePort(t)
		return ztest.Options{Logf: t.Logf, ExtraConfig: adminConfig(ports[name], "admin.idleTimeout", "1000")}
	})
	want := adminIdleSteps(t, fmt.Sprintf("127.0.0.1:%d", ports["zookeeper"]))
	t.Logf("zookeeper:\n%s", strings.Join(want, "\n"))
	compareLines(t, want, adminIdleSteps(t, fmt.Sprintf("127.0.0.1:%d", ports["zkraft"])))
}
