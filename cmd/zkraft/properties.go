package main

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// property is one entry of a Java properties file and the line it starts on.
type property struct {
	line       int
	key, value string
}

// readProperties reads r as java.util.Properties.load does, which is how ZooKeeper
// reads zoo.cfg: a line ending in an odd number of backslashes goes on on the next
// line; the key ends at the first unescaped '=', ':' or blank, and one '=' or ':' with
// blanks around it separates it from the value ("tickTime 2000" and a bare key are
// entries too); \t, \n, \r, \f and \uXXXX are escapes and any other escaped character
// stands for itself. A key given twice keeps its first place and its last value, as the
// Hashtable behind Properties keeps one value per key.
func readProperties(r io.Reader) ([]property, error) {
	sc := bufio.NewScanner(r)
	var (
		props   []property
		at      = map[string]int{}
		logical strings.Builder
		first   int
	)
	add := func() error {
		p, err := splitProperty(logical.String())
		logical.Reset()
		if err != nil {
			return fmt.Errorf("line %d: %v", first, err)
		}
		p.line = first
		if i, ok := at[p.key]; ok {
			props[i].value = p.value
			return nil
		}
		at[p.key] = len(props)
		props = append(props, p)
		return nil
	}
	for n := 1; sc.Scan(); n++ {
		s := strings.TrimLeft(sc.Text(), " \t\f")
		if logical.Len() == 0 {
			if s == "" || s[0] == '#' || s[0] == '!' {
				continue
			}
			first = n
		}
		if trailingBackslashes(s)%2 == 1 {
			logical.WriteString(s[:len(s)-1])
			continue
		}
		logical.WriteString(s)
		if err := add(); err != nil {
			return nil, err
		}
	}
	if logical.Len() > 0 {
		if err := add(); err != nil {
			return nil, err
		}
	}
	return props, sc.Err()
}

func trailingBackslashes(s string) int {
	n := 0
	for n < len(s) && s[len(s)-1-n] == '\\' {
		n++
	}
	return n
}

// splitProperty splits one logical line into its unescaped key and value.
func splitProperty(s string) (property, error) {
	end := len(s)
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			i++
			continue
		}
		if strings.IndexByte("=: \t\f", s[i]) >= 0 {
			end = i
			break
		}
	}
	rest := strings.TrimLeft(s[end:], " \t\f")
	if rest != "" && (rest[0] == '=' || rest[0] == ':') {
		rest = strings.TrimLeft(rest[1:], " \t\f")
	}
	key, err := unescape(s[:end])
	if err != nil {
		return property{}, err
	}
	value, err := unescape(rest)
	return property{key: key, value: value}, err
}

func unescape(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch c := s[i]; c {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			if i+5 > len(s) {
				return "", fmt.Errorf("malformed \\uxxxx encoding in %q", s)
			}
			r, err := strconv.ParseUint(s[i+1:i+5], 16, 16)
			if err != nil {
				return "", fmt.Errorf("malformed \\uxxxx encoding in %q", s)
			}
			b.WriteRune(rune(r))
			i += 4
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}
