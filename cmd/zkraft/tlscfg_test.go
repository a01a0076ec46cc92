package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zkraft/zkraft/server"
)

// TestTLSKeysFromZooCfgAndJVMFlags: the client TLS keys are read from zoo.cfg and as
// -D system properties (zookeeper. + key), zoo.cfg winning as in ZooKeeper.
func TestTLSKeysFromZooCfgAndJVMFlags(t *testing.T) {
	cfg := server.DefaultConfig()
	env := map[string]string{"JVMFLAGS": "-Dzookeeper.ssl.keyStore.password=fromflags -Dzookeeper.ssl.trustStore.password=tp " +
		"-Dzookeeper.serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory " +
		"-Dzookeeper.X509AuthenticationProvider.superUser=CN=admin,O=x -Dzookeeper.ssl.keyStore.location=/flags.jks"}
	warnings, err := applyEnv(func(k string) string { return env[k] }, &cfg)
	if err != nil || len(warnings) != 0 {
		t.Fatalf("JVMFLAGS: %v %v", err, warnings)
	}
	warnings, err = parseZooCfg(strings.NewReader(`
secureClientPort=2281
secureClientPortAddress=127.0.0.1
serverCnxnFactory=org.apache.zookeeper.server.NIOServerCnxnFactory
client.portUnification=TRUE
client.certReload=false
ssl.keyStore.location=/cfg.jks
ssl.trustStore.location=/trust.p12
ssl.clientAuth=want
authProvider.x509=org.apache.zookeeper.server.auth.X509AuthenticationProvider
`), &cfg)
	if err != nil || len(warnings) != 0 {
		t.Fatalf("zoo.cfg: %v %v", err, warnings)
	}
	if cfg.SecureClientPort != 2281 || cfg.SecureClientPortAddress != "127.0.0.1" || !cfg.PortUnification ||
		!cfg.X509Provider || cfg.X509SuperUser != "CN=admin,O=x" || cfg.CertReload {
		t.Fatalf("%+v", cfg)
	}
	want := map[string]string{"ssl.keyStore.location": "/cfg.jks", "ssl.keyStore.password": "fromflags",
		"ssl.trustStore.location": "/trust.p12", "ssl.trustStore.password": "tp", "ssl.clientAuth": "want"}
	for k, v := range want {
		if cfg.SSL[k] != v {
			t.Errorf("%s = %q, want %q", k, cfg.SSL[k], v)
		}
	}
	for _, bad := range []string{
		"serverCnxnFactory=com.example.Factory",
		"ssl.authProvider=x509custom",
		"authProvider.x509=com.example.Provider",
		"secureClientPort=port",
	} {
		c := server.DefaultConfig()
		if _, err := parseZooCfg(strings.NewReader(bad), &c); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

// TestSecureClientPortAloneServesTLSOnly: a zoo.cfg with secureClientPort and no
// clientPort opens no plaintext port (clientPort -1), as ZooKeeper; with neither, 2181.
func TestSecureClientPortAloneServesTLSOnly(t *testing.T) {
	dir := t.TempDir()
	load := func(text string) server.Config {
		t.Helper()
		path := filepath.Join(dir, "zoo.cfg")
		os.WriteFile(path, []byte(text), 0o644)
		cfg, _, err := loadConfig(newStartCommand(), path, func(string) string { return "" }, &server.Config{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	if c := load("dataDir=/d\nsecureClientPort=2281\n"); c.ClientPort != -1 {
		t.Errorf("secureClientPort alone: clientPort %d", c.ClientPort)
	}
	if c := load("dataDir=/d\nsecureClientPort=2281\nclientPort=2181\n"); c.ClientPort != 2181 {
		t.Errorf("both: clientPort %d", c.ClientPort)
	}
	if c := load("dataDir=/d\n"); c.ClientPort != 2181 {
		t.Errorf("neither: clientPort %d", c.ClientPort)
	}
}

// TestX509ProviderUnderAnyKey: authProvider.<N> naming X509AuthenticationProvider
// registers the x509 scheme as authProvider.x509 does, in zoo.cfg and as a JVM flag.
func TestX509ProviderUnderAnyKey(t *testing.T) {
	for _, text := range []string{
		"authProvider.1=org.apache.zookeeper.server.auth.X509AuthenticationProvider\n",
		"zookeeper.authProvider.tls=org.apache.zookeeper.server.auth.X509AuthenticationProvider\n",
	} {
		cfg := server.DefaultConfig()
		warnings, err := parseZooCfg(strings.NewReader(text), &cfg)
		if err != nil || len(warnings) != 0 || !cfg.X509Provider {
			t.Errorf("%q: %v %v, x509 registered %v", text, err, warnings, cfg.X509Provider)
		}
	}
	cfg, _, err := loadConfig(newStartCommand(), "", func(k string) string {
		if k == "JVMFLAGS" {
			return "-Dzookeeper.authProvider.2=org.apache.zookeeper.server.auth.X509AuthenticationProvider"
		}
		return ""
	}, &server.Config{}, nil)
	if err != nil || !cfg.X509Provider {
		t.Errorf("JVMFLAGS: %v, x509 registered %v", err, cfg.X509Provider)
	}
}

// Revocation checks and a custom SSLContext for clients, which zkraft does not build,
// stop the start when asked for (from zoo.cfg or JVMFLAGS), as between members; off,
// they are taken without a warning.
func TestClientRevocationChecksNotIgnored(t *testing.T) {
	for _, line := range []string{"ssl.crl=true", "zookeeper.ssl.ocsp=TRUE", "ssl.context.supplier.class=com.example.Supplier"} {
		cfg := server.DefaultConfig()
		if _, err := parseZooCfg(strings.NewReader(line+"\n"), &cfg); err == nil {
			t.Errorf("%s: accepted", line)
		}
	}
	cfg := server.DefaultConfig()
	if warnings, err := parseZooCfg(strings.NewReader("ssl.crl=false\nssl.ocsp=false\n"), &cfg); err != nil || len(warnings) > 0 {
		t.Errorf("ssl.crl and ssl.ocsp off: %q, %v", warnings, err)
	}
	var flags server.Config
	env := envOf(map[string]string{"JVMFLAGS": "-Dzookeeper.ssl.crl=true"})
	if _, _, err := loadConfig(newStartCommand(), "", env, &flags, nil); err == nil {
		t.Error("-Dzookeeper.ssl.crl=true was accepted")
	}
}
