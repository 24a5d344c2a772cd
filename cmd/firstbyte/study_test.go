package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestStudyCommandWritesReportAndCharts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "study")
	doc := filepath.Join(dir, "routing-study.md")
	const before, after = "# Routing study\n\nWritten by people.\n\n", "\n\nAlso written by people.\n"
	if err := os.WriteFile(doc, []byte(before+studyBegin+"\nstale\n"+studyEnd+after), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCmd("study", "-out", out, "-markdown", doc, "-scenarios", "a,d-breaker",
		"-modes", "least-latency,fallback", "-duration", "3s", "-seed", "4")
	if code != 0 {
		t.Fatalf("study: exit %d\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "(a) least-latency: leader share") || !strings.Contains(stdout, "goals met") {
		t.Errorf("study printed no goals:\n%s", stdout)
	}
	for _, name := range []string{"README.md", "ratio-to-oracle.png", "first-picks-d-breaker.png"} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Errorf("study wrote no %s: %v", name, err)
		}
	}
	report, _ := os.ReadFile(filepath.Join(out, "README.md"))
	for _, want := range []string{"`firstbyte study -seed 4 -duration 3s -scenarios a,d-breaker -modes least-latency,fallback`",
		"## Goals", "## (d-breaker)", "](ratio-to-oracle.png)"} {
		if !strings.Contains(string(report), want) {
			t.Errorf("README.md lacks %q", want)
		}
	}
	b, _ := os.ReadFile(doc)
	got := string(b)
	if !strings.HasPrefix(got, before+studyBegin) || !strings.HasSuffix(got, studyEnd+after) || strings.Contains(got, "stale") {
		t.Errorf("-markdown did not replace just the results section:\n%s", got)
	}
	if !strings.Contains(got, "### Goals") || !strings.Contains(got, "](study/ratio-to-oracle.png)") {
		t.Errorf("results section lacks the goals or the charts under study/:\n%s", got)
	}
}

func TestStudyCommandRefusesUnknownNames(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ flag, value, want string }{
		{"-scenarios", "a,z", `unknown scenario "z"`},
		{"-modes", "fastest", `unknown mode "fastest"`},
	} {
		code, _, stderr := runCmd("study", "-out", t.TempDir(), tt.flag, tt.value)
		if code != 2 || !strings.Contains(stderr, tt.want) {
			t.Errorf("study %s %s: exit %d, %q; want 2 and %q", tt.flag, tt.value, code, stderr, tt.want)
		}
	}
}
