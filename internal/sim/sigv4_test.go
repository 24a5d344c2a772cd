package sim

import (
	"net/http"
	"testing"
	"time"
)

// TestVerifySigV4Vectors: the AWS SigV4 test suite's get-vanilla and
// post-vanilla cases (credential AKIDEXAMPLE, 2015-08-30 12:36 UTC).
func TestVerifySigV4Vectors(t *testing.T) {
	t.Parallel()
	keys := []AWSKey{{"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"}}
	now := time.Date(2015, 8, 30, 12, 36, 0, 0, time.UTC)
	tests := []struct {
		name, method, sig string
		ok                bool
	}{
		{"get-vanilla", "GET", "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31", true},
		{"post-vanilla", "POST", "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b", true},
		{"get-vanilla, one digit changed", "GET", "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf32", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := http.NewRequest(tt.method, "https://example.amazonaws.com/", nil)
			r.Header.Set("X-Amz-Date", "20150830T123600Z")
			r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature="+tt.sig)
			err := VerifySigV4(r, nil, keys, "us-east-1", "service", now)
			if (err == nil) != tt.ok {
				t.Errorf("VerifySigV4() = %v, want ok %v", err, tt.ok)
			}
		})
	}
}
