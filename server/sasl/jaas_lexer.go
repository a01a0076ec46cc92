package sasl

import (
	"fmt"
	"strings"
)

type tokKind int

const (
	tokEOF tokKind = iota
	tokWord
	tokQuoted
	tokChar // any other single character: { } ; = and the ones that are errors
)

type token struct {
	kind tokKind
	text string
}

func (t token) is(c byte) bool { return t.kind == tokChar && t.text == string(c) }

func (t token) String() string {
	switch t.kind {
	case tokEOF:
		return "end of file"
	case tokQuoted:
		return fmt.Sprintf("%q", t.text)
	}
	return "'" + t.text + "'"
}

// lexer splits a JAAS file into tokens as Java's StreamTokenizer set up by its JAAS
// reader does: words of letters, digits and . - _ $ * (and any non-ASCII byte),
// double-quoted strings, comments skipped; a token that starts with a digit, '.' or '-'
// is a number there, which no place of the grammar takes.
type lexer struct {
	src  string
	pos  int
	line int
}

func (l *lexer) errorf(format string, args ...any) error {
	return fmt.Errorf("line %d: %s", l.line, fmt.Sprintf(format, args...))
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c >= 0x80 || strings.IndexByte(".-_$*", c) >= 0
}

func (l *lexer) next() (token, error) {
	if err := l.skipSpaceAndComments(); err != nil {
		return token{}, err
	}
	if l.pos >= len(l.src) {
		return token{kind: tokEOF}, nil
	}
	c := l.src[l.pos]
	switch {
	case c == '"':
		return l.quoted()
	case c == '\'':
		return token{}, l.errorf("single-quoted strings are not allowed; use double quotes")
	case c >= '0' && c <= '9' || c == '.' || c == '-':
		return token{}, l.errorf("a word or quoted string may not start with %q (Java reads a number there); quote it", c)
	case isWordByte(c):
		start := l.pos
		for l.pos < len(l.src) && isWordByte(l.src[l.pos]) {
			l.pos++
		}
		return token{kind: tokWord, text: l.src[start:l.pos]}, nil
	}
	l.pos++
	return token{kind: tokChar, text: string(c)}, nil
}

func (l *lexer) skipSpaceAndComments() error {
	for l.pos < len(l.src) {
		c := l.src[l.pos]
		switch {
		case c == '\n':
			l.line++
			l.pos++
		case c <= ' ':
			l.pos++
		case strings.HasPrefix(l.src[l.pos:], "/*"):
			end := strings.Index(l.src[l.pos+2:], "*/")
			if end < 0 {
				return l.errorf("unterminated /* comment")
			}
			l.line += strings.Count(l.src[l.pos:l.pos+2+end], "\n")
			l.pos += end + 4
		case c == '/':
			// "//" and, as in Java's tokenizer, a lone '/' start a comment to the end of the line.
			for l.pos < len(l.src) && l.src[l.pos] != '\n' {
				l.pos++
			}
		default:
			return nil
		}
	}
	return nil
}

// quoted reads a double-quoted string with Java's escapes: \n \t \b \f \r \a \v, octal
// \ooo, and \c for any other c. It may not span lines.
func (l *lexer) quoted() (token, error) {
	var b strings.Builder
	l.pos++ // opening quote
	for l.pos < len(l.src) {
		c := l.src[l.pos]
		l.pos++
		switch c {
		case '"':
			return token{kind: tokQuoted, text: b.String()}, nil
		case '\n', '\r':
			return token{}, l.errorf("quoted string not closed on its line")
		case '\\':
			if l.pos >= len(l.src) {
				return token{}, l.errorf("quoted string not closed")
			}
			l.escape(&b)
		default:
			b.WriteByte(c)
		}
	}
	return token{}, l.errorf("quoted string not closed")
}

func (l *lexer) escape(b *strings.Builder) {
	c := l.src[l.pos]
	l.pos++
	if r := strings.IndexByte("ntbfrav", c); r >= 0 {
		b.WriteByte("\n\t\b\f\r\a\v"[r])
		return
	}
	if c < '0' || c > '7' {
		b.WriteByte(c)
		return
	}
	// Up to three octal digits, the first at most 3 when there are three (Java's rule).
	v, max := int(c-'0'), 2
	if c > '3' {
		max = 1
	}
	for i := 0; i < max && l.pos < len(l.src) && l.src[l.pos] >= '0' && l.src[l.pos] <= '7'; i++ {
		v = v*8 + int(l.src[l.pos]-'0')
		l.pos++
	}
	b.WriteRune(rune(v))
}
