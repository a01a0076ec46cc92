package server

import (
	"errors"
	"fmt"
	"slices"

	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/server/sasl"
)

// SASLConfig is ZooKeeper's SASL setup, from its system properties (or the zoo.cfg keys
// of the same names).
type SASLConfig struct {
	// JAASFile is java.security.auth.login.config; its Section (zookeeper.sasl.serverconfig,
	// "" = Server) lists the DIGEST-MD5 users. Without the section SASL is off: a
	// client's token is answered with none, as ZooKeeper without a SASL login does.
	JAASFile string
	Section  string
	// AuthProvider: an authProvider.N key names SASLAuthenticationProvider, so sasl
	// ACLs are accepted and checked.
	AuthProvider bool
	// SuperUsers (zookeeper.superUser, zookeeper.superUser.*) become super when they
	// authenticate; SuperPassword (zookeeper.SASLAuthenticationProvider.superPassword)
	// replaces the password of the JAAS file's user named "super", if it has one.
	SuperUsers    []string
	SuperPassword string
	// AllowFailedClients (zookeeper.allowSaslFailedClients) keeps the connection of a
	// client whose SASL exchange failed, unless SASL is required.
	AllowFailedClients bool
	// AnyUser (zookeeper.letAnySaslUserDoX): a sasl ACL entry naming it matches every
	// SASL user. Every member must agree on it (the ACL is checked where it is applied).
	AnyUser string
}

// EnforceAuthConfig is enforce.auth.enabled and enforce.auth.schemes, and
// sessionRequireClientSASLAuth, which stands for both with the scheme sasl.
type EnforceAuthConfig struct {
	Enabled               bool
	Schemes               []string
	RequireClientSASLAuth bool
}

// schemes are the schemes a connection must hold one of; nil when nothing is enforced.
func (e *EnforceAuthConfig) schemes() []string {
	switch {
	case e.RequireClientSASLAuth:
		return []string{"sasl"}
	case e.Enabled:
		return e.Schemes
	}
	return nil
}

// validate is ZooKeeper's AuthenticationHelper check at startup: every enforced scheme
// must be registered (ip always is; digest unless disabled; sasl with its authProvider
// key; x509 with a secure client port, port unification or its authProvider key).
func (e *EnforceAuthConfig) validate(registered func(scheme string) bool) error {
	if !e.Enabled && !e.RequireClientSASLAuth {
		return nil
	}
	if len(e.schemes()) == 0 {
		return fmt.Errorf("enforce.auth.enabled is true: enforce.auth.schemes must be configured")
	}
	for _, s := range e.schemes() {
		if !registered(s) {
			return fmt.Errorf("enforce.auth.schemes: authentication scheme %s is not available", s)
		}
	}
	return nil
}

// loadSASLUsers reads the JAAS file's server section: nil users when SASL is off.
func loadSASLUsers(c *SASLConfig) (sasl.Users, error) {
	section := c.Section
	if section == "" {
		section = sasl.DefaultSection
	}
	if c.JAASFile == "" {
		if c.Section != "" {
			return nil, fmt.Errorf("zookeeper.sasl.serverconfig is %s but no JAAS file is given (java.security.auth.login.config)", c.Section)
		}
		return nil, nil
	}
	j, err := sasl.LoadJAAS(c.JAASFile)
	if err != nil {
		return nil, err
	}
	users, found, err := j.ServerUsers(section)
	if err != nil || !found {
		return nil, err
	}
	if _, ok := users["super"]; ok && c.SuperPassword != "" {
		// ZooKeeper's callback handler looks the name up in the JAAS users first, so the
		// property replaces the password of a user_super entry and adds no user.
		users["super"] = c.SuperPassword
	}
	return users, nil
}

// saslToken answers one SASL token as ZooKeeperServer.processSasl does, at zxid 0: the next
// token of the connection's DIGEST-MD5 exchange; on success the connection gets the
// identity sasl:<user> (and super for a configured super user). A failed exchange is
// answered AuthFailed, or SessionClosedRequireSASLAuth when SASL is enforced, with an
// empty token, and the connection closed. false: the connection is done.
func (c *conn) saslToken(p *pending) bool {
	req, ok := p.req.(*jute.GetSASLRequest)
	if !ok || req.Token == nil {
		// ZooKeeper fails on a token it cannot decode, or reads a null one's length,
		// before anything else: the connection is closed without a reply.
		c.close(closedBadFrame)
		return false
	}
	users := c.srv.saslUsers
	if users == nil {
		// No SASL login: ZooKeeper's connection has no SASL server and answers OK with no token.
		c.reply(p.xid, 0, jute.OK, &jute.SetSASLResponse{})
		return true
	}
	if c.saslExchange == nil {
		c.saslExchange = sasl.NewDigest(users)
	}
	token, err := c.saslExchange.Next(req.Token)
	switch {
	case errors.Is(err, sasl.ErrAbort):
		c.srv.log.Warn("closing connection: SASL exchange aborted", "client", c.nc.RemoteAddr().String(), "err", err)
		c.close(closedBadFrame)
		return false
	case err != nil:
		return c.saslFailed(p, err)
	}
	if c.saslExchange.Complete() {
		c.addSASLIdentity(c.saslExchange.AuthorizationID())
	}
	c.reply(p.xid, 0, jute.OK, &jute.SetSASLResponse{Token: token})
	return true
}

func (c *conn) saslFailed(p *pending, err error) bool {
	c.srv.log.Warn("client failed to SASL authenticate", "client", c.nc.RemoteAddr().String(), "err", err)
	required := slices.Contains(c.srv.cfg.EnforceAuth.schemes(), "sasl")
	if c.srv.cfg.SASL.AllowFailedClients && !required {
		c.reply(p.xid, 0, jute.OK, &jute.SetSASLResponse{})
		return true
	}
	code := jute.ErrAuthFailed
	if required {
		code = jute.ErrSessionClosedSASL
	}
	c.reply(p.xid, 0, code, &jute.SetSASLResponse{})
	c.closeAfterFlush(closedAfterReply)
	return false
}

func (c *conn) addSASLIdentity(user string) {
	c.srv.log.Info("adding SASL authorization", "session", fmt.Sprintf("0x%x", c.sessionID()), "authorizationID", user)
	next := *c.caller.Load()
	next.Ids = appendID(append([]jute.Id(nil), next.Ids...), jute.Id{Scheme: "sasl", Id: user})
	if slices.Contains(c.srv.cfg.SASL.SuperUsers, user) {
		next.Ids = appendID(next.Ids, jute.Id{Scheme: "super", Id: ""})
	}
	c.caller.Store(&next)
}

// enforced reports whether the connection may make request p under enforce.auth
// (AuthenticationHelper.enforceAuthentication): addauth and SASL always may; anything
// else needs an identity of an enforced scheme. A refused request is answered
// SessionClosedRequireSASLAuth at zxid 0 and the connection closed; the session stays
// until it expires.
func (c *conn) enforced(p *pending) bool {
	schemes := c.srv.cfg.EnforceAuth.schemes()
	if schemes == nil || p.op == jute.OpAuth || p.op == jute.OpSASL {
		return true
	}
	for _, id := range c.Caller().Ids {
		if slices.Contains(schemes, id.Scheme) {
			return true
		}
	}
	c.srv.log.Warn("closing connection: not authenticated with an enforced scheme", "client", c.nc.RemoteAddr().String(), "schemes", schemes)
	c.reply(p.xid, 0, jute.ErrSessionClosedSASL, nil)
	c.closeAfterFlush(closedAfterReply)
	return false
}
