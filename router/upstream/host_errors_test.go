package upstream

import (
	"net/http"
	"testing"
	"time"

	"github.com/firstbyte-dev/firstbyte/internal/fault"
	"github.com/firstbyte-dev/firstbyte/router/config"
)

func TestJudgeError(t *testing.T) {
	t.Parallel()
	br := NewHost("br", &config.Provider{Kind: config.KindBedrock, Region: "us-east-1", APIKey: "bedrock-key-123"}, HostOptions{})
	vx := NewHost("vx", &config.Provider{Kind: config.KindVertex, Region: "global", Project: "p"}, HostOptions{})
	az := NewHost("az", &config.Provider{Kind: config.KindAzure, APIKey: "azure-key-123", APIVersion: "v1"}, HostOptions{})
	tests := []struct {
		name     string
		h        *Host
		status   int
		header   string
		body     string
		want     HostError
		wantFull bool
	}{
		{"bedrock throttling by header, suffixed", br, 429, "ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/", `{"message":"Too many requests"}`,
			HostError{Status: 429, ErrorType: "429"}, true},
		{"bedrock quota exceeded is a rate limit", br, 400, "", `{"__type":"ServiceQuotaExceededException","message":"x"}`,
			HostError{Status: 429, ErrorType: "429"}, true},
		{"bedrock model error is the provider's", br, 424, "ModelErrorException", `{"message":"x"}`,
			HostError{Status: 502, ErrorType: "502"}, true},
		{"bedrock model not ready", br, 429, "ModelNotReadyException", `{}`, HostError{Status: 503, ErrorType: "503"}, true},
		{"bedrock expired token is auth", br, 403, "ExpiredTokenException", `{"message":"The security token included in the request is expired"}`,
			HostError{Status: 403, ErrorType: fault.ErrorAuth}, true},
		{"bedrock access denied is auth, for the target only", br, 403, "AccessDeniedException:http://internal.amazon.com/coral/com.amazon.bedrock/", `{"message":"You don't have access to the model with the specified model ID."}`,
			HostError{Status: 403, ErrorType: fault.ErrorAuth, TargetOnly: true}, true},
		{"bedrock unrecognized client is auth, provider-wide", br, 403, "UnrecognizedClientException", `{"message":"The security token included in the request is invalid."}`,
			HostError{Status: 403, ErrorType: fault.ErrorAuth}, true},
		{"bedrock validation is the caller's", br, 400, "ValidationException", `{"message":"messages: field required"}`,
			HostError{Status: 400, ErrorType: "400"}, false},
		{"bedrock input too long overflows", br, 400, "ValidationException", `{"message":"Input is too long for requested model."}`,
			HostError{Status: 400, ErrorType: "400", ContextOverflow: true}, false},
		{"vertex resource exhausted with a retry delay, wrapped", vx, 429, "", `[{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"17s"}]}}]`,
			HostError{Status: 429, ErrorType: "429", RetryAfter: 17 * time.Second}, true},
		{"azure content filter goes to the caller", az, 400, "", `{"error":{"message":"The response was filtered","type":null,"param":"prompt","code":"content_filter","status":400}}`,
			HostError{Status: 400, ErrorType: "400"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			if tt.header != "" {
				h.Set("X-Amzn-ErrorType", tt.header)
			}
			got := tt.h.JudgeError(tt.status, h, []byte(tt.body))
			if got != tt.want {
				t.Errorf("JudgeError = %+v, want %+v", got, tt.want)
			}
			if full := fault.Classify(got.Status, got.ErrorType) == fault.Full; full != tt.wantFull {
				t.Errorf("a provider fault: %v, want %v", full, tt.wantFull)
			}
		})
	}
}

// TestStreamExceptionVerdict: a credential exception frame is auth, as
// its 403 answer would be (an access-denied one for the target only);
// the others keep their status as error.type.
func TestStreamExceptionVerdict(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		typ        string
		status     int
		errorType  string
		targetOnly bool
	}{
		{"accessDeniedException", 403, fault.ErrorAuth, true},
		{"unrecognizedClientException", 403, fault.ErrorAuth, false},
		{"expiredTokenException", 403, fault.ErrorAuth, false},
		{"throttlingException", 429, "429", false},
		{"validationException", 400, "400", false},
		{"serviceQuotaExceededException", 429, "429", false},
		{"modelStreamErrorException", 502, "502", false},
		{"internalServerException", 502, "502", false},
		{"", 502, "502", false},
	} {
		s, et, only := StreamExceptionVerdict(tc.typ)
		if s != tc.status || et != tc.errorType || only != tc.targetOnly {
			t.Errorf("StreamExceptionVerdict(%q) = %d %q %v, want %d %q %v", tc.typ, s, et, only, tc.status, tc.errorType, tc.targetOnly)
		}
	}
}
