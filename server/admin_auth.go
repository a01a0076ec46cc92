package server

import (
	"crypto/x509"
	"net"
	"net/http"
	"strings"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/server/tlsconf"
	"github.com/zkraft/zkraft/session"
)

// The AdminServer's command authentication, as ZooKeeper 3.9's Commands.runCommand
// does it for a command that needs it (snapshot): the Authorization header names a
// scheme and, for digest, its credentials ("digest user:password"); ip and x509 take
// their identity from the HTTP request (the caller's address, its TLS certificate). The
// scheme's provider must be registered (ProviderRegistry: ip always, digest unless
// disabled, x509 when configured); a registered provider with no HTTP form (sasl,
// ensemble) authenticates nobody. The identity then needs every bit of the command's
// permission on its path.

// adminIdentity is the identity an Authorization header's value gives the request, or
// false when it authenticates nobody.
func (s *Server) adminIdentity(r *http.Request, header string) (datatree.Caller, bool) {
	// Java's String.split(" "): a piece per space (trailing empty pieces dropped, but
	// HTTP servers, Jetty and Go's, trim a header value's edges already).
	parts := strings.Split(header, " ")
	if len(parts) != 1 && len(parts) != 2 || !s.cfg.schemeRegistered(parts[0]) {
		return datatree.Caller{}, false
	}
	switch parts[0] {
	case "digest":
		// DigestAuthenticationProvider digests what follows the scheme whether or not it
		// holds a colon; without it (a null auth) it fails.
		if len(parts) != 2 {
			return datatree.Caller{}, false
		}
		id := s.digest(parts[1])
		c := datatree.Caller{Ids: []jute.Id{{Scheme: "digest", Id: id}}}
		c.Super = s.cfg.SuperDigest != "" && id == s.cfg.SuperDigest
		return c, true
	case "ip":
		ip, ok := s.adminClientIP(r)
		return datatree.Caller{Ids: []jute.Id{{Scheme: "ip", Id: ip}}}, ok
	case "x509":
		subject, ok := s.adminCertificate(r)
		if !ok {
			return datatree.Caller{}, false
		}
		return *x509Caller(datatree.Caller{}, subject, s.cfg.X509SuperUser), true
	}
	return datatree.Caller{}, false
}

// adminClientIP is the ip identity of an HTTP request, as IPAuthenticationProvider's
// getClientIPAddress gives it: the peer's address, or with
// zookeeper.IPAuthenticationProvider.usexforwardedfor the first address the
// X-Forwarded-For header names (the peer's without the header). A header with no
// address in it (empty, or only commas) authenticates nobody: Java's StringTokenizer
// throws there, and the command answers "Not authenticated".
func (s *Server) adminClientIP(r *http.Request) (string, bool) {
	if fwd, ok := r.Header["X-Forwarded-For"]; ok && s.cfg.AdminAuth.UseXForwardedFor {
		// StringTokenizer on ",": the first non-empty token, trimmed.
		for _, tok := range strings.Split(fwd[0], ",") {
			if tok != "" {
				return strings.TrimSpace(tok), true
			}
		}
		return "", false
	}
	host, zone, _ := strings.Cut(r.RemoteAddr, "%")
	if zone != "" {
		// An IPv6 address with a zone: "[fe80::1%eth0]:port".
		host = strings.TrimPrefix(host, "[")
		zone, _, _ = strings.Cut(zone, "]")
	} else if h, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		host = h
	}
	if ip := net.ParseIP(host); ip != nil {
		return javaHostAddress(ip, zone), true
	}
	return host, true
}

// adminCertificate is the subject of the request's client certificate once
// X509AuthenticationProvider's trust manager (the ssl.trustStore of the client port)
// trusts its chain; false without a certificate (the AdminServer asks for one only with
// admin.needClientAuth) or a trust store, or for a chain it does not trust.
func (s *Server) adminCertificate(r *http.Request) (string, bool) {
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return "", false
	}
	// Read at each request (only a caller with a certificate the handshake trusted gets
	// here), so a replaced trust store counts at once.
	settings, err := tlsconf.FromProperties(s.cfg.SSL, "ssl.")
	if err != nil {
		s.log.Warn("admin command: the ssl.* settings do not load", "err", err)
		return "", false
	}
	if settings.TrustStore.Location == "" {
		s.log.Warn("admin command: no ssl.trustStore to authenticate an x509 certificate with", "client", r.RemoteAddr)
		return "", false
	}
	roots, err := tlsconf.LoadTrustPool(settings.TrustStore)
	if err != nil {
		s.log.Warn("admin command: the ssl.trustStore did not load", "err", err)
		return "", false
	}
	chain := r.TLS.PeerCertificates
	inter := x509.NewCertPool()
	for _, c := range chain[1:] {
		inter.AddCert(c)
	}
	if _, err := chain[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		s.log.Warn("admin command: x509 certificate not trusted", "client", r.RemoteAddr, "err", err)
		return "", false
	}
	return tlsconf.SubjectName(chain[0]), true
}

// adminAuthorize checks an admin command's Authorization header as ZooKeeper 3.9's
// Commands do: no header is 401 "Auth info is missing for the command", a header that
// authenticates nobody is 401 "Not authenticated", an identity without every bit of
// perm on path is 403 "Not authorized".
func (s *Server) adminAuthorize(r *http.Request, perm int32, path string) (int, string) {
	values, ok := r.Header["Authorization"]
	if !ok || len(values) == 0 {
		return http.StatusUnauthorized, "Auth info is missing for the command"
	}
	caller, ok := s.adminIdentity(r, values[0])
	if !ok {
		return http.StatusUnauthorized, "Not authenticated"
	}
	caller.Super = caller.Super || s.cfg.SkipACL // authenticated, then checkACL passes
	// Every bit of perm, each on its own: an ACL check passes when the caller holds any
	// one bit of what is asked, and a snapshot (perm ALL on /) must not go to a caller
	// that may only read the root (ZooKeeper 3.9.4, ZOOKEEPER-4964).
	code := jute.OK
	s.node.FSM.Read(func(t *datatree.Tree, _ *session.Table) {
		for bit := int32(1); bit <= perm && code == jute.OK; bit <<= 1 {
			if perm&bit != 0 {
				code = t.CheckACL(path, bit, caller)
			}
		}
	})
	if code != jute.OK {
		return http.StatusForbidden, "Not authorized"
	}
	return http.StatusOK, ""
}
