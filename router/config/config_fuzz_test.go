package config

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParseConfig: no input makes loading or validating a config panic,
// and every problem found is reported as a FieldError (never a raw decode
// error).
func FuzzParseConfig(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.yaml")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("a: &a [*a]\n"))
	f.Add([]byte("<<: {listen: x}\n"))
	f.Add([]byte("? [a]\n: b\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse(data, env(nil))
		if err != nil {
			if _, ok := err.(FieldErrors); !ok {
				t.Fatalf("Parse error %T is not FieldErrors: %v", err, err)
			}
			return
		}
		if err := cfg.Validate(); err != nil {
			if _, ok := err.(FieldErrors); !ok {
				t.Fatalf("Validate error %T is not FieldErrors: %v", err, err)
			}
		}
	})
}
