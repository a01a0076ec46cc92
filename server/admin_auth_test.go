package server

import (
	"crypto/tls"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/server/tlsconf/tlstest"
)

// snapshotAsked is the status and error text of GET /commands/snapshot?streaming=false
// through client with the given Authorization header values (none: no header) and
// extra headers.
func snapshotAsked(t *testing.T, client *http.Client, base string, auth []string, extra map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/commands/snapshot?streaming=false", nil)
	for _, a := range auth {
		req.Header.Add("Authorization", a)
	}
	for k, v := range extra {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// setRootACL sets the ACL of "/" through a plain client connection to s.
func setRootACL(t *testing.T, s *Server, acl []jute.ACL) {
	t.Helper()
	c := dial(t, s.Addr().String())
	c.connect(0, nil)
	if h := c.call(jute.OpSetACL, &jute.SetACLRequest{Path: "/", Acl: acl, Version: -1}, &jute.SetACLResponse{}); h.Err != 0 {
		t.Fatal(h.Err)
	}
}

// The ip and digest schemes of an AdminServer command, as ZooKeeper 3.9.5's Commands and
// providers read an Authorization header: String.split(" ") (trailing spaces dropped),
// digest of whatever follows the scheme (a colon or not), ip from the peer's address or,
// with usexforwardedfor, X-Forwarded-For's first address; a scheme without a provider, or
// an empty header, authenticates nobody.
func TestAdminCommandIPAndDigestSchemes(t *testing.T) {
	for _, fwd := range []bool{false, true} {
		s := startServer(t, func(c *Config) {
			c.AdminEnabled, c.AdminHost, c.AdminPort = true, "127.0.0.1", mustFreePort(t)
			c.AdminAuth.RateLimitInterval = 0
			c.AdminAuth.UseXForwardedFor = fwd
		})
		base := fmt.Sprintf("http://127.0.0.1:%d", s.cfg.AdminPort)
		ask := func(extra map[string]string, auth ...string) string {
			status, body := snapshotAsked(t, http.DefaultClient, base, auth, extra)
			why := ""
			for _, w := range []string{"Auth info is missing for the command", "Not authenticated", "Not authorized"} {
				if strings.Contains(body, w) {
					why = " " + w
				}
			}
			return fmt.Sprint(status) + why
		}
		// The default root ACL (world:anyone ALL): every identity passes.
		for _, c := range []struct{ auth, want string }{
			{"ip", "200"},
			{"ip ignored", "200"},
			{"digest bob", "200"},                       // no colon: DigestAuthenticationProvider digests "bob" all the same
			{"digest  bob:pw", "401 Not authenticated"}, // three pieces
			{"", "401 Not authenticated"},
			{"digest", "401 Not authenticated"},
			{"digest a b", "401 Not authenticated"},
			{"x509", "401 Not authenticated"}, // no x509 provider without TLS settings
			{"sasl bob", "401 Not authenticated"},
			{"Digest bob:pw", "401 Not authenticated"},
		} {
			if got := ask(nil, c.auth); got != c.want {
				t.Errorf("forwarded %v, Authorization %q: %s, want %s", fwd, c.auth, got, c.want)
			}
		}
		if got := ask(nil); got != "401 Auth info is missing for the command" {
			t.Errorf("no Authorization header: %s", got)
		}
		setRootACL(t, s, []jute.ACL{
			{Perms: jute.PermAll, Id: jute.Id{Scheme: "ip", Id: "10.0.0.0/8"}},
			{Perms: jute.PermAll, Id: jute.Id{Scheme: "digest", Id: datatree.DigestID("admin:secret")}},
			{Perms: jute.PermRead, Id: jute.Id{Scheme: "ip", Id: "127.0.0.1"}},
		})
		proxied := map[string]string{"X-Forwarded-For": "10.1.2.3, 127.0.0.1"}
		wantProxied := "403 Not authorized"
		if fwd {
			wantProxied = "200"
		}
		for _, c := range []struct {
			extra map[string]string
			auth  string
			want  string
		}{
			{nil, "ip", "403 Not authorized"}, // 127.0.0.1 may only read the root
			{proxied, "ip", wantProxied},
			{map[string]string{"X-Forwarded-For": "192.168.1.1"}, "ip", "403 Not authorized"},
			{map[string]string{"X-Forwarded-For": ",,"}, "ip", map[bool]string{false: "403 Not authorized", true: "401 Not authenticated"}[fwd]},
			{nil, "digest admin:secret", "200"},
			{proxied, "digest admin:wrong", "403 Not authorized"},
		} {
			if got := ask(c.extra, c.auth); got != c.want {
				t.Errorf("forwarded %v, %v, Authorization %q: %s, want %s", fwd, c.extra, c.auth, got, c.want)
			}
		}
	}
}

// With zookeeper.skipACL=yes an AdminServer command still needs an identity that
// authenticates (ZooKeeper 3.9's Commands asks for it before checkACL), and then passes
// whatever the root's ACL says.
func TestAdminCommandWithSkipACL(t *testing.T) {
	s := startServer(t, func(c *Config) {
		c.AdminEnabled, c.AdminHost, c.AdminPort = true, "127.0.0.1", mustFreePort(t)
		c.AdminAuth.RateLimitInterval = 0
		c.SkipACL = true
	})
	base := fmt.Sprintf("http://127.0.0.1:%d", s.cfg.AdminPort)
	setRootACL(t, s, []jute.ACL{{Perms: jute.PermAll, Id: jute.Id{Scheme: "digest", Id: datatree.DigestID("admin:secret")}}})
	for _, c := range []struct {
		auth []string
		want int
	}{{nil, 401}, {[]string{"sasl bob"}, 401}, {[]string{"ip"}, 200}, {[]string{"digest admin:wrong"}, 200}} {
		if got, body := snapshotAsked(t, http.DefaultClient, base, c.auth, nil); got != c.want {
			t.Errorf("Authorization %q: %d %s, want %d", c.auth, got, body, c.want)
		}
	}
}

// The x509 scheme of an AdminServer command over HTTPS with admin.needClientAuth: the
// certificate the TLS handshake took (ssl.quorum's trust store) must also be trusted by
// X509AuthenticationProvider's (the client port's ssl.trustStore); its subject is the
// x509 identity, and X509AuthenticationProvider.superUser's subject passes as super.
// Without a registered x509 provider the scheme authenticates nobody.
func TestAdminCommandX509Scheme(t *testing.T) {
	dir := t.TempDir()
	clientCA, otherCA := tlstest.NewCA(t, "client CA"), tlstest.NewCA(t, "other CA")
	serverCert := clientCA.Issue(t, tlstest.Options{Subject: pkix.Name{CommonName: "server-1"}})
	keyStore := serverCert.WritePEM(t, filepath.Join(dir, "server.pem"))
	bothCAs := tlstest.WriteFile(t, filepath.Join(dir, "both.pem"), append(clientCA.CertPEM(), otherCA.CertPEM()...))
	clientTrust := tlstest.WriteFile(t, filepath.Join(dir, "client-ca.pem"), clientCA.CertPEM())
	clientOf := func(ca *tlstest.CA, cn string) *http.Client {
		leaf := ca.Issue(t, tlstest.Options{Subject: pkix.Name{CommonName: cn}})
		cfg := &tls.Config{InsecureSkipVerify: true,
			Certificates: []tls.Certificate{{Certificate: [][]byte{leaf.Cert.Raw}, PrivateKey: leaf.Key}}}
		return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg, DisableKeepAlives: true}}
	}
	start := func(x509Provider bool) (*Server, string) {
		s := startServer(t, func(c *Config) {
			c.AdminEnabled, c.AdminHost, c.AdminPort = true, "127.0.0.1", mustFreePort(t)
			c.AdminAuth.RateLimitInterval = 0
			c.AdminTLS = AdminTLS{ForceHTTPS: true, NeedClientAuth: true}
			c.QuorumSSL.KeyStoreLocation, c.QuorumSSL.TrustStoreLocation = keyStore, bothCAs
			c.SSL = map[string]string{"ssl.trustStore.location": clientTrust}
			c.X509Provider, c.X509SuperUser = x509Provider, "CN=root"
		})
		base := fmt.Sprintf("https://127.0.0.1:%d", s.cfg.AdminPort)
		awaitPort(t, strings.TrimPrefix(base, "https://"))
		return s, base
	}
	s, base := start(true)
	setRootACL(t, s, []jute.ACL{
		{Perms: jute.PermAll, Id: jute.Id{Scheme: "x509", Id: "CN=alice"}},
		{Perms: jute.PermRead, Id: jute.Id{Scheme: "x509", Id: "CN=bob"}},
	})
	for _, c := range []struct {
		client *http.Client
		auth   string
		want   int
	}{
		{clientOf(clientCA, "alice"), "x509", 200},
		{clientOf(clientCA, "alice"), "x509 ignored", 200},
		{clientOf(clientCA, "bob"), "x509", 403},     // may only read the root
		{clientOf(clientCA, "root"), "x509", 200},    // the super user
		{clientOf(clientCA, "alice"), "ip", 403},     // 127.0.0.1 is not in the ACL
		{clientOf(otherCA, "alice"), "x509", 401},    // the handshake took it, ssl.trustStore does not
		{clientOf(otherCA, "root"), "x509", 401},     // nor the super user's subject from another CA
		{clientOf(clientCA, "alice"), "digest", 401}, // a null auth
	} {
		if status, body := snapshotAsked(t, c.client, base, []string{c.auth}, nil); status != c.want {
			t.Errorf("Authorization %q: %d %s, want %d", c.auth, status, body, c.want)
		}
	}

	s, base = start(false)
	setRootACL(t, s, []jute.ACL{{Perms: jute.PermAll, Id: jute.Id{Scheme: "world", Id: "anyone"}}})
	if status, body := snapshotAsked(t, clientOf(clientCA, "alice"), base, []string{"x509"}, nil); status != 401 {
		t.Errorf("x509 without the provider: %d %s, want 401", status, body)
	}
	if status, body := snapshotAsked(t, clientOf(clientCA, "alice"), base, []string{"ip"}, nil); status != 200 {
		t.Errorf("ip over HTTPS: %d %s, want 200", status, body)
	}
}
