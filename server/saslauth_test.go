package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zkraft/zkraft/jute"
)

func writeJAAS(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "jaas.conf")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestSASLStartupErrors: a JAAS file that cannot be used, or enforcement of a scheme
// no provider serves, stops the server with an error that names the problem.
func TestSASLStartupErrors(t *testing.T) {
	cases := []struct {
		name string
		mod  func(*Config)
		want string
	}{
		{"missing file", func(c *Config) { c.SASL.JAASFile = "/nonexistent/jaas.conf" }, "/nonexistent/jaas.conf"},
		{"syntax", func(c *Config) {
			c.SASL.JAASFile = writeJAAS(t, "Server {\n x.Y required user_a=\"b\"\n};\n")
		}, "line 3"},
		{"kerberos", func(c *Config) {
			c.SASL.JAASFile = writeJAAS(t, `Server { com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true; };`)
		}, "Krb5LoginModule is not supported"},
		{"section without file", func(c *Config) { c.SASL.Section = "ZkServer" }, "no JAAS file"},
		{"enforce without schemes", func(c *Config) { c.EnforceAuth.Enabled = true }, "enforce.auth.schemes must be configured"},
		{"enforce sasl without provider", func(c *Config) { c.EnforceAuth.RequireClientSASLAuth = true }, "scheme sasl is not available"},
		{"enforce unknown scheme", func(c *Config) { c.EnforceAuth.Enabled, c.EnforceAuth.Schemes = true, []string{"digest", "kerberos"} }, "scheme kerberos is not available"},
		{"enforce digest when disabled", func(c *Config) {
			c.DigestDisabled, c.EnforceAuth.Enabled, c.EnforceAuth.Schemes = true, true, []string{"digest"}
		}, "scheme digest is not available"},
		{"digest algorithm Go lacks", func(c *Config) { c.DigestAlgorithm = "MD2" }, "don't support this ACL digest algorithm: MD2"},
		{"enforce x509 without TLS", func(c *Config) { c.EnforceAuth.Enabled, c.EnforceAuth.Schemes = true, []string{"x509"} }, "scheme x509 is not available"},
	}
	for _, c := range cases {
		cfg := DefaultConfig()
		cfg.DataDir = t.TempDir()
		c.mod(&cfg)
		if _, err := New(cfg, nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
	// A file without the section runs without SASL, as ZooKeeper does.
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.SASL.JAASFile = writeJAAS(t, `Client { a.B required username="x"; };`)
	if s, err := New(cfg, nil); err != nil || s.saslUsers != nil {
		t.Errorf("no Server section: %v, users %v", err, s.saslUsers)
	}
}

// TestSASLSuperUsersAndFailedClients covers the settings the differential tests leave
// out: zookeeper.superUser, the super password, allowSaslFailedClients, and sasl ACLs
// without SASLAuthenticationProvider.
func TestSASLSuperUsersAndFailedClients(t *testing.T) {
	jaas := writeJAAS(t, `Server { org.apache.zookeeper.server.auth.DigestLoginModule required user_bob="b" user_root="r" user_super="replaced"; };`)
	s := startServer(t, func(c *Config) {
		c.SASL = SASLConfig{JAASFile: jaas, AuthProvider: true, SuperUsers: []string{"root"}, SuperPassword: "su", AllowFailedClients: true}
	})
	addr := s.Addr().String()
	bob := rawSession(t, addr)
	bob.saslLogin("bob", "b")
	if h := bob.call(jute.OpCreate, &jute.CreateRequest{Path: "/b", Acl: bobACL}, nil); h.Err != 0 {
		t.Fatalf("bob create: %d", h.Err)
	}
	// root is a super user (zookeeper.superUser); a user named super, whose password
	// is the superPassword, matches every sasl ACL entry (SASLAuthenticationProvider).
	for _, u := range []struct{ user, password string }{{"root", "r"}, {"super", "su"}} {
		c := rawSession(t, addr)
		c.saslLogin(u.user, u.password)
		if h := c.call(jute.OpGetData, &jute.GetDataRequest{Path: "/b"}, nil); h.Err != 0 {
			t.Errorf("%s: getData of bob's node: %d, want OK", u.user, h.Err)
		}
	}
	old := rawSession(t, addr)
	if out := old.saslLogin("super", "replaced"); !strings.Contains(out[1], "token=null") {
		t.Errorf("super with the JAAS password the superPassword replaced: %q, want a failure (no rspauth)", out[1])
	}
	root := rawSession(t, addr)
	root.saslLogin("root", "r")
	if h := root.call(jute.OpCreate, &jute.CreateRequest{Path: "/b/x", Acl: openACL}, nil); h.Err != 0 {
		t.Errorf("zookeeper.superUser root: create under bob's node: %d, want OK (super)", h.Err)
	}
	failed := rawSession(t, addr)
	out := failed.saslLogin("bob", "wrong")
	if !strings.Contains(out[1], "err=0") || !strings.Contains(out[1], "token=null") {
		t.Errorf("allowSaslFailedClients: %q, want OK with no token", out[1])
	}
	if h := failed.call(jute.OpExists, &jute.ExistsRequest{Path: "/"}, nil); h.Err != 0 {
		t.Errorf("allowSaslFailedClients: the connection is not kept: %d", h.Err)
	}
	if h := failed.call(jute.OpGetData, &jute.GetDataRequest{Path: "/b"}, nil); jute.Code(h.Err) != jute.ErrNoAuth {
		t.Errorf("a failed client got bob's node: %d", h.Err)
	}

	noSuper := writeJAAS(t, `Server { org.apache.zookeeper.server.auth.DigestLoginModule required user_bob="b"; };`)
	plain := startServer(t, func(c *Config) { c.SASL = SASLConfig{JAASFile: noSuper, SuperPassword: "su"} })
	if out := rawSession(t, plain.Addr().String()).saslLogin("super", "su"); !strings.Contains(out[1], "err=-115") {
		t.Errorf("superPassword without a user_super entry: %q, want AuthFailed", out[1])
	}
	c := rawSession(t, plain.Addr().String())
	c.saslLogin("bob", "b")
	if h := c.call(jute.OpCreate, &jute.CreateRequest{Path: "/b", Acl: bobACL}, nil); jute.Code(h.Err) != jute.ErrInvalidACL {
		t.Errorf("sasl ACL without SASLAuthenticationProvider: %d, want InvalidACL", h.Err)
	}
}
