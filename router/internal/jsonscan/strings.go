package jsonscan

import (
	"bytes"
	"unicode/utf16"
	"unicode/utf8"
)

// AppendString appends s as a JSON string token. Invalid UTF-8 becomes
// U+FFFD, so the result is valid JSON whatever s holds; control characters
// are escaped, the common ones by their short form.
func AppendString[T string | []byte](dst []byte, s T) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
			if r != utf8.RuneError || size != 1 {
				i += size
				continue
			}
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// Unquote returns what the valid string token tok holds, as encoding/json
// decodes it. The common token, without escapes and in valid UTF-8, costs
// one check and the string's copy.
func Unquote(tok []byte) string {
	inner := tok[1 : len(tok)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner)
	}
	return string(AppendUnquoted(nil, tok))
}

// AppendUnquoted appends the decoded contents of the valid string token
// tok. Invalid UTF-8 and lone surrogates become U+FFFD, as with
// encoding/json.
func AppendUnquoted(dst, tok []byte) []byte {
	s := tok[1 : len(tok)-1]
	for i := 0; i < len(s); {
		c := s[i]
		if c == '\\' {
			i++
			switch s[i] {
			case 'b':
				dst = append(dst, '\b')
			case 'f':
				dst = append(dst, '\f')
			case 'n':
				dst = append(dst, '\n')
			case 'r':
				dst = append(dst, '\r')
			case 't':
				dst = append(dst, '\t')
			case 'u':
				r := rune(hex4(s[i+1:]))
				i += 4 // on the escape's last digit
				if utf16.IsSurrogate(r) {
					// A pair is two escapes in a row; anything else leaves a lone
					// surrogate, which is not a character.
					dec := utf8.RuneError
					if i+2 < len(s) && s[i+1] == '\\' && s[i+2] == 'u' {
						dec = utf16.DecodeRune(r, rune(hex4(s[i+3:])))
					}
					if dec != utf8.RuneError {
						i += 6
					}
					r = dec
				}
				dst = utf8.AppendRune(dst, r)
			default: // '"', '\\', '/'
				dst = append(dst, s[i])
			}
			i++
			continue
		}
		if c < utf8.RuneSelf {
			dst = append(dst, c)
			i++
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = utf8.AppendRune(dst, utf8.RuneError)
		} else {
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return dst
}

func hex4(b []byte) uint16 {
	var n uint16
	for _, c := range b[:4] {
		n <<= 4
		switch {
		case c >= '0' && c <= '9':
			n |= uint16(c - '0')
		case c >= 'a' && c <= 'f':
			n |= uint16(c - 'a' + 10)
		default:
			n |= uint16(c - 'A' + 10)
		}
	}
	return n
}
