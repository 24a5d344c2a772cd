package reqbody

import "testing"

func TestWithoutProvider(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, want string }{
		{`{"provider":{"sort":"price"},"model":"m","x":1}`, `{"model":"m","x":1}`},
		{`{"model":"m", "provider" : {"only":["a"]} }`, `{"model":"m" }`},
		{` {"stream":true,"provider":{},"model":"m"}`, ` {"stream":true,"model":"m"}`},
		{`{"model":"m"}`, `{"model":"m"}`},
	} {
		f, err := Scan([]byte(tt.in))
		if err != nil {
			t.Fatal(err)
		}
		got := WithoutProvider([]byte(tt.in), &f)
		if string(got) != tt.want {
			t.Errorf("WithoutProvider(%s) = %s, want %s", tt.in, got, tt.want)
		}
		if m := string(got[f.modelStart:f.modelEnd]); m != `"m"` {
			t.Errorf("WithoutProvider(%s): model offsets point at %s", tt.in, m)
		}
	}
}
