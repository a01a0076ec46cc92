package server

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"testing"

	"github.com/zkraft/zkraft/server/tlsconf/tlstest"
)

// TestClientKeyUsageMatchesZooKeeper: Java checks what a client certificate may be used
// for (sun.security.validator.EndEntityChecker, TLS client): a key usage extension must
// allow digital signatures, an extended key usage extension must allow TLS client
// authentication (or any use). A certificate without either extension is served.
func TestClientKeyUsageMatchesZooKeeper(t *testing.T) {
	t.Parallel()
	f := newTLSFiles(t)
	shapes := []struct {
		name  string
		shape func(*x509.Certificate)
	}{
		{"no usage extensions", func(c *x509.Certificate) { c.KeyUsage, c.ExtKeyUsage = 0, nil }},
		{"key encipherment only", func(c *x509.Certificate) { c.KeyUsage = x509.KeyUsageKeyEncipherment }},
		{"key agreement only", func(c *x509.Certificate) { c.KeyUsage = x509.KeyUsageKeyAgreement }},
		{"signature and key encipherment", func(c *x509.Certificate) {
			c.KeyUsage = x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment
		}},
		{"server authentication only", func(c *x509.Certificate) { c.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth} }},
		{"any extended usage", func(c *x509.Certificate) { c.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageAny} }},
	}
	leaves := make([]*tlstest.Leaf, len(shapes))
	for i, s := range shapes {
		leaves[i] = f.ca.Issue(t, tlstest.Options{Subject: pkix.Name{CommonName: fmt.Sprint("usage", i)}, Shape: s.shape})
	}
	servers := startTLSServers(t, f, nil)
	steps := func(secure string) []string {
		var lines []string
		for i, leaf := range leaves {
			lines = append(lines, fmt.Sprintf("%s: %s", shapes[i].name, firstExchangeAs(f, secure, leaf)))
		}
		return lines
	}
	compareSecure(t, servers, steps, func(want []string) bool { return want[0] == "no usage extensions: answered" })
}
