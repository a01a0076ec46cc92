package tlsconf

import (
	"crypto/x509"
	"encoding/asn1"
	"encoding/hex"
	"strings"
	"unicode/utf16"
)

// SubjectName is the certificate subject as Java's X500Principal.getName() prints it
// (RFC 2253): the x509 identity ZooKeeper's X509AuthenticationProvider gives a client.
// RDNs last to first joined by ",", the values of one RDN in their order joined by "+",
// RFC 2253's keywords (CN, C, L, ST, O, OU, STREET, DC, UID) and dotted OIDs for other
// attributes, whose value is printed as "#" and the hex of its DER encoding, as is a
// value that is not a string.
func SubjectName(cert *x509.Certificate) string {
	rdns, ok := rawAttributes(cert.RawSubject)
	if !ok {
		return cert.Subject.String()
	}
	parts := make([]string, 0, len(rdns))
	for i := len(rdns) - 1; i >= 0; i-- {
		avas := make([]string, 0, len(rdns[i]))
		for _, a := range rdns[i] {
			avas = append(avas, formatAVA(a.Type, a.Value))
		}
		parts = append(parts, strings.Join(avas, "+"))
	}
	return strings.Join(parts, ",")
}

// rfc2253Keywords are the attribute names Java prints in RFC 2253 form.
var rfc2253Keywords = map[string]string{
	"2.5.4.3":                    "CN",
	"2.5.4.6":                    "C",
	"2.5.4.7":                    "L",
	"2.5.4.8":                    "ST",
	"2.5.4.10":                   "O",
	"2.5.4.11":                   "OU",
	"2.5.4.9":                    "STREET",
	"0.9.2342.19200300.100.1.25": "DC",
	"0.9.2342.19200300.100.1.1":  "UID",
}

// attribute is one AttributeTypeAndValue with its value kept raw.
type attribute struct {
	Type  asn1.ObjectIdentifier
	Value asn1.RawValue
}

// rawAttributes decodes a Name (a sequence of sets of attributes) keeping each
// value's tag and bytes.
func rawAttributes(der []byte) ([][]attribute, bool) {
	var seq []asn1.RawValue
	if rest, err := asn1.Unmarshal(der, &seq); err != nil || len(rest) > 0 {
		return nil, false
	}
	out := make([][]attribute, len(seq))
	for i, set := range seq {
		for rest := set.Bytes; len(rest) > 0; {
			var a attribute
			var err error
			if rest, err = asn1.Unmarshal(rest, &a); err != nil {
				return nil, false
			}
			out[i] = append(out[i], a)
		}
	}
	return out, true
}

func formatAVA(oid asn1.ObjectIdentifier, v asn1.RawValue) string {
	kw, known := rfc2253Keywords[oid.String()]
	if !known {
		kw = oid.String()
	}
	s, isString := derString(v)
	if !known || !isString {
		return kw + "=#" + hex.EncodeToString(v.FullBytes)
	}
	return kw + "=" + escapeValue(s)
}

// derString decodes the string types Java's AVA prints as text.
func derString(v asn1.RawValue) (string, bool) {
	if v.Class != asn1.ClassUniversal {
		return "", false
	}
	switch v.Tag {
	case asn1.TagUTF8String, asn1.TagPrintableString, asn1.TagIA5String, 27: // 27: GeneralString
		return string(v.Bytes), true
	case asn1.TagT61String:
		r := make([]rune, len(v.Bytes)) // ISO-8859-1, as Java reads it
		for i, b := range v.Bytes {
			r[i] = rune(b)
		}
		return string(r), true
	case asn1.TagBMPString:
		if len(v.Bytes)%2 != 0 {
			return "", false
		}
		u := make([]uint16, len(v.Bytes)/2)
		for i := range u {
			u[i] = uint16(v.Bytes[2*i])<<8 | uint16(v.Bytes[2*i+1])
		}
		return string(utf16.Decode(u)), true
	}
	return "", false
}

// escapeValue escapes as Java's AVA.toRFC2253String: a backslash before each of
// ,=+<>#;"\ and before leading and trailing spaces and carriage returns.
func escapeValue(s string) string {
	var b strings.Builder
	for _, c := range s {
		if strings.ContainsRune(`,=+<>#;"\`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	r := []rune(b.String())
	lead, trail := 0, len(r)-1
	for lead < len(r) && (r[lead] == ' ' || r[lead] == '\r') {
		lead++
	}
	for trail >= 0 && (r[trail] == ' ' || r[trail] == '\r') {
		trail--
	}
	var out strings.Builder
	for i, c := range r {
		if i < lead || i > trail {
			out.WriteByte('\\')
		}
		out.WriteRune(c)
	}
	return out.String()
}
