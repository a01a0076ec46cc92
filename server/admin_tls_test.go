package server

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/server/ztest"
)

// adminHTTPSGet is the status of a GET of ruok over HTTPS with the named client
// certificate ("" for none), or "refused".
func adminHTTPSGet(f *tlsFiles, addr, name string) string {
	cfg := f.clientTLS(name)
	cfg.InsecureSkipVerify = true
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg, DisableKeepAlives: true}}
	resp, err := client.Get("https://" + addr + "/commands/ruok")
	if err != nil {
		return "refused"
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return fmt.Sprint(resp.StatusCode)
}

// With admin.needClientAuth (ZooKeeper 3.9's key) the AdminServer's HTTPS takes only
// clients whose certificate the ssl.quorum trust store trusts; on a unified port plain
// HTTP still gets through, as in 3.9.
func TestAdminHTTPSNeedClientAuth(t *testing.T) {
	f := newTLSFiles(t)
	port := mustFreePort(t)
	s, err := ztest.StartZkraft(ztest.Options{Logf: t.Logf, ExtraConfig: adminTLSZooCfg(f, port,
		"admin.portUnification", "true", "admin.needClientAuth", "true")})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	awaitPort(t, addr)
	for name, want := range map[string]string{"": "refused", "untrusted": "refused", "expired": "refused", "client1": "200"} {
		if got := adminHTTPSGet(f, addr, name); got != want {
			t.Errorf("client certificate %q: %s, want %s", name, got, want)
		}
	}
	if status, _ := httpGet(t, "http://"+addr+"/commands/ruok"); status != http.StatusOK {
		t.Errorf("plain HTTP on the unified port: %d", status)
	}
}

// An AdminServer asked to speak HTTPS without usable stores is not started (ZooKeeper
// runs on without it too) and never falls back to plain HTTP; the server serves its
// clients all the same.
func TestAdminHTTPSWithoutStoresServesNothing(t *testing.T) {
	f := newTLSFiles(t)
	for _, kv := range [][]string{
		{"admin.forceHttps", "true"},
		{"admin.portUnification", "true", "ssl.quorum.keyStore.location", f.keyStore,
			"ssl.quorum.keyStore.password", "wrong", "ssl.quorum.trustStore.location", f.trust},
	} {
		port := mustFreePort(t)
		s, err := ztest.StartZkraft(ztest.Options{ExtraConfig: adminConfig(port, kv...), Logf: t.Logf})
		if err != nil {
			t.Fatal(err)
		}
		if out, err := ztest.FourLetter(s.Addr, "ruok"); out != "imok" {
			t.Errorf("%v: the client port answers ruok with %q, %v", kv, out, err)
		}
		if c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second); err == nil {
			c.Close()
			t.Errorf("%v: something listens on the admin port", kv)
		}
		if log := s.Log(); !strings.Contains(log, "admin or metrics listener not started") || !strings.Contains(log, "ssl.quorum.") {
			t.Errorf("%v: no error naming the store logged:\n%s", kv, log)
		}
		s.Stop()
	}
}
