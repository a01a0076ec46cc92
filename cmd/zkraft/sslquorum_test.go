package main

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/server"
)

// zoo.cfg's keys of TLS between members fill server.QuorumSSL; the environment's
// -Dzookeeper.ssl.quorum.* properties are the same keys.
func TestQuorumSSLKeys(t *testing.T) {
	cmd := newStartCommand()
	var flags server.Config
	env := envOf(map[string]string{
		"ZOO_CFG_EXTRA":   "sslQuorum=true",
		"SERVER_JVMFLAGS": "-Xmx1g -Dzookeeper.ssl.quorum.hostnameVerification=false -Dzookeeper.ssl.quorum.trustStore.location=/env/trust.pem",
	})
	cfg, warnings, err := loadConfig(cmd, "", env, &flags, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.QuorumSSL.Enabled || cfg.QuorumSSL.HostnameVerification || cfg.QuorumSSL.TrustStoreLocation != "/env/trust.pem" {
		t.Fatalf("from the environment: %+v (warnings %q)", cfg.QuorumSSL, warnings)
	}

	cfg = server.DefaultConfig()
	if !cfg.QuorumSSL.HostnameVerification {
		t.Fatal("hostname verification must be on by default, as in ZooKeeper")
	}
	warnings, err = parseZooCfg(strings.NewReader(`
sslQuorum=true
portUnification=true
sslQuorumReloadCertFiles=true
ssl.quorum.keyStore.location=/k.pem
ssl.quorum.keyStore.password=kp
ssl.quorum.keyStore.passwordPath=/kp
ssl.quorum.keyStore.type=PEM
ssl.quorum.trustStore.location=/t.pem
ssl.quorum.trustStore.password=tp
ssl.quorum.trustStore.passwordPath=/tp
ssl.quorum.trustStore.type=PEM
ssl.quorum.protocol=TLSv1.3
ssl.quorum.enabledProtocols=TLSv1.2, TLSv1.3
ssl.quorum.ciphersuites=TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256
ssl.quorum.hostnameVerification=false
ssl.quorum.clientAuth=need
ssl.quorum.handshakeDetectionTimeoutMillis=1500
ssl.quorum.crl=false
ssl.quorum.ocsp=false
`), &cfg)
	if err != nil {
		t.Fatal(err)
	}
	q := cfg.QuorumSSL
	if !q.Enabled || !q.PortUnification || q.KeyStoreLocation != "/k.pem" || q.KeyStorePassword != "kp" || q.KeyStorePasswordPath != "/kp" || q.TrustStorePasswordPath != "/tp" || q.KeyStoreType != "PEM" ||
		q.TrustStoreLocation != "/t.pem" || q.TrustStorePassword != "tp" || q.TrustStoreType != "PEM" || q.Protocol != "TLSv1.3" ||
		!slices.Equal(q.EnabledProtocols, []string{"TLSv1.2", "TLSv1.3"}) || len(q.CipherSuites) != 2 || q.HostnameVerification ||
		q.ClientAuth != "need" || q.HandshakeTimeout != 1500*time.Millisecond {
		t.Fatalf("parsed %+v", q)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "sslQuorumReloadCertFiles") {
		t.Fatalf("warnings %q", warnings)
	}
}

// A TLS setting zkraft cannot honour stops the start; it is never a warning.
func TestQuorumSSLKeysNotIgnored(t *testing.T) {
	for _, line := range []string{
		"ssl.quorum.someFutureCheck=true",
		"zookeeper.ssl.quorum.someFutureCheck=true",
		"ssl.quorum.crl=true",
		"ssl.quorum.ocsp=true",
		"ssl.quorum.context.supplier.class=com.example.Supplier",
		"sslQuorum=maybe",
	} {
		cfg := server.DefaultConfig()
		if _, err := parseZooCfg(strings.NewReader(line+"\n"), &cfg); err == nil {
			t.Errorf("%s: accepted", line)
		}
	}
	cmd := newStartCommand()
	var flags server.Config
	env := envOf(map[string]string{"JVMFLAGS": "-Dzookeeper.ssl.quorum.fipsMode=true"})
	if _, _, err := loadConfig(cmd, "", env, &flags, nil); err == nil {
		t.Error("an unknown -Dzookeeper.ssl.quorum property was accepted")
	}
}
