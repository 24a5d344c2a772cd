package router

import (
	"errors"
	"io"
	"strings"
	"testing"
)

func TestReadAtMost(t *testing.T) {
	for _, tc := range []struct {
		name   string
		in     int
		limit  int64
		want   int
		maxCap int
	}{
		{"small", 100, 1000, 100, 32 << 10},
		{"as many bytes as n: over (the caller asks for one past its limit)", 5000, 5000, 0, 32 << 10},
		{"one under n", 4999, 5000, 4999, 32 << 10},
		{"over the limit: stops at it, keeps nothing", 1 << 20, 100_001, 0, 32 << 10},
		{"large, under the limit", 300_000, 1 << 20, 300_000, 600_000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, over, err := readAtMost(nil, strings.NewReader(strings.Repeat("x", tc.in)), tc.limit)
			if err != nil {
				t.Fatal(err)
			}
			if over != (int64(tc.in) >= tc.limit) {
				t.Errorf("over = %v for %d bytes against %d", over, tc.in, tc.limit)
			}
			if len(got) != tc.want || cap(got) > tc.maxCap || tc.want > 0 && got[len(got)-1] != 'x' {
				t.Errorf("read %d bytes into cap %d; want %d bytes, cap at most %d", len(got), cap(got), tc.want, tc.maxCap)
			}
		})
	}
	boom := errors.New("reset")
	if got, _, err := readAtMost(nil, io.MultiReader(strings.NewReader("abc"), errReader{boom}), 100); !errors.Is(err, boom) || string(got) != "abc" {
		t.Errorf("a read error: %v with %q", err, got)
	}
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }
