package datatree

import (
	"testing"

	"github.com/zkraft/zkraft/jute"
)

// TestX500NameValid: the ids ZooKeeper 3.8's X509AuthenticationProvider.isValid (new
// X500Principal(id)) accepts and refuses, as observed in TestX509ACLMatchesZooKeeper.
func TestX500NameValid(t *testing.T) {
	for id, want := range map[string]bool{
		"garbage": false, "CN=": true, "CN=a,,O=b": false, "FOO=bar": false, "2.5.4.3=x": true,
		"OID.2.5.4.3=x": true, `CN="quoted, value"`: true, "CN=#0403616263": true, "CN=#abc": false,
		`CN=a\`: false, "cn=lower, o=spaced": true, "CN=a;O=b": true, "CN=a+OU=b": true, "": true,
		"CN=client1,O=zkraft": true, `CN=Smith\, John,C=NZ`: true,
	} {
		if got := x500NameValid(id); got != want {
			t.Errorf("x500NameValid(%q) = %v, want %v", id, got, want)
		}
	}
}

// TestX509SchemeRegistered: without Options.X509 an x509 ACL is invalid and never
// matches; with it, it matches the caller's x509 id exactly.
func TestX509SchemeRegistered(t *testing.T) {
	acl := []jute.ACL{{Perms: jute.PermAll, Id: jute.Id{Scheme: "x509", Id: "CN=a,O=b"}}}
	caller := Caller{Ids: []jute.Id{{Scheme: "ip", Id: "127.0.0.1"}, {Scheme: "x509", Id: "CN=a,O=b"}}}
	if _, code := (Options{}).fixupACL(acl, caller); code != jute.ErrInvalidACL {
		t.Errorf("unregistered: fixup %v", code)
	}
	if (Options{}).Permitted(acl, jute.PermRead, caller) {
		t.Error("unregistered: an x509 ACL matched")
	}
	on := Options{X509: true}
	if _, code := on.fixupACL(acl, caller); code != jute.OK {
		t.Errorf("registered: fixup %v", code)
	}
	if !on.Permitted(acl, jute.PermRead, caller) {
		t.Error("registered: the x509 id did not match")
	}
	other := Caller{Ids: []jute.Id{{Scheme: "x509", Id: "CN=a, O=b"}}}
	if on.Permitted(acl, jute.PermRead, other) {
		t.Error("a differently spelled name matched")
	}
	auth, code := on.fixupACL([]jute.ACL{{Perms: jute.PermRead, Id: jute.Id{Scheme: "auth"}}}, caller)
	if code != jute.OK || len(auth) != 1 || auth[0].Id != caller.Ids[1] {
		t.Errorf("auth: %v %v", auth, code)
	}
}
