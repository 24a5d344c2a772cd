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
		{"exactly the limit", 5000, 5000, 5000, 32 << 10},
		{"over the limit: stops at it", 1 << 20, 100_001, 100_001, 100_001},
		{"large, under the limit", 300_000, 1 << 20, 300_000, 600_000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readAtMost(nil, strings.NewReader(strings.Repeat("x", tc.in)), tc.limit)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tc.want || cap(got) > tc.maxCap {
				t.Errorf("read %d bytes into cap %d; want %d bytes, cap at most %d", len(got), cap(got), tc.want, tc.maxCap)
			}
		})
	}
	boom := errors.New("reset")
	if got, err := readAtMost(nil, io.MultiReader(strings.NewReader("abc"), errReader{boom}), 100); !errors.Is(err, boom) || string(got) != "abc" {
		t.Errorf("a read error: %v with %q", err, got)
	}
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }
