package fault

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// FailureModelCase is one row of testdata/failure_model.json: the failure
// model's one table, which the pipeline's tests and the collector's tests
// read too, so all three sides are held to the same verdicts.
type failureModelCase struct {
	Name      string `json:"name"`
	Status    int    `json:"status"`
	ErrorType string `json:"error_type"`
	Fault     string `json:"fault"`
	Failover  bool   `json:"failover"`
}

func loadFailureModel(t *testing.T) []failureModelCase {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	data, err := os.ReadFile(filepath.Join(filepath.Dir(file), "testdata", "failure_model.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []failureModelCase
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	return cases
}

func TestClassifyTable(t *testing.T) {
	for _, tc := range loadFailureModel(t) {
		t.Run(tc.Name, func(t *testing.T) {
			want, ok := Parse(tc.Fault)
			if !ok {
				t.Fatalf("bad fault %q in the table", tc.Fault)
			}
			if got := Classify(tc.Status, tc.ErrorType); got != want {
				t.Errorf("Classify(%d, %q) = %v, want %v", tc.Status, tc.ErrorType, got, want)
			}
		})
	}
}

func TestFaultWeightsAndNames(t *testing.T) {
	for _, tc := range []struct {
		f      Fault
		weight float64
		name   string
	}{{None, 0, "none"}, {Half, 0.5, "half"}, {Full, 1, "full"}} {
		if tc.f.Weight() != tc.weight || tc.f.String() != tc.name {
			t.Errorf("%v: Weight %v String %q, want %v %q", tc.f, tc.f.Weight(), tc.f.String(), tc.weight, tc.name)
		}
		if back, ok := Parse(tc.name); !ok || back != tc.f {
			t.Errorf("Parse(%q) = %v, %v", tc.name, back, ok)
		}
	}
	if _, ok := Parse("partial"); ok {
		t.Error(`Parse("partial") accepted`)
	}
}

func TestTimeout(t *testing.T) {
	for et, want := range map[string]bool{"timeout": true, "APIConnectionTimeoutError": true, "transport": false, "503": false, "": false} {
		if IsTimeout(et) != want {
			t.Errorf("Timeout(%q) = %v, want %v", et, !want, want)
		}
	}
}
