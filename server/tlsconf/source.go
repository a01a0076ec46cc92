package tlsconf

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"time"
)

// Source makes tls.Configs from Settings and, with Settings.Reload, reloads the stores
// when their files change (ZooKeeper 3.9 watches them; here each handshake compares the
// files' size and modification time with those last loaded). A store that fails to load keeps the
// previous one in use; the failure is reported once per change.
type Source struct {
	s            Settings
	minV, maxV   uint16
	suites       []uint16
	reloadFailed func(error)

	mu       sync.Mutex
	keyAt    stamp
	trustAt  stamp
	cert     *tls.Certificate // nil without a key store
	pool     *x509.CertPool   // nil: the system's roots
	reloaded int
}

type stamp struct {
	mod  time.Time
	size int64
}

// ErrNoKeyStore: a server needs a key store.
var ErrNoKeyStore = errors.New("no keyStore.location")

// New checks s and loads its stores. reloadFailed, if not nil, hears of a store that
// changed on disk and could not be loaded.
func New(s Settings, reloadFailed func(error)) (*Source, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	src := &Source{s: s, reloadFailed: reloadFailed}
	src.minV, src.maxV, _ = s.Versions()
	src.suites, _ = CipherSuites(s.CipherSuites)
	if err := src.refresh(true); err != nil {
		return nil, err
	}
	return src, nil
}

// Settings returns the settings the source was made from.
func (src *Source) Settings() Settings { return src.s }

// Reloads says how many times a changed store was loaded again.
func (src *Source) Reloads() int {
	src.mu.Lock()
	defer src.mu.Unlock()
	return src.reloaded
}

// refresh loads a store whose file changed since it was last read (every store, first).
func (src *Source) refresh(first bool) error {
	src.mu.Lock()
	defer src.mu.Unlock()
	var errs []error
	if loc := src.s.KeyStore.Location; loc != "" {
		if at, changed := changedSince(loc, src.keyAt); first || changed {
			src.keyAt = at
			cert, err := loadKeyPair(src.s.KeyStore)
			if err == nil {
				src.cert = cert
				src.reloaded += b2i(!first)
			}
			errs = append(errs, err)
		}
	}
	if loc := src.s.TrustStore.Location; loc != "" {
		if at, changed := changedSince(loc, src.trustAt); first || changed {
			src.trustAt = at
			pool, err := loadTrustPool(src.s.TrustStore)
			if err == nil {
				src.pool = pool
				src.reloaded += b2i(!first)
			}
			errs = append(errs, err)
		}
	}
	err := errors.Join(errs...)
	if err != nil && !first && src.reloadFailed != nil {
		src.reloadFailed(err)
	}
	return err
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// changedSince stats a file; a file that cannot be stat'ed counts as unchanged (it is
// being replaced; the last one loaded stays in use).
func changedSince(path string, last stamp) (stamp, bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return last, false
	}
	now := stamp{fi.ModTime(), fi.Size()}
	return now, now != last
}

func (src *Source) current() (*tls.Certificate, *x509.CertPool) {
	if src.s.Reload {
		_ = src.refresh(false) // a failure goes to reloadFailed; the old stores stay in use
	}
	src.mu.Lock()
	defer src.mu.Unlock()
	return src.cert, src.pool
}

// ServerConfig is the listener's config: each handshake gets a config made from the
// stores as they are on disk then.
func (src *Source) ServerConfig() (*tls.Config, error) {
	if src.s.KeyStore.Location == "" {
		return nil, ErrNoKeyStore
	}
	return &tls.Config{
		MinVersion: src.minV,
		GetConfigForClient: func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
			return src.forClient(hello.Conn), nil
		},
	}, nil
}

func (src *Source) forClient(nc net.Conn) *tls.Config {
	cert, pool := src.current()
	cfg := &tls.Config{
		Certificates: []tls.Certificate{*cert},
		MinVersion:   src.minV,
		MaxVersion:   src.maxV,
		CipherSuites: src.suites,
	}
	switch src.s.ClientAuth {
	case ClientAuthNone:
		return cfg
	case ClientAuthWant:
		cfg.ClientAuth = tls.VerifyClientCertIfGiven
	default:
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	cfg.ClientCAs = pool
	host := ""
	if src.s.HostnameVerification && src.s.VerifyClientHostname && nc != nil {
		host, _, _ = net.SplitHostPort(nc.RemoteAddr().String())
	}
	cfg.VerifyConnection = func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return nil
		}
		leaf := cs.PeerCertificates[0]
		if err := signingAllowed(leaf); err != nil {
			return err
		}
		if host == "" {
			return nil
		}
		return verifyHostname(leaf, host)
	}
	return cfg
}

// ClientConfig is the config to dial addr (host:port) with: the key store's
// certificate as the client's, the trust store's certificates as roots, and, with
// HostnameVerification, the server's certificate checked against addr's host (its IP
// address, then the names it resolves back to, as ZooKeeper's ZKTrustManager does).
// Call it for each dial: it reflects the stores as they are on disk.
func (src *Source) ClientConfig(addr string) (*tls.Config, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	cert, pool := src.current()
	cfg := &tls.Config{
		MinVersion:   src.minV,
		MaxVersion:   src.maxV,
		CipherSuites: src.suites,
		// The chain is verified below: Go's own check knows no reverse lookup.
		InsecureSkipVerify: true,
		VerifyConnection: func(cs tls.ConnectionState) error {
			return verifyServer(cs, pool, host, src.s.HostnameVerification)
		},
	}
	if cert != nil {
		cfg.Certificates = []tls.Certificate{*cert}
	}
	return cfg, nil
}

func verifyServer(cs tls.ConnectionState, roots *x509.CertPool, host string, checkHost bool) error {
	if len(cs.PeerCertificates) == 0 {
		return errors.New("server sent no certificate")
	}
	inter := x509.NewCertPool()
	for _, c := range cs.PeerCertificates[1:] {
		inter.AddCert(c)
	}
	leaf := cs.PeerCertificates[0]
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
		return err
	}
	if !checkHost {
		return nil
	}
	return verifyHostname(leaf, host)
}

// signingAllowed refuses a client certificate whose key usage extension does not allow
// digital signatures, as Java's PKIX validation of a TLS client does
// (EndEntityChecker): the client proves it holds the key by a signature. Go checks the
// extended key usage (client authentication) but not this. A certificate without the
// extension may be used for anything.
func signingAllowed(cert *x509.Certificate) error {
	if cert.KeyUsage != 0 && cert.KeyUsage&x509.KeyUsageDigitalSignature == 0 {
		return errors.New("the client certificate's key usage does not allow digital signatures")
	}
	return nil
}

// verifyHostname checks a peer's certificate against its address, then against the
// names the address resolves back to.
func verifyHostname(cert *x509.Certificate, host string) error {
	err := cert.VerifyHostname(host)
	if err == nil || net.ParseIP(host) == nil {
		return err
	}
	names, lerr := net.LookupAddr(host)
	if lerr != nil {
		return err
	}
	for _, n := range names {
		if cert.VerifyHostname(trimDot(n)) == nil {
			return nil
		}
	}
	return fmt.Errorf("certificate of %s matches neither the address nor its names %v: %w", host, names, err)
}

func trimDot(s string) string {
	if len(s) > 0 && s[len(s)-1] == '.' {
		return s[:len(s)-1]
	}
	return s
}
