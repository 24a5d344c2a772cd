package config

import (
	"fmt"
	"strings"
)

// suggest returns the candidate closest to what the user wrote, for a
// "did you mean" hint, or "" when none is close enough to be a typo.
//
// Close enough: the same once case and '-'/'_' are ignored (maxBody,
// first-byte), one a prefix of the other (warning → warn), or an edit
// distance (insertions, deletions, substitutions and swaps of neighbours)
// of at most 2, and at most a third of the longer word, so short words
// only match near-exactly. Ties go to the earlier candidate, so callers
// pass candidates in a stable order.
func suggest(got string, candidates []string) string {
	if got == "" {
		return ""
	}
	norm := func(s string) string {
		return strings.NewReplacer("_", "", "-", "").Replace(strings.ToLower(s))
	}
	g := norm(got)
	for _, c := range candidates {
		if c != got && norm(c) == g {
			return c
		}
	}
	best, bestD := "", 3
	for _, c := range candidates {
		if c == got {
			continue
		}
		n := norm(c)
		if len(g) >= 3 && len(n) >= 3 && (strings.HasPrefix(n, g) || strings.HasPrefix(g, n)) {
			return c
		}
		d := editDistance(g, n)
		if limit := max(len(g), len(n)) / 3; d > limit {
			continue
		}
		if d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// didYouMean is suggest as a message suffix: ` (did you mean "x"?)` or "".
func didYouMean(got string, candidates []string) string {
	if s := suggest(got, candidates); s != "" {
		return fmt.Sprintf(" (did you mean %q?)", s)
	}
	return ""
}

// editDistance is the optimal-string-alignment distance between a and b:
// the Levenshtein distance where swapping two neighbours costs 1, so
// "timeuot" is one edit from "timeout".
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// d[i][j] is the distance between ra[:i] and rb[:j]; three rows suffice.
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
