package server

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/server/ztest"
)

// rawHTTP sends one request with any method over its own connection (Go's client treats
// CONNECT as a proxy tunnel) and returns the status and the Allow header.
func rawHTTP(t *testing.T, addr, method, path string) (int, string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := fmt.Fprintf(c, "%s %s HTTP/1.1\r\nHost: %s\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", method, path, addr); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: method})
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Allow")
}

var adminMethodPaths = []string{"/", "/nope", "/commands", "/commands/ruok", "/commands/nope"}

var httpMethods = []string{"GET", "HEAD", "OPTIONS", "TRACE", "POST", "PUT", "DELETE", "PATCH", "CONNECT", "TRACK"}

// The AdminServer answers every method on every path as ZooKeeper 3.8's Jetty does: TRACE
// refused (403), OPTIONS listing GET, HEAD, TRACE, OPTIONS, POST, PUT and DELETE 405,
// other methods 501, GET and HEAD served (404 off the command URL).
func TestAdminHTTPMethodsMatchZooKeeper(t *testing.T) {
	t.Parallel()
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	run := func(start func(ztest.Options) (*ztest.Server, error)) []string {
		s, port := startAdmin(t, start, ztest.Options{})
		defer s.Stop()
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		var out []string
		for _, path := range adminMethodPaths {
			for _, m := range httpMethods {
				code, allow := rawHTTP(t, addr, m, path)
				out = append(out, fmt.Sprintf("%s %s: %d %q", m, path, code, allow))
			}
		}
		return out
	}
	zk, us := run(ztest.StartZooKeeper), run(ztest.StartZkraft)
	if len(zk) != len(us) {
		t.Fatalf("%d answers from ZooKeeper, %d from zkraft", len(zk), len(us))
	}
	for i := range zk {
		if zk[i] != us[i] {
			t.Errorf("zkraft %s, ZooKeeper %s", us[i], zk[i])
		}
	}
	// The answers themselves, so that a ZooKeeper that served everything would not pass.
	for _, want := range []string{`TRACE /commands/ruok: 403 ""`, `OPTIONS /: 200 "GET, HEAD, TRACE, OPTIONS"`,
		`POST /commands/ruok: 405 ""`, `PATCH /nope: 501 ""`, `GET /commands/ruok: 200 ""`, `GET /nope: 404 ""`} {
		if !strings.Contains(strings.Join(us, "\n"), want) {
			t.Errorf("zkraft lacks %q", want)
		}
	}
}

// /metrics serves GET, HEAD and POST (Prometheus' servlet answers POST as GET; zkraft's
// POST /debug/gc is on this listener too) and refuses TRACE as ZooKeeper 3.8.5 and 3.9 do.
func TestMetricsHTTPMethods(t *testing.T) {
	port := mustFreePort(t)
	startServer(t, func(c *Config) { c.MetricsHost, c.MetricsPort = "127.0.0.1", port })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for _, c := range []struct {
		method string
		code   int
		allow  string
	}{
		{"GET", 200, ""}, {"HEAD", 200, ""}, {"POST", 200, ""},
		{"TRACE", 403, ""}, {"OPTIONS", 200, "GET, HEAD, POST, TRACE, OPTIONS"},
		{"PUT", 405, ""}, {"DELETE", 405, ""}, {"PATCH", 501, ""}, {"CONNECT", 501, ""},
	} {
		if code, allow := rawHTTP(t, addr, c.method, "/metrics"); code != c.code || allow != c.allow {
			t.Errorf("%s /metrics: %d %q, want %d %q", c.method, code, allow, c.code, c.allow)
		}
	}
}
