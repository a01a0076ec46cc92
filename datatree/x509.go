package datatree

import (
	"strings"
)

// x509Provider is ZooKeeper's X509AuthenticationProvider as the tree sees it: an id is
// the subject's X.500 name as the client's certificate gave it at connect, an ACL entry
// matches it exactly (the super user holds a "super" id, which passes every check), and
// an ACL id is valid if Java's X500Principal would parse it.
var x509Provider = provider{authenticated: true, valid: x500NameValid, matches: func(id, e string) bool { return id == e }}

// x500Keywords are the attribute keywords Java's X500Principal parses (AVAKeyword).
var x500Keywords = map[string]bool{
	"CN": true, "C": true, "L": true, "S": true, "ST": true, "O": true, "OU": true, "T": true,
	"IP": true, "STREET": true, "DC": true, "DNQUALIFIER": true, "DNQ": true, "SURNAME": true,
	"GIVENNAME": true, "INITIALS": true, "GENERATION": true, "EMAIL": true, "EMAILADDRESS": true,
	"UID": true, "SERIALNUMBER": true,
}

// x500NameValid approximates new X500Principal(name) succeeding: RFC 2253 or 1779
// syntax, RDNs split on ',' or ';', values of one RDN on '+', each "keyword=value"
// with a known keyword or an OID ("2.5.4.3" or "OID.2.5.4.3"), a value that is a
// quoted string, '#' and an even number of hex digits, or text whose backslashes each
// escape something. The empty name is valid.
func x500NameValid(name string) bool {
	if strings.TrimSpace(name) == "" {
		return true
	}
	rdns, ok := splitUnescaped(name, ",;")
	if !ok {
		return false
	}
	for _, rdn := range rdns {
		avas, _ := splitUnescaped(rdn, "+")
		for _, ava := range avas {
			if !avaValid(ava) {
				return false
			}
		}
	}
	return true
}

// splitUnescaped splits s at any of seps outside quotes and not after a backslash;
// false if a quote is left open or s ends in a lone backslash.
func splitUnescaped(s, seps string) ([]string, bool) {
	var parts []string
	start, quoted := 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			if i+1 >= len(s) {
				return nil, false
			}
			i++
		case c == '"':
			quoted = !quoted
		case !quoted && strings.IndexByte(seps, c) >= 0:
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:]), !quoted
}

func avaValid(ava string) bool {
	kw, value, ok := strings.Cut(ava, "=")
	if !ok {
		return false
	}
	kw = strings.ToUpper(strings.TrimSpace(kw))
	if !x500Keywords[kw] && !oidValid(strings.TrimPrefix(kw, "OID.")) {
		return false
	}
	value = strings.TrimSpace(value)
	if hexv, ok := strings.CutPrefix(value, "#"); ok {
		if len(hexv) == 0 || len(hexv)%2 != 0 {
			return false
		}
		for _, c := range hexv {
			if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
				return false
			}
		}
	}
	return true
}

func oidValid(s string) bool {
	parts := strings.Split(s, ".")
	if len(parts) < 2 {
		return false
	}
	for _, p := range parts {
		if p == "" || strings.Trim(p, "0123456789") != "" {
			return false
		}
	}
	return true
}
