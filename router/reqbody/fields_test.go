package reqbody

import (
	"github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"

	"encoding/json"
	"testing"
)

func TestScanRequest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		body       string
		model      string
		stream     bool
		err        bool
		swappedFor string // body after WithModel("X")
	}{
		{`{"model":"m"}`, "m", false, false, `{"model":"X"}`},
		{` { "messages" : [ {"model":"inner"} ], "model" : "a\"b" , "stream":true } `, `a"b`, true, false, ` { "messages" : [ {"model":"inner"} ], "model" : "X" , "stream":true } `},
		{`{"x":{"model":1},"model":"m","stream":false}`, "m", false, false, `{"x":{"model":1},"model":"X","stream":false}`},
		{`{"model":"\u00e9"}`, "é", false, false, `{"model":"X"}`},
		{`{"x":"}\"{","model":"m"}`, "m", false, false, `{"x":"}\"{","model":"X"}`},
		{`{"model":null}`, "", false, true, ""},
		{`{}`, "", false, true, ""},
		{`{"model":""}`, "", false, true, ""},
		{`[]`, "", false, true, ""},
		{`{"model":"m"`, "", false, true, ""},
	}
	for _, tt := range tests {
		f, err := Scan([]byte(tt.body))
		if (err != nil) != tt.err || f.Model != tt.model || f.Stream != tt.stream {
			t.Errorf("Scan(%s) = %q %v %v, want %q %v err=%v", tt.body, f.Model, f.Stream, err, tt.model, tt.stream, tt.err)
			continue
		}
		if err == nil {
			if got := string(f.WithModel(nil, []byte(tt.body), "X")); got != tt.swappedFor {
				t.Errorf("WithModel(%s) = %s, want %s", tt.body, got, tt.swappedFor)
			}
		}
	}
}

// The error writers' quoter gives a JSON string that decodes to what was
// quoted, whatever it holds.
func TestAppendJSONString(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"a\"b\\c\n\x01é", "", "\u2028</script>"} {
		var back string
		got := jsonscan.AppendString(nil, s)
		if err := json.Unmarshal(got, &back); err != nil || back != s {
			t.Errorf("jsonscan.AppendString(%q) = %s, decodes to %q (%v)", s, got, back, err)
		}
	}
}

// FuzzScanRequest: the scanner accepts exactly what encoding/json accepts
// (it replaced json.Valid on the hot path), and never panics.
func FuzzScanRequest(f *testing.F) {
	for _, seed := range []string{`{"model":"m"}`, `{"model":"m","x":[1,-2.5e+3,true,false,null,{"a":"\u00e9\n"}]}`, `{"a":01}`, `{"a":"\x01"}`, `[]`, `{"model":"m",}`, `{"a":1.}`, `{"a":"\q"}`, ` {"model" : "m" } `, `{"model":"m"}x`, `"s"`, `{"a":[}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		_, err := Scan(body)
		valid := json.Valid(body)
		if (err == errInvalidJSON) == valid {
			t.Errorf("Scan(%q) err=%v, json.Valid=%v", body, err, valid)
		}
	})
}
