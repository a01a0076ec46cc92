package tlsconf_test

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/server/tlsconf"
	"github.com/zkraft/zkraft/server/tlsconf/tlstest"
)

// handshake runs a TLS handshake between a server and a client over a pipe and returns
// the server's view of it.
func handshake(t *testing.T, server, client *tlsconf.Source) (tls.ConnectionState, error) {
	t.Helper()
	scfg, err := server.ServerConfig()
	if err != nil {
		t.Fatal(err)
	}
	ccfg, err := client.ClientConfig("127.0.0.1:2281")
	if err != nil {
		t.Fatal(err)
	}
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	deadline := time.Now().Add(5 * time.Second)
	a.SetDeadline(deadline)
	b.SetDeadline(deadline)
	sc, cc := tls.Server(a, scfg), tls.Client(b, ccfg)
	cerr := make(chan error, 1)
	go func() {
		err := cc.Handshake()
		if err == nil {
			// TLS 1.3: the server's verdict on the client's certificate arrives after.
			_, err = cc.Read(make([]byte, 1))
		}
		cerr <- err
	}()
	err = sc.Handshake()
	if err == nil {
		sc.Write([]byte{1})
	}
	if e := <-cerr; err == nil && e != nil {
		err = e
	}
	return sc.ConnectionState(), err
}

type stores struct {
	dir    string
	ca     *tlstest.CA
	server *tlstest.Leaf
	client *tlstest.Leaf
}

func newStores(t *testing.T) *stores {
	ca := tlstest.NewCA(t, "test CA")
	return &stores{dir: t.TempDir(), ca: ca,
		server: ca.Issue(t, tlstest.Options{Subject: pkix.Name{CommonName: "server"}}),
		client: ca.Issue(t, tlstest.Options{Subject: pkix.Name{CommonName: "client", Organization: []string{"zkraft"}}})}
}

func (s *stores) pemSettings(t *testing.T, leaf *tlstest.Leaf, name string) tlsconf.Settings {
	set := tlsconf.DefaultSettings()
	set.KeyStore.Location = leaf.WritePEM(t, filepath.Join(s.dir, name+".pem"))
	set.TrustStore.Location = tlstest.WriteFile(t, filepath.Join(s.dir, "ca.pem"), s.ca.CertPEM())
	return set
}

func mustNew(t *testing.T, s tlsconf.Settings) *tlsconf.Source {
	t.Helper()
	src, err := tlsconf.New(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func TestTLSConfFormats(t *testing.T) {
	s := newStores(t)
	client := mustNew(t, s.pemSettings(t, s.client, "client"))
	const pw = "s3cret!"
	cases := map[string]func(t *testing.T) tlsconf.Settings{
		"PEM": func(t *testing.T) tlsconf.Settings { return s.pemSettings(t, s.server, "server") },
		"PKCS12 by Go": func(t *testing.T) tlsconf.Settings {
			set := s.pemSettings(t, s.server, "server")
			set.KeyStore = tlsconf.Store{Location: s.server.WritePKCS12(t, filepath.Join(s.dir, "go.p12"), pw), Password: pw}
			return set
		},
		"PKCS12 by keytool": func(t *testing.T) tlsconf.Settings {
			set := tlsconf.DefaultSettings()
			set.KeyStore = tlsconf.Store{Location: s.server.KeytoolKeyStore(t, s.dir, filepath.Join(s.dir, "k.p12"), "PKCS12", pw), Password: pw}
			set.TrustStore = tlsconf.Store{Location: s.ca.KeytoolTrustStore(t, s.dir, filepath.Join(s.dir, "t.p12"), "PKCS12", pw), Password: pw}
			return set
		},
		"JKS by keytool": func(t *testing.T) tlsconf.Settings {
			set := tlsconf.DefaultSettings()
			set.KeyStore = tlsconf.Store{Location: s.server.KeytoolKeyStore(t, s.dir, filepath.Join(s.dir, "k.jks"), "JKS", pw), Password: pw}
			pwFile := tlstest.WriteFile(t, filepath.Join(s.dir, "pw"), []byte(pw+"\n"))
			set.TrustStore = tlsconf.Store{Location: s.ca.KeytoolTrustStore(t, s.dir, filepath.Join(s.dir, "t.store"), "JKS", pw),
				PasswordPath: pwFile, Type: "jks"}
			return set
		},
	}
	for name, settings := range cases {
		t.Run(name, func(t *testing.T) {
			server := mustNew(t, settings(t))
			st, err := handshake(t, server, client)
			if err != nil {
				t.Fatalf("handshake: %v", err)
			}
			if len(st.PeerCertificates) == 0 || tlsconf.SubjectName(st.PeerCertificates[0]) != "CN=client,O=zkraft" {
				t.Fatalf("server saw client certificate %v", tlsconf.SubjectName(st.PeerCertificates[0]))
			}
		})
	}
}

func TestTLSConfWrongPassword(t *testing.T) {
	s := newStores(t)
	p12 := s.server.WritePKCS12(t, filepath.Join(s.dir, "k.p12"), "right")
	set := tlsconf.DefaultSettings()
	set.KeyStore = tlsconf.Store{Location: p12, Password: "wrong"}
	if _, err := tlsconf.New(set, nil); err == nil {
		t.Fatal("PKCS12 with a wrong password loaded")
	}
	jks := s.server.KeytoolKeyStore(t, s.dir, filepath.Join(s.dir, "k.jks"), "JKS", "right1")
	set.KeyStore = tlsconf.Store{Location: jks, Password: "wrong1"}
	if _, err := tlsconf.New(set, nil); err == nil {
		t.Fatal("JKS with a wrong password loaded")
	}
}

func TestTLSConfStoreType(t *testing.T) {
	s := newStores(t)
	path := s.server.WritePEM(t, filepath.Join(s.dir, "server.key"))
	set := tlsconf.DefaultSettings()
	set.KeyStore.Location = path
	if _, err := tlsconf.New(set, nil); err == nil {
		t.Fatal("a .key file without a type loaded (ZooKeeper cannot detect its type)")
	}
	set.KeyStore.Type = "pem"
	if _, err := tlsconf.New(set, nil); err != nil {
		t.Fatalf("type pem: %v", err)
	}
	set.KeyStore.Type = "BCFKS"
	if _, err := tlsconf.New(set, nil); err == nil {
		t.Fatal("BCFKS accepted")
	}
}

func TestTLSConfClientAuth(t *testing.T) {
	s := newStores(t)
	anon := tlsconf.DefaultSettings()
	anon.TrustStore = s.pemSettings(t, s.client, "client").TrustStore
	anonymous := mustNew(t, anon)
	for _, c := range []struct {
		auth string
		ok   bool
	}{{"", false}, {"need", false}, {"WANT", true}, {"none", true}} {
		set := s.pemSettings(t, s.server, "server")
		var err error
		if set.ClientAuth, err = tlsconf.ParseClientAuth(c.auth); err != nil {
			t.Fatal(err)
		}
		_, err = handshake(t, mustNew(t, set), anonymous)
		if (err == nil) != c.ok {
			t.Errorf("clientAuth %q: client without certificate: err %v, want ok=%v", c.auth, err, c.ok)
		}
	}
	if _, err := tlsconf.ParseClientAuth("maybe"); err == nil {
		t.Error("clientAuth maybe accepted")
	}
}

// TestTLSConfExpiredTrustAnchor: a trusted CA certificate is an anchor whatever its
// dates, as in Java's PKIX validation: current certificates it issued are accepted both
// ways (server and client), though the CA's own certificate has expired.
func TestTLSConfExpiredTrustAnchor(t *testing.T) {
	old := tlstest.NewCAValid(t, "expired CA", time.Now().Add(-48*time.Hour), time.Now().Add(-time.Hour))
	s := &stores{dir: t.TempDir(), ca: old,
		server: old.Issue(t, tlstest.Options{Subject: pkix.Name{CommonName: "server"}}),
		client: old.Issue(t, tlstest.Options{Subject: pkix.Name{CommonName: "client"}})}
	server := mustNew(t, s.pemSettings(t, s.server, "server"))
	if _, err := handshake(t, server, mustNew(t, s.pemSettings(t, s.client, "client"))); err != nil {
		t.Fatalf("certificates of an expired trusted CA: %v", err)
	}
	// The dates of the certificates below the anchor still count.
	expired := old.Issue(t, tlstest.Options{Subject: pkix.Name{CommonName: "old"},
		NotBefore: time.Now().Add(-48 * time.Hour), NotAfter: time.Now().Add(-24 * time.Hour)})
	if _, err := handshake(t, server, mustNew(t, s.pemSettings(t, expired, "expired"))); err == nil {
		t.Error("an expired certificate was accepted")
	}
}

func TestTLSConfUntrustedAndExpired(t *testing.T) {
	s := newStores(t)
	server := mustNew(t, s.pemSettings(t, s.server, "server"))
	other := tlstest.NewCA(t, "other CA")
	stranger := other.Issue(t, tlstest.Options{Subject: pkix.Name{CommonName: "stranger"}})
	set := s.pemSettings(t, stranger, "stranger")
	if _, err := handshake(t, server, mustNew(t, set)); err == nil {
		t.Error("a certificate of an untrusted CA was accepted")
	}
	expired := s.ca.Issue(t, tlstest.Options{Subject: pkix.Name{CommonName: "old"},
		NotBefore: time.Now().Add(-48 * time.Hour), NotAfter: time.Now().Add(-24 * time.Hour)})
	if _, err := handshake(t, server, mustNew(t, s.pemSettings(t, expired, "expired"))); err == nil {
		t.Error("an expired certificate was accepted")
	}
}

func TestTLSConfReload(t *testing.T) {
	s := newStores(t)
	set := s.pemSettings(t, s.server, "server")
	var failures []error
	server, err := tlsconf.New(set, func(err error) { failures = append(failures, err) })
	if err != nil {
		t.Fatal(err)
	}
	client := mustNew(t, s.pemSettings(t, s.client, "client"))
	serverName := func() string {
		t.Helper()
		cfg, _ := client.ClientConfig("127.0.0.1:1")
		var name string
		cfg.VerifyConnection = func(cs tls.ConnectionState) error {
			name = cs.PeerCertificates[0].Subject.CommonName
			return nil
		}
		scfg, _ := server.ServerConfig()
		a, b := net.Pipe()
		defer a.Close()
		defer b.Close()
		go tls.Server(a, scfg).Handshake()
		if err := tls.Client(b, cfg).Handshake(); err != nil {
			t.Fatal(err)
		}
		return name
	}
	if got := serverName(); got != "server" {
		t.Fatalf("server certificate %q", got)
	}
	before := server.Reloads()
	renewed := s.ca.Issue(t, tlstest.Options{Subject: pkix.Name{CommonName: "renewed"}})
	renewed.WritePEM(t, set.KeyStore.Location)
	later := time.Now().Add(2 * time.Second)
	os.Chtimes(set.KeyStore.Location, later, later)
	if got := serverName(); got != "renewed" || server.Reloads() != before+1 {
		t.Fatalf("after the key store changed: certificate %q, reloads %d", got, server.Reloads())
	}
	// A broken file keeps the certificate in use and is reported.
	tlstest.WriteFile(t, set.KeyStore.Location, []byte("garbage"))
	later = later.Add(2 * time.Second)
	os.Chtimes(set.KeyStore.Location, later, later)
	if got := serverName(); got != "renewed" || len(failures) != 1 {
		t.Fatalf("after the key store broke: certificate %q, failures %v", got, failures)
	}
}

func TestTLSConfProtocolsAndCiphers(t *testing.T) {
	s := newStores(t)
	base := s.pemSettings(t, s.server, "server")
	for _, c := range []struct {
		protocol string
		enabled  []string
		ciphers  []string
		wantErr  error
		version  uint16
		suite    uint16
	}{
		{version: tls.VersionTLS12, suite: tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256},
		{protocol: "TLSv1.3", version: tls.VersionTLS13, suite: tls.TLS_AES_128_GCM_SHA256},
		{enabled: []string{"TLSv1.2", "TLSv1.3"}, version: tls.VersionTLS13, suite: tls.TLS_AES_128_GCM_SHA256},
		{ciphers: []string{"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"}, version: tls.VersionTLS12, suite: tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384},
		{ciphers: []string{"TLS_DHE_RSA_WITH_AES_128_GCM_SHA256", "SSL_ECDHE_ECDSA_WITH_AES_128_CBC_SHA"}, version: tls.VersionTLS12, suite: tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA},
		{ciphers: []string{"TLS_DHE_RSA_WITH_AES_128_GCM_SHA256"}, wantErr: tlsconf.ErrNoCipherSuite},
		// RC4 and 3DES are skipped, as Java disables them.
		{ciphers: []string{"TLS_ECDHE_ECDSA_WITH_RC4_128_SHA", "TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA"}, wantErr: tlsconf.ErrNoCipherSuite},
		{protocol: "SSLv3", wantErr: errors.New("any")},
		// Java disables TLSv1 and TLSv1.1: listed, they are not offered.
		{enabled: []string{"TLSv1.1", "TLSv1"}, wantErr: tlsconf.ErrNoProtocol},
		{protocol: "TLSv1.1", wantErr: tlsconf.ErrNoProtocol},
		{enabled: []string{"TLSv1", "TLSv1.2"}, version: tls.VersionTLS12, suite: tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256},
	} {
		set := base
		set.Protocol, set.EnabledProtocols, set.CipherSuites = c.protocol, c.enabled, c.ciphers
		if set.Protocol == "" {
			set.Protocol = "TLSv1.2"
		}
		server, err := tlsconf.New(set, nil)
		if c.wantErr != nil {
			if err == nil || ((errors.Is(c.wantErr, tlsconf.ErrNoCipherSuite) || errors.Is(c.wantErr, tlsconf.ErrNoProtocol)) && !errors.Is(err, c.wantErr)) {
				t.Errorf("%+v: err %v, want %v", c, err, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		cset := s.pemSettings(t, s.client, "client")
		cset.EnabledProtocols = []string{"TLSv1.2", "TLSv1.3"}
		cset.CipherSuites = []string{"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA"}
		st, err := handshake(t, server, mustNew(t, cset))
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		if st.Version != c.version || st.CipherSuite != c.suite {
			t.Errorf("%+v: negotiated %s %s", c, tls.VersionName(st.Version), tls.CipherSuiteName(st.CipherSuite))
		}
	}
}

func TestTLSConfFromProperties(t *testing.T) {
	props := map[string]string{
		"ssl.quorum.keyStore.location": "/k.jks", "ssl.quorum.keyStore.password": "p",
		"ssl.quorum.trustStore.location": "/t.p12", "ssl.quorum.hostnameVerification": "no",
		"ssl.quorum.clientAuth": "want", "ssl.quorum.enabledProtocols": "TLSv1.2,TLSv1.3",
		"ssl.keyStore.location": "/client.pem",
	}
	s, err := tlsconf.FromProperties(props, "ssl.quorum.")
	if err != nil {
		t.Fatal(err)
	}
	if s.KeyStore.Location != "/k.jks" || s.KeyStore.Password != "p" || s.TrustStore.Location != "/t.p12" ||
		s.HostnameVerification || s.ClientAuth != tlsconf.ClientAuthWant || len(s.EnabledProtocols) != 2 || s.Protocol != "TLSv1.2" {
		t.Fatalf("%+v", s)
	}
	c, err := tlsconf.FromProperties(props, "ssl.")
	if err != nil {
		t.Fatal(err)
	}
	if c.KeyStore.Location != "/client.pem" || !c.HostnameVerification || c.ClientAuth != tlsconf.ClientAuthNeed {
		t.Fatalf("%+v", c)
	}
}

// TestSubjectNameAsJava: the RFC 2253 form of a subject with multi-valued RDNs,
// characters to escape, leading and trailing spaces and attributes Java prints as OIDs;
// the expected string is what ZooKeeper 3.8 (X500Principal.getName()) stored for the
// same certificate in TestX509ACLMatchesZooKeeper.
func TestSubjectNameAsJava(t *testing.T) {
	ca := tlstest.NewCA(t, "ca")
	leaf := ca.Issue(t, tlstest.Options{Subject: pkix.Name{CommonName: `Smith, John "J" <x+y=z;#>`, Country: []string{"NZ"},
		OrganizationalUnit: []string{"ops", " padded "}, SerialNumber: "42",
		ExtraNames: []pkix.AttributeTypeAndValue{
			{Type: asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 1}, Value: "john@example.com"},
			{Type: asn1.ObjectIdentifier{0, 9, 2342, 19200300, 100, 1, 25}, Value: "example"},
		}}})
	const want = `DC=example,1.2.840.113549.1.9.1=#0c106a6f686e406578616d706c652e636f6d,2.5.4.5=#13023432,` +
		`CN=Smith\, John \"J\" \<x\+y\=z\;\#\>,OU=ops+OU=\ padded\ ,C=NZ`
	if got := tlsconf.SubjectName(leaf.Cert); got != want {
		t.Errorf("SubjectName:\n got %s\nwant %s", got, want)
	}
}

// TestTLSConfNoReload: without Settings.Reload the stores loaded at start stay in use.
func TestTLSConfNoReload(t *testing.T) {
	s := newStores(t)
	set := s.pemSettings(t, s.server, "server")
	set.Reload = false
	server := mustNew(t, set)
	s.ca.Issue(t, tlstest.Options{Subject: pkix.Name{CommonName: "renewed"}}).WritePEM(t, set.KeyStore.Location)
	later := time.Now().Add(2 * time.Second)
	os.Chtimes(set.KeyStore.Location, later, later)
	if _, err := handshake(t, server, mustNew(t, s.pemSettings(t, s.client, "client"))); err != nil {
		t.Fatal(err)
	}
	cfg, _ := server.ClientConfig("127.0.0.1:1")
	if got := cfg.Certificates[0].Leaf.Subject.CommonName; got != "server" || server.Reloads() != 0 {
		t.Fatalf("certificate %q, reloads %d", got, server.Reloads())
	}
}

// TestTLSConfLoadStores: LoadStores reads the stores once (a Go-made PKCS12 key store,
// a PEM trust store) and names the store at fault.
func TestTLSConfLoadStores(t *testing.T) {
	s := newStores(t)
	key := tlsconf.Store{Location: s.server.WritePKCS12(t, filepath.Join(s.dir, "server.p12"), "pw"), Password: "pw"}
	trust := tlsconf.Store{Location: tlstest.WriteFile(t, filepath.Join(s.dir, "ca.pem"), s.ca.CertPEM())}
	cert, pool, err := tlsconf.LoadStores(key, trust)
	if err != nil {
		t.Fatal(err)
	}
	if cert.Leaf.Subject.CommonName != "server" {
		t.Fatalf("certificate %v", cert.Leaf.Subject)
	}
	if _, err := cert.Leaf.Verify(x509.VerifyOptions{Roots: pool}); err != nil {
		t.Fatalf("the trust pool does not verify the CA's certificate: %v", err)
	}
	badKey, badTrust := key, trust
	badKey.Password = "wrong"
	badTrust.Type = "JKS"
	for _, c := range []struct {
		key, trust tlsconf.Store
		want       string
	}{{badKey, trust, "keyStore: "}, {key, badTrust, "trustStore: "}} {
		if _, _, err := tlsconf.LoadStores(c.key, c.trust); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error starting %q", c, err, c.want)
		}
	}
}
