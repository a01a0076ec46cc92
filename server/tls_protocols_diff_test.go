package server

import (
	"crypto/tls"
	"fmt"
	"strings"
	"testing"
)

// handshakeWith dials secure as client1 offering only version v (and only the suites
// given, if any) and reports the outcome: the version agreed and whether a
// ConnectRequest is answered.
func handshakeWith(f *tlsFiles, secure string, v uint16, suites ...uint16) string {
	cfg := f.clientTLS("client1")
	cfg.MinVersion, cfg.MaxVersion, cfg.CipherSuites = v, v, suites
	out, st := firstExchangeState(secure, cfg)
	if out == "answered" {
		out = "answered with " + tls.VersionName(st.Version)
	}
	return out
}

// TestTLSOldProtocolsRefusedAsZooKeeper: TLSv1 and TLSv1.1 in ssl.enabledProtocols,
// and RC4 suites in ssl.ciphersuites, are not offered: ZooKeeper 3.8 on Java 17 (as on
// every JDK since 8u291 and 11.0.11, whose jdk.tls.disabledAlgorithms lists them)
// refuses a client that offers only those and serves TLSv1.2 with another suite.
func TestTLSOldProtocolsRefusedAsZooKeeper(t *testing.T) {
	f := newTLSFiles(t)
	servers := startTLSServers(t, f, map[string]string{"ssl.enabledProtocols": "TLSv1.2,TLSv1.1,TLSv1",
		"ssl.ciphersuites": "TLS_ECDHE_ECDSA_WITH_RC4_128_SHA,TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA,TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"})
	steps := func(secure string) []string {
		var lines []string
		for _, v := range []uint16{tls.VersionTLS10, tls.VersionTLS11, tls.VersionTLS12} {
			lines = append(lines, fmt.Sprintf("client offering %s: %s", tls.VersionName(v), handshakeWith(f, secure, v)))
		}
		return append(lines, "client offering RC4 only: "+handshakeWith(f, secure, tls.VersionTLS12, tls.TLS_ECDHE_ECDSA_WITH_RC4_128_SHA))
	}
	compareSecure(t, servers, steps, func(want []string) bool {
		return strings.HasSuffix(want[2], "answered with TLS 1.2") && strings.HasSuffix(want[3], "refused")
	})
}
