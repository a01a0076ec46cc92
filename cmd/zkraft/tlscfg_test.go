package main

import (
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
ssl.keyStore.location=/cfg.jks
ssl.trustStore.location=/trust.p12
ssl.clientAuth=want
authProvider.x509=org.apache.zookeeper.server.auth.X509AuthenticationProvider
`), &cfg)
	if err != nil || len(warnings) != 0 {
		t.Fatalf("zoo.cfg: %v %v", err, warnings)
	}
	if cfg.SecureClientPort != 2281 || cfg.SecureClientPortAddress != "127.0.0.1" || !cfg.PortUnification ||
		!cfg.X509Provider || cfg.X509SuperUser != "CN=admin,O=x" {
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
