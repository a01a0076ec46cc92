package datatree

import (
	"strings"
	"unicode/utf8"

	"github.com/zkraft/zkraft/jute"
)

// ValidatePath is PathUtils.validatePath: jute.ErrBadArguments for an empty or relative
// path, a trailing slash, an empty name, "." or ".." names, NUL, and the characters
// ZooKeeper refuses (controls, U+007F-U+009F, U+D800-U+F8FF, U+FFF0-U+FFFF, and
// anything outside the BMP, which Java sees as surrogates). Invalid UTF-8 decodes to
// U+FFFD in Java as in Go, and is refused the same way.
func ValidatePath(path string) jute.Code {
	if !validPath(path) {
		return jute.ErrBadArguments
	}
	return jute.OK
}

func validPath(path string) bool {
	if path == "" || path[0] != '/' {
		return false
	}
	if len(path) == 1 {
		return true
	}
	if path[len(path)-1] == '/' {
		return false
	}
	for i := 1; i < len(path); {
		c := path[i]
		prev := path[i-1]
		switch {
		case c == 0:
			return false
		case c == '/' && prev == '/':
			return false
		case c == '.':
			// A name that is exactly "." or ".." (ASCII bytes never occur inside a
			// multi-byte UTF-8 sequence, so byte tests are exact here).
			end := i+1 == len(path) || path[i+1] == '/'
			if end && (prev == '/' || (prev == '.' && i >= 2 && path[i-2] == '/')) {
				return false
			}
		}
		if c < utf8.RuneSelf {
			if c <= 0x1f || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(path[i:])
		if r <= 0x9f || (r >= 0xd800 && r <= 0xf8ff) || r >= 0xfff0 {
			return false
		}
		i += size
	}
	return true
}

// splitParent is what PrepRequestProcessor does with lastIndexOf('/'): the parent is
// everything before the last slash ("" stands for the root, as ZooKeeper's node map
// aliases it) and ok is false when there is no slash or there is a NUL.
func splitParent(path string) (parent, name string, ok bool) {
	i := strings.LastIndexByte(path, '/')
	if i < 0 || strings.IndexByte(path, 0) >= 0 {
		return "", "", false
	}
	return path[:i], path[i+1:], true
}

// eventParent is the path a NodeChildrenChanged event carries for a parent.
func eventParent(parent string) string {
	if parent == "" {
		return "/"
	}
	return parent
}

// special paths cannot be deleted (DataTree.isSpecialPath).
func isSpecialPath(path string) bool {
	switch path {
	case "/", "/zookeeper", "/zookeeper/quota", "/zookeeper/config":
		return true
	}
	return false
}

// javaLen is String.length(): UTF-16 code units, which approximateDataSize counts.
func javaLen(s string) int64 {
	n := int64(0)
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r > 0xffff {
			n += 2
		} else {
			n++
		}
		i += size
	}
	return n
}
