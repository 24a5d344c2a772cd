package telemetry

import "testing"

func TestCanonicalHost(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"api.openai.com", "api.openai.com"},
		{"API.OpenAI.com", "api.openai.com"},
		{"127.0.0.1", "127.0.0.1"},
		{"::1", "::1"},
		{"[::1]", "::1"},
		{"0:0:0:0:0:0:0:1", "::1"},
		// One IPv6 address, spelled three ways.
		{"2001:db8::1", "2001:db8::1"},
		{"[2001:DB8:0:0:0:0:0:1]", "2001:db8::1"},
		{"2001:0db8::0001", "2001:db8::1"},
		{"::ffff:10.0.0.1", "10.0.0.1"},
		{"[", "["},
		{"", ""},
		{"01.2.3.4", "01.2.3.4"}, // not an address (leading zero): a name
	} {
		if got := CanonicalHost(tc.in); got != tc.want {
			t.Errorf("CanonicalHost(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// A host already spelled canonically, the usual case on the foreign-span
// path, costs no allocation.
func TestCanonicalHostDoesNotAllocate(t *testing.T) {
	for _, h := range []string{"api.openai.com", "127.0.0.1", "2001:db8::1", "[::1]"} {
		if n := testing.AllocsPerRun(100, func() { _ = CanonicalHost(h) }); n != 0 {
			t.Errorf("CanonicalHost(%q): %v allocations, want 0", h, n)
		}
	}
}
