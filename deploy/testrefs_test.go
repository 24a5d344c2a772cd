package deploy

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A comment in a deployment file that says which test checks it names a
// test file that exists: one that does not ("deploy/deploy_test.go")
// sends a reader looking for a check that is not there. A path with a
// directory is from the repository's root; a bare file name is beside the
// file that cites it.
func TestDeployFilesCiteTestsThatExist(t *testing.T) {
	testFile := regexp.MustCompile(`[A-Za-z0-9_./-]*_test\.go`)
	for _, dir := range []string{"deploy", "collector/otelcol/config"} {
		err := filepath.WalkDir(filepath.Join(repoRoot, dir), func(path string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() || strings.HasSuffix(path, ".go") {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, cited := range testFile.FindAllString(string(data), -1) {
				at := filepath.Join(repoRoot, cited)
				if !strings.Contains(cited, "/") {
					at = filepath.Join(filepath.Dir(path), cited)
				}
				if _, err := os.Stat(at); err != nil {
					t.Errorf("%s cites %s, which does not exist", path, cited)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
