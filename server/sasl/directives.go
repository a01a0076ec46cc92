package sasl

import "strings"

// directives are a token's name=value pairs, names in lower case.
type directives map[string][]byte

// known are the directives of a digest response; others (auth-param) are ignored.
var known = map[string]bool{
	"username": true, "realm": true, "nonce": true, "cnonce": true, "nc": true, "qop": true,
	"digest-uri": true, "response": true, "maxbuf": true, "charset": true, "cipher": true, "authzid": true,
}

func isLWS(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// parseDirectives reads a digest response (RFC 2831 2.1.2: a comma-separated list of
// name=value and name="quoted\"value", around linear white space) with Java's
// leniency: empty elements are skipped, white space also separates elements. A known
// directive given twice is an error.
func parseDirectives(b []byte) (directives, error) {
	out := directives{}
	i := skipLWS(b, 0)
	for i < len(b) {
		if b[i] == ',' || isLWS(b[i]) {
			i++
			continue
		}
		start := i
		for i < len(b) && b[i] != '=' && b[i] != ',' && !isLWS(b[i]) {
			i++
		}
		key := strings.ToLower(string(b[start:i]))
		i = skipLWS(b, i)
		if i >= len(b) || b[i] != '=' {
			return nil, failed("'=' expected after directive %q", key)
		}
		if key == "" {
			return nil, failed("empty directive name")
		}
		i = skipLWS(b, i+1)
		if i >= len(b) {
			return nil, failed("directive %q has no value", key)
		}
		var val []byte
		var err error
		if b[i] == '"' {
			val, i, err = quotedValue(b, i+1, key)
		} else {
			val, i = plainValue(b, i)
		}
		if err != nil {
			return nil, err
		}
		if known[key] {
			if _, dup := out[key]; dup {
				return nil, failed("more than one %s directive", key)
			}
			out[key] = val
		}
	}
	return out, nil
}

func skipLWS(b []byte, i int) int {
	for i < len(b) && isLWS(b[i]) {
		i++
	}
	return i
}

// quotedValue reads up to the closing quote, "\c" standing for c; a separator (white
// space, ',' or the end) must follow it.
func quotedValue(b []byte, i int, key string) ([]byte, int, error) {
	val := []byte{}
	for ; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
			if i >= len(b) {
				return nil, i, failed("unmatched quote in directive %q", key)
			}
			val = append(val, b[i])
		case '"':
			i++
			if i < len(b) && b[i] != ',' && !isLWS(b[i]) {
				return nil, i, failed("expecting ',' or white space after the quoted value of %q", key)
			}
			return val, i, nil
		default:
			val = append(val, b[i])
		}
	}
	return nil, i, failed("unmatched quote in directive %q", key)
}

// plainValue reads up to white space or ','.
func plainValue(b []byte, i int) ([]byte, int) {
	start := i
	for i < len(b) && b[i] != ',' && !isLWS(b[i]) {
		i++
	}
	return append([]byte{}, b[start:i]...), i
}
