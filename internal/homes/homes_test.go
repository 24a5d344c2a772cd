package homes

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func TestGetWithinRetention(t *testing.T) {
	m := New(0, 0)
	m.Put("resp_1", "a", t0)
	for _, tt := range []struct {
		name   string
		at     time.Time
		want   string
		wantOK bool
	}{
		{"at once", t0, "a", true},
		{"a day before the end", t0.Add(Retention - 24*time.Hour), "a", true},
		{"at the end of the retention", t0.Add(Retention), "", false},
		{"after it (forgotten)", t0.Add(time.Second), "", false},
	} {
		got, ok := m.Get("resp_1", tt.at)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("%s: Get(resp_1) = %q, %v; want %q, %v", tt.name, got, ok, tt.want, tt.wantOK)
		}
	}
	if n := m.Len(); n != 0 {
		t.Errorf("Len() = %d after the id expired, want 0", n)
	}
}

func TestPutAgainMovesTheHome(t *testing.T) {
	m := New(0, time.Hour)
	m.Put("resp_1", "a", t0)
	m.Put("resp_1", "b", t0.Add(50*time.Minute))
	if got, ok := m.Get("resp_1", t0.Add(90*time.Minute)); got != "b" || !ok {
		t.Errorf("Get(resp_1) = %q, %v; want b, true (stored again later)", got, ok)
	}
}

func TestBoundEvictsTheLeastRecentlyUsed(t *testing.T) {
	m := New(3, time.Hour)
	for i := range 3 {
		m.Put(fmt.Sprintf("resp_%d", i), "a", t0)
	}
	m.Get("resp_0", t0) // used: resp_1 is now the least recently used
	m.Put("resp_3", "b", t0)
	if n := m.Len(); n != 3 {
		t.Errorf("Len() = %d, want 3 (the bound)", n)
	}
	for id, want := range map[string]bool{"resp_0": true, "resp_1": false, "resp_2": true, "resp_3": true} {
		if _, ok := m.Get(id, t0); ok != want {
			t.Errorf("Get(%s) ok = %v, want %v", id, ok, want)
		}
	}
}

func TestNothingOverlongIsKept(t *testing.T) {
	m := New(0, 0)
	long := "resp_" + strings.Repeat("x", MaxIDLen)
	m.Put(long, "a", t0)
	m.Put("", "a", t0)
	m.Put("resp_1", "", t0)
	if n := m.Len(); n != 0 {
		t.Errorf("Len() = %d, want 0: nothing kept", n)
	}
}
