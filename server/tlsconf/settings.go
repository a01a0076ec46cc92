package tlsconf

import (
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
)

// ClientAuth is ssl.clientAuth: whether a server asks for a client certificate.
type ClientAuth int

// ClientAuth values; ZooKeeper's default (an empty or missing value) is Need.
const (
	ClientAuthNeed ClientAuth = iota // a client without a trusted certificate is refused
	ClientAuthWant                   // a client may come without one; one it shows must be trusted
	ClientAuthNone                   // no certificate is asked for
)

// ParseClientAuth reads ssl.clientAuth as X509Util.ClientAuth.fromPropertyValue does:
// empty is need, otherwise none, want or need in any case.
func ParseClientAuth(s string) (ClientAuth, error) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "", "NEED":
		return ClientAuthNeed, nil
	case "WANT":
		return ClientAuthWant, nil
	case "NONE":
		return ClientAuthNone, nil
	}
	return 0, fmt.Errorf("clientAuth %q is not none, want or need", s)
}

func (a ClientAuth) String() string {
	return [...]string{"need", "want", "none"}[a]
}

// Store names a key store or trust store file.
type Store struct {
	Location string
	// Password unlocks the store (and, in JKS and PKCS12, its private key). PasswordPath,
	// if set, names a file holding it instead (its content wins, as in ZooKeeper).
	Password     string
	PasswordPath string
	// Type is JKS, PEM or PKCS12 in any case; empty takes it from Location's extension
	// (.jks, .pem, .p12).
	Type string
}

// Settings are ZooKeeper's X509Util settings without their prefix.
type Settings struct {
	KeyStore   Store
	TrustStore Store // no Location: the system's roots
	// Protocol is ssl.protocol (default TLSv1.2); with no EnabledProtocols it is the only
	// version offered, as ZooKeeper enables only its SSLContext's protocol.
	Protocol         string
	EnabledProtocols []string // ssl.enabledProtocols
	CipherSuites     []string // ssl.ciphersuites, Java (IANA) names; empty: ZooKeeper's defaults
	ClientAuth       ClientAuth
	// HostnameVerification is ssl.hostnameVerification (default true). A client checks
	// the server's certificate against the address it dialed. A server checks a client's
	// certificate against the client's address only if VerifyClientHostname is also set:
	// ZooKeeper does so between members (QuorumX509Util) and never on the client port
	// (ClientX509Util).
	HostnameVerification bool
	VerifyClientHostname bool
	// Reload makes each handshake use the stores as they are on disk then, loading a
	// store again when its file changed (ZooKeeper 3.9: zookeeper.client.certReload for
	// the client port; always between members).
	Reload bool
}

// DefaultSettings are ZooKeeper's defaults: TLSv1.2, client certificates needed,
// hostname verification on; and reloading on.
func DefaultSettings() Settings {
	return Settings{Protocol: "TLSv1.2", ClientAuth: ClientAuthNeed, HostnameVerification: true, Reload: true}
}

// Validate names the first bad field.
func (s *Settings) Validate() error {
	if _, _, err := s.Versions(); err != nil {
		return err
	}
	if _, err := CipherSuites(s.CipherSuites); err != nil {
		return err
	}
	for _, st := range []struct {
		name  string
		store Store
	}{{"keyStore", s.KeyStore}, {"trustStore", s.TrustStore}} {
		if st.store.Location == "" {
			continue
		}
		if _, err := st.store.kind(); err != nil {
			return fmt.Errorf("%s: %w", st.name, err)
		}
	}
	return nil
}

// protocolVersions maps Java's protocol names to Go's versions. "TLS" (SSLContext's
// generic name) stands for every version Go offers from 1.2.
var protocolVersions = map[string][2]uint16{
	"TLSv1.3": {tls.VersionTLS13, tls.VersionTLS13},
	"TLSv1.2": {tls.VersionTLS12, tls.VersionTLS12},
	"TLSv1.1": {tls.VersionTLS11, tls.VersionTLS11},
	"TLSv1":   {tls.VersionTLS10, tls.VersionTLS10},
	"TLS":     {tls.VersionTLS12, tls.VersionTLS13},
}

// ErrNoProtocol: every enabled protocol is one Java disables.
var ErrNoProtocol = errors.New("no enabled protocol is TLSv1.2 or later (TLSv1 and TLSv1.1 are disabled, as Java disables them)")

// Versions is the range of versions the enabled protocols cover (Go enables a range,
// Java a set: a gap in the set is filled). TLSv1 and TLSv1.1 are valid names but never
// offered: Java (8u291, 11.0.11, 16 and later, so every JDK ZooKeeper 3.8 runs on
// today) lists them in jdk.tls.disabledAlgorithms, and ZooKeeper refuses them whatever
// ssl.enabledProtocols says. None left is ErrNoProtocol (ZooKeeper starts and fails
// every handshake).
func (s *Settings) Versions() (lo, hi uint16, err error) {
	names := s.EnabledProtocols
	if len(names) == 0 {
		p := s.Protocol
		if p == "" {
			p = "TLSv1.2"
		}
		names = []string{p}
	}
	for _, n := range names {
		v, ok := protocolVersions[strings.TrimSpace(n)]
		if !ok {
			return 0, 0, fmt.Errorf("protocol %q is not one of TLSv1.3, TLSv1.2, TLSv1.1, TLSv1, TLS", n)
		}
		if v[1] < tls.VersionTLS12 {
			continue
		}
		if lo == 0 || v[0] < lo {
			lo = v[0]
		}
		hi = max(hi, v[1])
	}
	if lo == 0 {
		return 0, 0, fmt.Errorf("%w: %s", ErrNoProtocol, strings.Join(names, ","))
	}
	return lo, hi, nil
}

// DefaultCipherSuites is X509Util's list on Java 9 and later: ECDHE with AES-GCM first,
// then AES-CBC.
var DefaultCipherSuites = []string{
	"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
	"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
	"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256", "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256",
	"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
	"TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384", "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384",
	"TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA",
}

// ErrNoCipherSuite: none of ssl.ciphersuites is one Go implements for TLS 1.2 or lower.
var ErrNoCipherSuite = errors.New("no cipher suite of ssl.ciphersuites is supported")

// CipherSuites maps Java cipher suite names (IANA's; "SSL_" is Java's old prefix for
// "TLS_") to Go's ids. RC4 and 3DES suites are skipped, as Java disables them. Names Go
// does not implement are skipped: Java ignores TLS 1.3
// suites in this list when it negotiates 1.2 and Go always enables all 1.3 suites, and
// a suite only Java has (DHE, for one) must not stop a server that has others. None
// left is an error. The server prefers its own order (Go's).
func CipherSuites(names []string) ([]uint16, error) {
	if len(names) == 0 {
		names = DefaultCipherSuites
	}
	byName := map[string]uint16{}
	for _, list := range [][]*tls.CipherSuite{tls.CipherSuites(), tls.InsecureCipherSuites()} {
		for _, cs := range list {
			byName[cs.Name] = cs.ID
		}
	}
	// Go's older names for the ChaCha20 suites.
	byName["TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305"] = tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256
	byName["TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305"] = tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256
	var ids []uint16
	tls13 := false
	for _, n := range names {
		n = strings.TrimSpace(n)
		if rest, ok := strings.CutPrefix(n, "SSL_"); ok {
			n = "TLS_" + rest
		}
		if javaDisabledSuite(n) {
			continue
		}
		if id, ok := byName[n]; ok {
			if isTLS13Suite(id) {
				tls13 = true
				continue
			}
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 && !tls13 {
		return nil, fmt.Errorf("%w: %s", ErrNoCipherSuite, strings.Join(names, ","))
	}
	return ids, nil
}

// javaDisabledSuite: the suites of Go's that Java's jdk.tls.disabledAlgorithms (RC4,
// 3DES_EDE_CBC) keeps ZooKeeper from negotiating, listed or not.
func javaDisabledSuite(name string) bool {
	return strings.Contains(name, "_RC4_") || strings.Contains(name, "_3DES_EDE_CBC_")
}

func isTLS13Suite(id uint16) bool {
	switch id {
	case tls.TLS_AES_128_GCM_SHA256, tls.TLS_AES_256_GCM_SHA384, tls.TLS_CHACHA20_POLY1305_SHA256:
		return true
	}
	return false
}
