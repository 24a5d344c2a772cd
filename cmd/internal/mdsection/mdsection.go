// Package mdsection rewrites the generated section of a Markdown file that
// is otherwise written by people: the section lies between a begin and an
// end marker line, and everything outside them is left alone.
package mdsection

import (
	"bytes"
	"errors"
	"os"
	"slices"
)

// Replace writes, in the file at path, begin, a blank line, content and
// end in place of the section between begin and end (markers included).
// content is written as it is: end it with a newline. A file without the
// markers gets the section appended after a blank line; a missing or empty
// file is created as title, a blank line and the section.
func Replace(path, title, begin, end, content string) error {
	section := []byte(begin + "\n\n" + content + end)
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	var out []byte
	i, j := bytes.Index(old, []byte(begin)), bytes.Index(old, []byte(end))
	switch {
	case i >= 0 && j > i:
		out = slices.Concat(old[:i], section, old[j+len(end):])
	case len(old) == 0:
		out = slices.Concat([]byte(title+"\n\n"), section, []byte("\n"))
	default:
		out = slices.Concat(bytes.TrimRight(old, "\n"), []byte("\n\n"), section, []byte("\n"))
	}
	return os.WriteFile(path, out, 0o644)
}
