package config

import "strings"

// FieldError is one configuration problem, named by its field path
// (targets[2].virtual_key) so a user can find it in the file.
type FieldError struct {
	// Path is the field, as written in the file; empty for a problem with
	// the file as a whole (not YAML, a simulator config).
	Path string
	Msg  string
	// Line and Column are where in the file the problem is (1-based).
	// Zero: the field is not in the file (a default, a missing key).
	Line, Column int
	// follows is the path of the error this one follows from (a price no
	// target reads because a target's virtual_key names no provider): it
	// is listed right after that one, cause first, wherever it is in the
	// file. Empty: it stands alone.
	follows string
}

func (e FieldError) Error() string {
	if e.Path == "" {
		return e.Msg
	}
	return e.Path + ": " + e.Msg
}

// FieldErrors is every problem found, in file order: by line and column,
// then problems about fields the file does not write, each group in the
// order Validate checks them (which is deterministic). A problem that
// follows from another comes right after it, cause first.
type FieldErrors []FieldError

func (es FieldErrors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// causesFirst moves every error that follows from another right after
// that one (and after those already moved there), keeping the order of
// the rest. One whose cause is not in es stays where it is.
func causesFirst(es FieldErrors) FieldErrors {
	present := map[string]bool{}
	for _, e := range es {
		if e.follows == "" {
			present[e.Path] = true
		}
	}
	followers := map[string]FieldErrors{}
	out := make(FieldErrors, 0, len(es))
	for _, e := range es {
		if e.follows != "" && present[e.follows] {
			followers[e.follows] = append(followers[e.follows], e)
			continue
		}
		out = append(out, e)
	}
	if len(followers) == 0 {
		return es
	}
	sorted := make(FieldErrors, 0, len(es))
	for _, e := range out {
		sorted = append(sorted, e)
		if e.follows == "" {
			sorted = append(sorted, followers[e.Path]...)
			delete(followers, e.Path) // two errors at one path: after the first
		}
	}
	return sorted
}
