package jute

import "unicode/utf8"

// JavaString is what Java makes of b with new String(b, UTF_8), as UTF-8 again: b itself
// when it is valid UTF-8, else b with each malformed sequence replaced by U+FFFD, cut
// where Java's decoder (String.decodeUTF8_UTF16) cuts it. ZooKeeper reads every jute
// string so (BinaryInputArchive.readString), and a digest addauth's bytes too, so a
// path, an ACL id or a digest user that is not UTF-8 reads here as it does there.
func JavaString(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	const repl = "\uFFFD"
	cont := func(i int) bool { return i < len(b) && b[i]&0xc0 == 0x80 }
	out := make([]byte, 0, 3*len(b)) // each byte at most one U+FFFD
	for i := 0; i < len(b); {
		b1 := b[i]
		switch {
		case b1 < 0x80:
			out = append(out, b1)
			i++
		case b1 >= 0xc2 && b1 <= 0xdf: // two bytes
			if cont(i + 1) {
				out = append(out, b[i:i+2]...)
				i += 2
			} else {
				out = append(out, repl...)
				i++
			}
		case b1 >= 0xe0 && b1 <= 0xef: // three bytes
			// The second byte is bad when it is no continuation, or makes an overlong form.
			bad2 := !cont(i+1) || (b1 == 0xe0 && b[i+1] < 0xa0)
			switch {
			case i+2 < len(b) && !bad2 && cont(i+2):
				if b1 == 0xed && b[i+1] >= 0xa0 { // a surrogate: one malformed sequence
					out = append(out, repl...)
				} else {
					out = append(out, b[i:i+3]...)
				}
				i += 3
			case i+2 < len(b):
				out = append(out, repl...)
				if bad2 {
					i++
				} else {
					i += 2
				}
			case i+1 < len(b) && bad2:
				out = append(out, repl...)
				i++
			default: // cut short at the end: the rest is one malformed sequence
				out = append(out, repl...)
				i = len(b)
			}
		case b1 >= 0xf0 && b1 <= 0xf7: // four bytes
			bad2 := b1 > 0xf4 || !cont(i+1) || (b1 == 0xf0 && b[i+1] < 0x90) || (b1 == 0xf4 && b[i+1] > 0x8f)
			switch {
			case i+3 < len(b) && !bad2 && cont(i+2) && cont(i+3):
				out = append(out, b[i:i+4]...)
				i += 4
			case i+3 < len(b):
				out = append(out, repl...)
				switch {
				case bad2:
					i++
				case !cont(i + 2):
					i += 2
				default:
					i += 3
				}
			case bad2 && (b1 > 0xf4 || i+1 < len(b)):
				out = append(out, repl...)
				i++
			case i+2 < len(b) && !cont(i+2):
				out = append(out, repl...)
				i += 2
			default:
				out = append(out, repl...)
				i = len(b)
			}
		default: // a continuation byte, C0, C1, F8 to FF
			out = append(out, repl...)
			i++
		}
	}
	return string(out)
}
