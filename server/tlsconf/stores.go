package tlsconf

import (
	"bytes"
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pavlo-v-chernykh/keystore-go/v4"
	"software.sslmate.com/src/go-pkcs12"
)

// ErrEncryptedPEMKey: an encrypted private key in a PEM key store, which Go's standard
// library cannot decrypt.
var ErrEncryptedPEMKey = errors.New("encrypted PEM private keys are not supported; use PKCS12 or JKS")

// kind is KeyStoreFileType.fromPropertyValueOrFileName: the named type, else the one
// the file's extension names.
func (s Store) kind() (string, error) {
	if t := strings.ToUpper(strings.TrimSpace(s.Type)); t != "" {
		switch t {
		case "PEM", "PKCS12", "JKS":
			return t, nil
		}
		return "", fmt.Errorf("store type %q is not PEM, PKCS12 or JKS", s.Type)
	}
	switch filepath.Ext(s.Location) {
	case ".pem":
		return "PEM", nil
	case ".p12":
		return "PKCS12", nil
	case ".jks":
		return "JKS", nil
	}
	return "", fmt.Errorf("unable to auto-detect store file type from file name %q: set its type", s.Location)
}

// password is the inline password, or the content of PasswordPath (ZooKeeper's
// SecretUtils reads the file whole and trims a trailing line break).
func (s Store) password() (string, error) {
	if s.PasswordPath == "" {
		return s.Password, nil
	}
	b, err := os.ReadFile(s.PasswordPath)
	if err != nil {
		return "", fmt.Errorf("password file: %w", err)
	}
	return strings.TrimRight(string(b), "\r\n"), nil
}

// LoadStores reads a key store's key and certificate chain and a trust store's
// certificates once, for a caller that keeps them (no reloading). An error names the
// store ("keyStore: ..." or "trustStore: ...").
func LoadStores(key, trust Store) (tls.Certificate, *x509.CertPool, error) {
	cert, err := loadKeyPair(key)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("keyStore: %w", err)
	}
	pool, err := loadTrustPool(trust)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("trustStore: %w", err)
	}
	return *cert, pool, nil
}

// loadKeyPair reads the private key and its certificate chain from a key store.
func loadKeyPair(s Store) (*tls.Certificate, error) {
	kind, data, pw, err := s.read()
	if err != nil {
		return nil, err
	}
	var cert *tls.Certificate
	switch kind {
	case "PEM":
		cert, err = pemKeyPair(data)
	case "PKCS12":
		cert, err = pkcs12KeyPair(data, pw)
	case "JKS":
		cert, err = jksKeyPair(data, pw)
	}
	if err != nil {
		return nil, fmt.Errorf("key store %s (%s): %w", s.Location, kind, err)
	}
	return cert, nil
}

// loadTrustPool reads the trusted certificates of a trust store. As Java's trust
// manager, a store's key entries trust their own certificate, and a trusted certificate
// is a trust anchor whatever its validity dates: Java's PKIX validation (RFC 5280, 6.1)
// checks the dates of the certificates below the anchor only, so ZooKeeper accepts a
// current certificate issued by a CA whose own certificate has expired. Go checks every
// certificate of a chain, so the pool holds copies valid at all times.
func loadTrustPool(s Store) (*x509.CertPool, error) {
	kind, data, pw, err := s.read()
	if err != nil {
		return nil, err
	}
	var certs []*x509.Certificate
	switch kind {
	case "PEM":
		certs, err = pemCerts(data)
	case "PKCS12":
		certs, err = pkcs12Trusted(data, pw)
	case "JKS":
		certs, err = jksTrusted(data, pw)
	}
	if err == nil && len(certs) == 0 {
		err = errors.New("no certificates")
	}
	if err != nil {
		return nil, fmt.Errorf("trust store %s (%s): %w", s.Location, kind, err)
	}
	pool := x509.NewCertPool()
	for _, c := range certs {
		anchor := *c
		anchor.NotBefore, anchor.NotAfter = time.Time{}, time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)
		pool.AddCert(&anchor)
	}
	return pool, nil
}

func (s Store) read() (kind string, data []byte, pw string, err error) {
	if kind, err = s.kind(); err != nil {
		return "", nil, "", err
	}
	if pw, err = s.password(); err != nil {
		return "", nil, "", err
	}
	data, err = os.ReadFile(s.Location)
	return kind, data, pw, err
}

// pemKeyPair reads a PEM file holding a private key and its certificate chain, as
// ZooKeeper's PemReader.loadKeyStore reads the same file for both.
func pemKeyPair(data []byte) (*tls.Certificate, error) {
	for rest := data; ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		if b.Type == "ENCRYPTED PRIVATE KEY" || b.Headers["Proc-Type"] != "" {
			return nil, ErrEncryptedPEMKey
		}
	}
	cert, err := tls.X509KeyPair(data, data)
	if err != nil {
		return nil, err
	}
	return &cert, nil
}

func pemCerts(data []byte) ([]*x509.Certificate, error) {
	var certs []*x509.Certificate
	for rest := data; ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			return certs, nil
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, err
		}
		certs = append(certs, c)
	}
}

func pkcs12KeyPair(data []byte, pw string) (*tls.Certificate, error) {
	key, leaf, cas, err := pkcs12.DecodeChain(data, pw)
	if err != nil {
		return nil, err
	}
	return chainCert(key, append([]*x509.Certificate{leaf}, cas...))
}

func pkcs12Trusted(data []byte, pw string) ([]*x509.Certificate, error) {
	certs, err := pkcs12.DecodeTrustStore(data, pw)
	if err == nil {
		return certs, nil
	}
	// A store with a key entry: trust its certificate.
	_, leaf, _, err2 := pkcs12.DecodeChain(data, pw)
	if err2 != nil {
		return nil, err
	}
	return []*x509.Certificate{leaf}, nil
}

func loadJKS(data []byte, pw string) (keystore.KeyStore, error) {
	ks := keystore.New()
	if err := ks.Load(bytes.NewReader(data), []byte(pw)); err != nil {
		return ks, err
	}
	return ks, nil
}

// jksKeyPair takes the first private key entry (by alias); its key is protected with
// the store's password, as ZooKeeper's key manager assumes.
func jksKeyPair(data []byte, pw string) (*tls.Certificate, error) {
	ks, err := loadJKS(data, pw)
	if err != nil {
		return nil, err
	}
	for _, alias := range ks.Aliases() {
		if !ks.IsPrivateKeyEntry(alias) {
			continue
		}
		e, err := ks.GetPrivateKeyEntry(alias, []byte(pw))
		if err != nil {
			return nil, fmt.Errorf("entry %q: %w", alias, err)
		}
		key, err := x509.ParsePKCS8PrivateKey(e.PrivateKey)
		if err != nil {
			return nil, fmt.Errorf("entry %q: %w", alias, err)
		}
		chain := make([]*x509.Certificate, 0, len(e.CertificateChain))
		for _, c := range e.CertificateChain {
			xc, err := x509.ParseCertificate(c.Content)
			if err != nil {
				return nil, fmt.Errorf("entry %q: %w", alias, err)
			}
			chain = append(chain, xc)
		}
		return chainCert(key, chain)
	}
	return nil, errors.New("no private key entry")
}

func jksTrusted(data []byte, pw string) ([]*x509.Certificate, error) {
	ks, err := loadJKS(data, pw)
	if err != nil {
		return nil, err
	}
	var certs []*x509.Certificate
	for _, alias := range ks.Aliases() {
		var der []byte
		switch {
		case ks.IsTrustedCertificateEntry(alias):
			e, err := ks.GetTrustedCertificateEntry(alias)
			if err != nil {
				return nil, err
			}
			der = e.Certificate.Content
		case ks.IsPrivateKeyEntry(alias):
			chain, err := ks.GetPrivateKeyEntryCertificateChain(alias)
			if err != nil || len(chain) == 0 {
				continue
			}
			der = chain[0].Content
		default:
			continue
		}
		c, err := x509.ParseCertificate(der)
		if err != nil {
			return nil, fmt.Errorf("entry %q: %w", alias, err)
		}
		certs = append(certs, c)
	}
	return certs, nil
}

// chainCert makes a tls.Certificate of a key and its chain, leaf first, and checks the
// key belongs to the leaf.
func chainCert(key any, chain []*x509.Certificate) (*tls.Certificate, error) {
	if len(chain) == 0 || chain[0] == nil {
		return nil, errors.New("private key without a certificate")
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("unsupported private key type %T", key)
	}
	type equaler interface{ Equal(crypto.PublicKey) bool }
	if pub, ok := signer.Public().(equaler); !ok || !pub.Equal(chain[0].PublicKey) {
		return nil, errors.New("private key does not match its certificate")
	}
	cert := &tls.Certificate{PrivateKey: key, Leaf: chain[0]}
	for _, c := range chain {
		cert.Certificate = append(cert.Certificate, c.Raw)
	}
	return cert, nil
}

// LoadTrustPool is a trust store's certificates as a pool, each a trust anchor whatever
// its validity dates (as loadTrustPool says).
func LoadTrustPool(s Store) (*x509.CertPool, error) { return loadTrustPool(s) }
