package sasl

import (
	"fmt"
	"os"
	"strings"
)

// LoginModule is one line of a JAAS section: a class, its control flag and its options.
type LoginModule struct {
	Class   string
	Flag    string // required, requisite, sufficient or optional (lower case)
	Options map[string]string
}

// JAAS is a parsed JAAS login configuration: its sections by name (case matters, as
// in Java). A section with no module is left out, as Java finds no entry for it.
type JAAS map[string][]LoginModule

// LoadJAAS reads and parses the JAAS file at path.
func LoadJAAS(path string) (JAAS, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("JAAS configuration: %v", err)
	}
	j, err := ParseJAAS(string(b))
	if err != nil {
		return nil, fmt.Errorf("JAAS configuration %s: %v", path, err)
	}
	return j, nil
}

// ParseJAAS parses the syntax Java's default JAAS configuration reader takes:
//
//	Name { class flag key="value" key=word ...; class flag ...; };
//
// with // and /* */ comments. Values are words or double-quoted strings (with
// backslash escapes); a value that starts like a number, a single-quoted string or a
// string broken over lines is an error, as in Java. The same section twice is an error;
// an option given twice keeps the last value.
func ParseJAAS(text string) (JAAS, error) {
	p := &jaasParser{lx: lexer{src: text, line: 1}}
	j := JAAS{}
	seen := map[string]bool{}
	for {
		t, err := p.lx.next()
		if err != nil {
			return nil, err
		}
		if t.kind == tokEOF {
			return j, nil
		}
		if t.kind != tokWord && t.kind != tokQuoted {
			return nil, p.lx.errorf("expected a section name, found %s", t)
		}
		if seen[t.text] {
			return nil, fmt.Errorf("section %s is given more than once", t.text)
		}
		seen[t.text] = true
		mods, err := p.section()
		if err != nil {
			return nil, err
		}
		if len(mods) > 0 {
			j[t.text] = mods
		}
	}
}

type jaasParser struct{ lx lexer }

// section reads "{ module* } ;" after a section name.
func (p *jaasParser) section() ([]LoginModule, error) {
	if err := p.expect('{'); err != nil {
		return nil, err
	}
	var mods []LoginModule
	for {
		t, err := p.lx.next()
		if err != nil {
			return nil, err
		}
		if t.is('}') {
			return mods, p.expect(';')
		}
		if t.kind != tokWord {
			return nil, p.lx.errorf("expected a login module class, found %s", t)
		}
		m, err := p.module(t.text)
		if err != nil {
			return nil, err
		}
		mods = append(mods, m)
	}
}

// module reads "flag key=value ... ;" after a module class.
func (p *jaasParser) module(class string) (LoginModule, error) {
	m := LoginModule{Class: class, Options: map[string]string{}}
	t, err := p.lx.next()
	if err != nil {
		return m, err
	}
	switch f := strings.ToLower(t.text); {
	case t.kind == tokWord && (f == "required" || f == "requisite" || f == "sufficient" || f == "optional"):
		m.Flag = f
	default:
		return m, p.lx.errorf("invalid control flag %s for %s", t, class)
	}
	for {
		t, err := p.lx.next()
		if err != nil {
			return m, err
		}
		if t.is(';') {
			return m, nil
		}
		if t.kind != tokWord {
			return m, p.lx.errorf("expected an option name or ';', found %s", t)
		}
		if err := p.expect('='); err != nil {
			return m, err
		}
		v, err := p.lx.next()
		if err != nil {
			return m, err
		}
		if v.kind != tokWord && v.kind != tokQuoted {
			return m, p.lx.errorf("expected a value for option %s, found %s", t.text, v)
		}
		m.Options[t.text] = v.text
	}
}

func (p *jaasParser) expect(c byte) error {
	t, err := p.lx.next()
	if err != nil {
		return err
	}
	if !t.is(c) {
		return p.lx.errorf("expected '%c', found %s", c, t)
	}
	return nil
}
