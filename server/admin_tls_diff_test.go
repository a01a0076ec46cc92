package server

import (
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/server/ztest"
)

// adminTLSConfig is the zoo.cfg of an AdminServer on 127.0.0.1:port with HTTPS in the
// given mode (a key such as admin.forceHttps, set true) and the test's stores as
// ssl.quorum.* keys, where ZooKeeper's AdminServer reads them.
func adminTLSZooCfg(f *tlsFiles, port int, kv ...string) map[string]string {
	return adminConfig(port, append([]string{
		"ssl.quorum.keyStore.location", f.keyStore, "ssl.quorum.keyStore.password", f.password,
		"ssl.quorum.trustStore.location", f.trust, "ssl.quorum.trustStore.password", f.password}, kv...)...)
}

// awaitPort waits until something accepts connections at addr.
func awaitPort(t *testing.T, addr string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing listens at %s: %v", addr, err)
		}
	}
}

// adminHTTPSSteps are what a client of an HTTPS AdminServer sees, a line each: answers
// over TLS (status, Strict-Transport-Security, body), the certificate shown, whether a
// client certificate is asked for, an old TLS version, and what plain HTTP gets.
func adminHTTPSSteps(t *testing.T, addr string) []string {
	t.Helper()
	awaitPort(t, addr)
	var lines []string
	asked := false
	cfg := &tls.Config{InsecureSkipVerify: true, GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
		asked = true
		return &tls.Certificate{}, nil
	}}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg, DisableKeepAlives: true}}
	for _, req := range []struct{ method, path string }{
		{"GET", "/commands/ruok"}, {"GET", "/commands/nosuch"}, {"TRACE", "/commands/ruok"}, {"POST", "/commands/ruok"},
	} {
		r, _ := http.NewRequest(req.method, "https://"+addr+req.path, nil)
		resp, err := client.Do(r)
		if err != nil {
			lines = append(lines, fmt.Sprintf("https %s %s: %v", req.method, req.path, err))
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			body = nil // Jetty's error pages are not copied (docs/compatibility.md)
		}
		lines = append(lines, fmt.Sprintf("https %s %s: %d sts=%q body=%q", req.method, req.path, resp.StatusCode,
			resp.Header.Get("Strict-Transport-Security"), body))
		if resp.TLS != nil && req.path == "/commands/ruok" && req.method == "GET" {
			lines = append(lines, fmt.Sprintf("certificate: %s", resp.TLS.PeerCertificates[0].Subject))
		}
	}
	lines = append(lines, fmt.Sprintf("client certificate asked for: %v", asked))

	old := &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS11}
	if c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, old); err != nil {
		lines = append(lines, "TLS 1.1: refused")
	} else {
		c.Close()
		lines = append(lines, "TLS 1.1: accepted")
	}

	// Plain HTTP: what comes back before the server closes.
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(nc, "GET /commands/ruok HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", addr)
	got, err := io.ReadAll(nc)
	switch {
	case strings.HasPrefix(string(got), "HTTP/1.1 "):
		head, body, _ := strings.Cut(string(got), "\r\n\r\n")
		status, _, _ := strings.Cut(head, "\r\n")
		lines = append(lines, fmt.Sprintf("http GET: %s sts=%v body=%q", status, strings.Contains(head, "Strict-Transport-Security"), body))
	default:
		lines = append(lines, fmt.Sprintf("http GET: % x then %v", got, err))
	}
	return lines
}

// The AdminServer's HTTPS answers as ZooKeeper 3.8's with admin.forceHttps (TLS only;
// plain HTTP gets Java's TLS alert) and with admin.portUnification (both on one port):
// the certificate of the ssl.quorum key store, no client certificate asked for, TLS 1.1
// refused, Strict-Transport-Security on every answer over TLS and on none over plain
// HTTP, the same status and body for commands, unknown commands, TRACE and POST.
func TestAdminHTTPSMatchesZooKeeper(t *testing.T) {
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	f := newTLSFiles(t)
	for _, mode := range []string{"admin.forceHttps", "admin.portUnification"} {
		t.Run(mode, func(t *testing.T) {
			ports := map[string]int{}
			servers := startBoth(t, func(name string) ztest.Options {
				ports[name] = mustFreePort(t)
				return ztest.Options{Logf: t.Logf, ExtraConfig: adminTLSZooCfg(f, ports[name], mode, "true")}
			})
			// The plain HTTP connections taken on a unified port (mntr's
			// insecure_admin_count) follow the steps.
			steps := func(name string) []string {
				lines := adminHTTPSSteps(t, fmt.Sprintf("127.0.0.1:%d", ports[name]))
				return append(lines, "insecure_admin_count="+mntrLine(askFourLetter(t, servers[name].Addr, "mntr"), "insecure_admin_count"))
			}
			want := steps("zookeeper")
			t.Logf("zookeeper:\n%s", strings.Join(want, "\n"))
			if !strings.Contains(strings.Join(want, "\n"), "https GET /commands/ruok: 200") {
				t.Fatalf("ZooKeeper's AdminServer did not answer over HTTPS:\n%s", strings.Join(want, "\n"))
			}
			compareLines(t, want, steps("zkraft"))
		})
	}
}
