// Package tlstest owns the certificates and key stores tests make: a CA, certificates
// it issues, written as PEM, as PKCS12 (Go's encoder) and, through the JDK's keytool,
// as keytool-made PKCS12 and JKS stores. Nothing is committed: every key is made when
// a test runs.
package tlstest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"os/exec"
	"testing"
	"time"

	"software.sslmate.com/src/go-pkcs12"
)

// CA is a certificate authority of a test.
type CA struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
}

// Leaf is a certificate the CA issued, with its key.
type Leaf struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
	CA   *CA
}

// NewCA makes a CA named cn, valid from an hour ago for a day.
func NewCA(t testing.TB, cn string) *CA {
	return NewCAValid(t, cn, time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour))
}

// NewCAValid makes a CA named cn whose certificate is valid from notBefore to notAfter.
func NewCAValid(t testing.TB, cn string, notBefore, notAfter time.Time) *CA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(t), Subject: pkix.Name{CommonName: cn},
		NotBefore: notBefore, NotAfter: notAfter,
		IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &CA{Cert: cert, Key: key}
}

// Options shape an issued certificate.
type Options struct {
	Subject  pkix.Name
	NotAfter time.Time // zero: a day from now
	// NotBefore zero: an hour ago.
	NotBefore time.Time
	// IPs, if set, are the certificate's only names; nil: 127.0.0.1 and localhost.
	IPs []net.IP
	// Shape, if set, changes the certificate's template last (its key usages, say).
	Shape func(*x509.Certificate)
}

// Issue makes a certificate for both server and client use, valid for o.IPs.
func (ca *CA) Issue(t testing.TB, o Options) *Leaf {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if o.NotAfter.IsZero() {
		o.NotAfter = time.Now().Add(24 * time.Hour)
	}
	if o.NotBefore.IsZero() {
		o.NotBefore = time.Now().Add(-time.Hour)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(t), Subject: o.Subject, NotBefore: o.NotBefore, NotAfter: o.NotAfter,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses: o.IPs,
	}
	if o.IPs == nil {
		tmpl.IPAddresses, tmpl.DNSNames = []net.IP{net.IPv4(127, 0, 0, 1)}, []string{"localhost"}
	}
	if o.Shape != nil {
		o.Shape(tmpl)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &Leaf{Cert: cert, Key: key, CA: ca}
}

func serial(t testing.TB) *big.Int {
	n, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// CertPEM is the CA's certificate as PEM.
func (ca *CA) CertPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Cert.Raw})
}

// KeyPEM is the leaf's key as unencrypted PKCS#8 PEM.
func (l *Leaf) KeyPEM(t testing.TB) []byte {
	der, err := x509.MarshalPKCS8PrivateKey(l.Key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}

// CertPEM is the leaf's certificate as PEM.
func (l *Leaf) CertPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: l.Cert.Raw})
}

// WriteFile writes data to path (mode 0600) or fails the test.
func WriteFile(t testing.TB, path string, data []byte) string {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// WritePEM writes the key and the certificate into one file, as ZooKeeper's PEM key
// store reads them.
func (l *Leaf) WritePEM(t testing.TB, path string) string {
	return WriteFile(t, path, append(l.KeyPEM(t), l.CertPEM()...))
}

// WritePKCS12 writes the key and certificate (and the CA) as a PKCS12 key store made
// by Go's encoder.
func (l *Leaf) WritePKCS12(t testing.TB, path, password string) string {
	t.Helper()
	pfx, err := pkcs12.Modern.Encode(l.Key, l.Cert, []*x509.Certificate{l.CA.Cert}, password)
	if err != nil {
		t.Fatal(err)
	}
	return WriteFile(t, path, pfx)
}

// RequireKeytool returns keytool's path; without it the test is skipped, or fails
// when ZKRAFT_REQUIRE_CLIENTS=1 (CI).
func RequireKeytool(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("keytool")
	if err != nil {
		if os.Getenv("ZKRAFT_REQUIRE_CLIENTS") == "1" {
			t.Fatal("keytool not found (ZKRAFT_REQUIRE_CLIENTS=1)")
		}
		t.Skip("keytool not found")
	}
	return p
}

// Keytool runs keytool with args.
func Keytool(t testing.TB, args ...string) {
	t.Helper()
	out, err := exec.Command(RequireKeytool(t), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("keytool %v: %v\n%s", args, err, out)
	}
}

// KeytoolKeyStore converts the leaf's Go-made PKCS12 into a keytool-made store of
// storeType (PKCS12 or JKS) at path, protected (store and key) with password.
func (l *Leaf) KeytoolKeyStore(t testing.TB, dir, path, storeType, password string) string {
	t.Helper()
	src := l.WritePKCS12(t, dir+"/src-"+storeType+".p12", password)
	Keytool(t, "-importkeystore", "-noprompt", "-srckeystore", src, "-srcstoretype", "PKCS12",
		"-srcstorepass", password, "-destkeystore", path, "-deststoretype", storeType,
		"-deststorepass", password, "-destkeypass", password)
	os.Remove(src)
	return path
}

// KeytoolTrustStore writes a trust store of storeType holding the CA's certificate.
func (ca *CA) KeytoolTrustStore(t testing.TB, dir, path, storeType, password string) string {
	t.Helper()
	pemPath := WriteFile(t, dir+"/ca-"+storeType+".crt", ca.CertPEM())
	Keytool(t, "-importcert", "-noprompt", "-alias", "ca", "-file", pemPath, "-keystore", path,
		"-storetype", storeType, "-storepass", password)
	return path
}
