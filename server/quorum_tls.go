package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/zkraft/zkraft/quorum"
	"github.com/zkraft/zkraft/server/tlsconf"
)

// QuorumSSL is ZooKeeper's TLS between members: sslQuorum, portUnification and the
// ssl.quorum.* keys. Enabled makes every stream between members mutual TLS;
// PortUnification makes the member ports accept plaintext streams as well, for moving a
// running cluster to TLS one member at a time (as ZooKeeper's procedure: portUnification
// on, then sslQuorum on, then portUnification off, a rolling restart each).
type QuorumSSL struct {
	Enabled         bool // sslQuorum
	PortUnification bool // portUnification
	// The key store holds this member's certificate and key, the trust store the CAs
	// whose members it accepts: PEM, PKCS12 or JKS files, read by server/tlsconf. Type
	// "" is taken from the file name (.pem, .p12, .jks), as ZooKeeper does. A password
	// may be given inline or, as a file's content, by its PasswordPath. PEM stores need
	// none (an encrypted PEM key is not read).
	KeyStoreLocation, KeyStorePassword, KeyStorePasswordPath, KeyStoreType         string
	TrustStoreLocation, TrustStorePassword, TrustStorePasswordPath, TrustStoreType string
	// Protocol is ssl.quorum.protocol (ZooKeeper 3.8's default TLSv1.2);
	// EnabledProtocols (ssl.quorum.enabledProtocols) defaults to Protocol alone.
	Protocol         string
	EnabledProtocols []string
	// CipherSuites (ssl.quorum.ciphersuites) are TLS 1.2 suites by their IANA names;
	// empty is Go's default list. TLS 1.3's suites are not configurable in Go.
	CipherSuites []string
	// HostnameVerification (ssl.quorum.hostnameVerification, on by default) checks that
	// a member's certificate names the address it was dialed at, and that a dialer's
	// names the address it dials from (its IP, or a name the IP resolves back to).
	HostnameVerification bool
	// ClientAuth is ssl.quorum.clientAuth: only "need" (the default) is accepted, since
	// a listener that takes members without a trusted certificate lets anyone vote.
	ClientAuth string
	// HandshakeTimeout is ssl.quorum.handshakeDetectionTimeoutMillis (0: 5 s).
	HandshakeTimeout time.Duration
}

// validate names the first bad setting.
func (q *QuorumSSL) validate() error {
	if !q.Enabled && !q.PortUnification {
		return nil
	}
	switch {
	case q.KeyStoreLocation == "":
		return errors.New("ssl.quorum.keyStore.location is not set")
	case q.TrustStoreLocation == "":
		return errors.New("ssl.quorum.trustStore.location is not set")
	case q.ClientAuth != "" && !strings.EqualFold(q.ClientAuth, "need"):
		return fmt.Errorf("ssl.quorum.clientAuth %q: zkraft requires every member to present a trusted certificate (need)", q.ClientAuth)
	case q.HandshakeTimeout < 0:
		return fmt.Errorf("ssl.quorum.handshakeDetectionTimeoutMillis %v is negative", q.HandshakeTimeout)
	}
	if _, _, err := q.versions(); err != nil {
		return err
	}
	_, err := q.suites()
	return err
}

// quorumTLS builds the member streams' TLS from the stores; nil when sslQuorum and
// portUnification are both off.
func (q *QuorumSSL) quorumTLS() (*quorum.TLS, error) {
	if !q.Enabled && !q.PortUnification {
		return nil, nil
	}
	cert, pool, err := q.stores()
	if err != nil {
		return nil, err
	}
	lo, hi, _ := q.versions()
	suites, _ := q.suites()
	server := &tls.Config{Certificates: []tls.Certificate{cert}, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert,
		MinVersion: lo, MaxVersion: hi, CipherSuites: suites}
	client := &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool, MinVersion: lo, MaxVersion: hi, CipherSuites: suites}
	if q.HostnameVerification {
		server.GetConfigForClient = func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
			c := server.Clone()
			c.GetConfigForClient = nil
			c.VerifyConnection = func(cs tls.ConnectionState) error { return verifyDialerHost(cs, hello.Conn.RemoteAddr()) }
			return c, nil
		}
	} else {
		// Go checks the name whenever it checks the chain; check the chain alone.
		client.InsecureSkipVerify = true
		client.VerifyConnection = func(cs tls.ConnectionState) error { return verifyChain(cs, pool) }
	}
	t := &quorum.TLS{Server: server, HandshakeTimeout: q.HandshakeTimeout, AcceptPlaintext: q.PortUnification}
	if q.Enabled {
		t.Client = client
	}
	return t, nil
}

// stores reads the key and trust stores through tlsconf; an error names the
// ssl.quorum.* key of the store at fault.
func (q *QuorumSSL) stores() (tls.Certificate, *x509.CertPool, error) {
	cert, pool, err := tlsconf.LoadStores(
		tlsconf.Store{Location: q.KeyStoreLocation, Password: q.KeyStorePassword, PasswordPath: q.KeyStorePasswordPath, Type: q.KeyStoreType},
		tlsconf.Store{Location: q.TrustStoreLocation, Password: q.TrustStorePassword, PasswordPath: q.TrustStorePasswordPath, Type: q.TrustStoreType})
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("ssl.quorum.%w", err)
	}
	return cert, pool, nil
}

// versions is the lowest and highest enabled protocol version, as for clients.
func (q *QuorumSSL) versions() (lo, hi uint16, err error) {
	lo, hi, err = (&tlsconf.Settings{Protocol: q.Protocol, EnabledProtocols: q.EnabledProtocols}).Versions()
	if err != nil {
		err = fmt.Errorf("ssl.quorum %w", err)
	}
	return lo, hi, err
}

// suites maps the configured cipher suites to Go's ids, as for clients (ZooKeeper's
// list when none is set).
func (q *QuorumSSL) suites() ([]uint16, error) {
	ids, err := tlsconf.CipherSuites(q.CipherSuites)
	if err != nil {
		err = fmt.Errorf("ssl.quorum.ciphersuites: %w", err)
	}
	return ids, err
}

// verifyDialerHost checks that the dialer's certificate names the address it dials
// from: its IP, or, as ZooKeeper falls back to, a name that IP resolves back to.
func verifyDialerHost(cs tls.ConnectionState, from net.Addr) error {
	if len(cs.PeerCertificates) == 0 {
		return errors.New("the dialer presented no certificate")
	}
	cert := cs.PeerCertificates[0]
	host, _, err := net.SplitHostPort(from.String())
	if err != nil {
		return err
	}
	if cert.VerifyHostname(host) == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	names, _ := net.DefaultResolver.LookupAddr(ctx, host)
	for _, name := range names {
		if cert.VerifyHostname(strings.TrimSuffix(name, ".")) == nil {
			return nil
		}
	}
	return fmt.Errorf("the dialer's certificate does not name %s (ssl.quorum.hostnameVerification)", host)
}

// verifyChain checks the listener's certificate chain against the trust store, without
// its name (hostname verification off).
func verifyChain(cs tls.ConnectionState, roots *x509.CertPool) error {
	if len(cs.PeerCertificates) == 0 {
		return errors.New("the listener presented no certificate")
	}
	inter := x509.NewCertPool()
	for _, c := range cs.PeerCertificates[1:] {
		inter.AddCert(c)
	}
	_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	return err
}
