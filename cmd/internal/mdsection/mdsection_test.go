package mdsection

import (
	"os"
	"path/filepath"
	"testing"
)

const begin, end = "<!-- BEGIN figures -->", "<!-- END figures -->"

func TestReplace(t *testing.T) {
	for _, tt := range []struct{ name, before, want string }{
		{"between the markers", "# T\n\nby people\n\n" + begin + "\nstale\n" + end + "\n\nmore by people\n",
			"# T\n\nby people\n\n" + begin + "\n\nnew\n" + end + "\n\nmore by people\n"},
		{"appended to a file without them", "# T\n\nby people\n\n\n",
			"# T\n\nby people\n\n" + begin + "\n\nnew\n" + end + "\n"},
		{"an empty file gets the title", "",
			"# Title\n\n" + begin + "\n\nnew\n" + end + "\n"},
		{"an end before the begin is not a section", end + "\n" + begin + "\n",
			end + "\n" + begin + "\n\n" + begin + "\n\nnew\n" + end + "\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "doc.md")
			if err := os.WriteFile(path, []byte(tt.before), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := Replace(path, "# Title", begin, end, "new\n"); err != nil {
				t.Fatal(err)
			}
			if got, _ := os.ReadFile(path); string(got) != tt.want {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

func TestReplaceCreatesAMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "doc.md")
	if err := Replace(path, "# Title", begin, end, "new\n"); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != "# Title\n\n"+begin+"\n\nnew\n"+end+"\n" {
		t.Errorf("got %q", got)
	}
}

func TestReplaceReportsAnUnreadableFile(t *testing.T) {
	if err := Replace(t.TempDir(), "# Title", begin, end, "new\n"); err == nil {
		t.Error("Replace on a directory: no error")
	}
}
