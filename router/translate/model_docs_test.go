package translate

import (
	"os"
	"strings"
	"testing"
)

// docs/translation-upstreams.md tables the finish reasons from finishWords:
// each row must say what the table says, so the page cannot drift.
func TestFinishTableDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/translation-upstreams.md")
	must(t, err)
	_, table, ok := strings.Cut(string(doc), "<!-- finish-table -->")
	table, _, ok2 := strings.Cut(table, "<!-- /finish-table -->")
	if !ok || !ok2 {
		t.Fatal("the finish table's markers are missing")
	}
	rows := strings.Split(strings.TrimSpace(table), "\n")[2:]
	if len(rows) != len(finishWords) {
		t.Fatalf("%d rows documented, %d in finishWords", len(rows), len(finishWords))
	}
	cell := func(w string) string {
		if w == "" {
			return "(completed)"
		}
		return "`" + w + "`"
	}
	for i, w := range finishWords {
		want := []string{cell(w.chat), cell(w.messages), cell(w.responses), cell(w.converse), cell(w.gemini)}
		got := strings.Split(strings.Trim(rows[i], "| "), " | ")[1:]
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("row %d says %v, finishWords %v", i, got, want)
		}
	}
}
