package fault

import (
	"testing"
	"time"
)

// TestOfAnswerHosts: the cloud hosts' error shapes: Google errors wrapped
// in a JSON array (a stream called without alt=sse), PERMISSION_DENIED,
// and Bedrock's type given by its X-Amzn-ErrorType header alone.
func TestOfAnswerHosts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		status int
		header string
		body   string
		want   string
	}{
		{"google API_KEY_INVALID in an array", 400, "", `[{"error":{"code":400,"message":"API key not valid.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID"}]}}]`, ErrorAuth},
		{"google PERMISSION_DENIED", 403, "", `{"error":{"code":403,"message":"Permission denied on resource project p.","status":"PERMISSION_DENIED"}}`, ErrorAuth},
		{"google UNAUTHENTICATED in an array", 401, "", `[{"error":{"code":401,"status":"UNAUTHENTICATED"}}]`, ErrorAuth},
		{"google INVALID_ARGUMENT is the caller's", 400, "", `{"error":{"code":400,"message":"bad","status":"INVALID_ARGUMENT"}}`, "400"},
		{"bedrock header only, with its suffix", 403, "UnrecognizedClientException:http://internal.amazon.com/coral/com.amazon.coral.service/", `{"message":"The security token included in the request is invalid."}`, ErrorAuth},
		{"bedrock header ExpiredToken", 403, "ExpiredTokenException", `{}`, ErrorAuth},
		{"bedrock validation is the caller's", 400, "ValidationException", `{"message":"x"}`, "400"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := OfAnswerTyped(tc.status, AWSErrorType(tc.header), []byte(tc.body)); got != tc.want {
				t.Errorf("OfAnswerTyped(%d, %q) = %q, want %q", tc.status, tc.header, got, tc.want)
			}
		})
	}
}

func TestAnswerType(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ header, body, want string }{
		{"ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/", "", "ThrottlingException"},
		{"", `{"__type":"com.amazon.bedrock#ServiceQuotaExceededException","message":"x"}`, "ServiceQuotaExceededException"},
		{"ModelErrorException", `{"__type":"Other"}`, "ModelErrorException"},
		{"", `not json`, ""},
	} {
		if got := AnswerType(tc.header, []byte(tc.body)); got != tc.want {
			t.Errorf("AnswerType(%q, %q) = %q, want %q", tc.header, tc.body, got, tc.want)
		}
	}
}

func TestRetryDelay(t *testing.T) {
	t.Parallel()
	body := func(d string) []byte {
		return []byte(`[{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"` + d + `"}]}}]`)
	}
	for _, tc := range []struct {
		delay string
		want  time.Duration
	}{
		{"30s", 30 * time.Second}, {"1.5s", 1500 * time.Millisecond}, {"0.000000001s", 1}, {"12", 0}, {"-3s", 0}, {"1e3s", 0}, {"s", 0},
	} {
		if got := RetryDelay(body(tc.delay)); got != tc.want {
			t.Errorf("RetryDelay(%q) = %v, want %v", tc.delay, got, tc.want)
		}
	}
	if got := RetryDelay([]byte(`{"error":{"status":"RESOURCE_EXHAUSTED"}}`)); got != 0 {
		t.Errorf("no RetryInfo: %v", got)
	}
}
