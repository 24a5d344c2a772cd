package config

import (
	"fmt"
	"strconv"
	"strings"
)

// Config errors go to the log and into the 422 body of POST /admin/reload,
// and a value written in the wrong place may be a credential: a key pasted
// as a virtual_key or a base_url, a line that lost its colon
// ("api_key sk-..."), a whole file that is nothing but a key, a ${VAR}
// that held one. So errors never repeat a value the file (or its
// environment) wrote:
//
//   - a value of the wrong type (a string where a number, a duration, a
//     list or a mapping belongs, the whole file not a mapping) is named by
//     its kind only ("a string", "a number"): the path and line say where
//     it is, and the message what to write instead;
//   - a name the checks quote because its spelling is the point (an
//     unknown key, provider, kind, mode, level or format, an address or URL
//     that does not parse, a service) is quoted only when it looks like a
//     name (quoteName).

// quoteName quotes s for an error about it when it looks like a name, and
// otherwise says only how long it is. A name here is at most 40 bytes of
// printable ASCII, holds no run of 16 or more letters and digits that mixes
// the two (a random token), and no word of it starts as provider and cloud
// credentials do.
func quoteName(s string) string {
	if looksLikeName(s) {
		return strconv.Quote(s)
	}
	return fmt.Sprintf("(%d characters, not repeated: it may be a credential)", len(s))
}

// credentialPrefixes are how provider and cloud credentials begin.
var credentialPrefixes = []string{"sk-", "sk_", "gsk_", "xai-", "pk-", "rk-", "akia", "asia", "ghp_", "gho_", "github_pat_", "hf_", "glpat-", "eyj", "bearer"}

func looksLikeName(s string) bool {
	if len(s) > 40 {
		return false
	}
	run, letters, digits := 0, false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c > 0x7e {
			return false
		}
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
			run, letters = run+1, true
		case '0' <= c && c <= '9':
			run, digits = run+1, true
		default:
			run, letters, digits = 0, false, false
		}
		if run >= 16 && letters && digits {
			return false
		}
	}
	for _, word := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return strings.ContainsRune(" \t:=,;/@\"'", r) }) {
		for _, p := range credentialPrefixes {
			if strings.HasPrefix(word, p) {
				return false
			}
		}
	}
	return true
}
