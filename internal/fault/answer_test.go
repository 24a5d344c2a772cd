package fault

import "testing"

// TestOfAnswer: real-shaped error bodies of OpenAI, Anthropic, an
// OpenAI-compatible host, Google and Bedrock, and the answers a client can
// provoke by putting the providers' words in its request, which the
// provider then echoes in its error.
func TestOfAnswer(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		body   string
		want   string
	}{
		// Key-level: the provider is disabled.
		{"401 whatever the body", 401, `<html>nope</html>`, ErrorAuth},
		{"openai 401 invalid_api_key", 401, `{"error":{"message":"Incorrect API key provided: sk-abc***","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`, ErrorAuth},
		{"402 whatever the body", 402, ``, ErrorQuota},
		{"openai 429 insufficient_quota", 429, `{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`, ErrorQuota},
		{"openai 403 region", 403, `{"error":{"code":"unsupported_country_region_territory","message":"Country, region, or territory not supported","param":null,"type":"request_forbidden"}}`, ErrorAuth},
		{"anthropic 402 billing_error", 402, `{"type":"error","error":{"type":"billing_error","message":"..."}}`, ErrorQuota},
		{"anthropic credit balance", 400, `{"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."}}`, ErrorQuota},
		{"anthropic 403 authentication_error", 403, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`, ErrorAuth},
		{"compatible host 403 authentication_error", 403, `{"error":{"object":"error","type":"authentication_error","message":"Invalid API Key","code":"invalid_api_key"}}`, ErrorAuth},
		{"google 400 API_KEY_INVALID", 400, `{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com"}]}}`, ErrorAuth},
		{"anthropic 403 permission_error", 403, `{"type":"error","error":{"type":"permission_error","message":"Your API key does not have permission to use the specified resource."}}`, ErrorAuth},
		{"bedrock 403 UnrecognizedClientException", 403, `{"__type":"com.amazon.coral.service#UnrecognizedClientException","message":"The security token included in the request is invalid."}`, ErrorAuth},

		// Model-level: that (provider, upstream model) target only.
		{"openai 404 model_not_found", 404, `{"error":{"message":"The model 'gpt-9' does not exist or you do not have access to it.","type":"invalid_request_error","param":null,"code":"model_not_found"}}`, ErrorModelAccess},
		{"openai 403 project has no access to the model", 403, `{"error":{"message":"Project 'proj_x' does not have access to model 'gpt-4o'","type":"invalid_request_error","param":null,"code":"model_not_found"}}`, ErrorModelAccess},
		{"anthropic 404 model", 404, `{"type":"error","error":{"type":"not_found_error","message":"model: claude-9"}}`, ErrorModelAccess},
		{"403 naming the model in its message only", 403, `{"message":"You don't have access to the model with the specified model ID."}` + "", "403"},
		{"bedrock 403 AccessDeniedException typed", 403, `{"__type":"AccessDeniedException","message":"You don't have access to the model with the specified model ID."}`, ErrorAuth},

		// The endpoint does not exist: a wrong base_url.
		{"compatible host unknown URL", 404, `{"error":{"message":"Unknown request URL: POST /chat/completions. Please check the URL for typos.","type":"invalid_request_error","code":"unknown_url"}}`, ErrorConfig},
		{"openai invalid URL", 404, `{"error":{"message":"Invalid URL (POST /chat/completions)","type":"invalid_request_error","param":null,"code":null}}`, ErrorConfig},
		{"anthropic 404 Not Found", 404, `{"type":"error","error":{"type":"not_found_error","message":"Not Found"}}`, ErrorConfig},
		{"404 HTML page", 404, `<!DOCTYPE html><html><body>404 page not found</body></html>`, ErrorConfig},
		{"405 method not allowed", 405, `Method Not Allowed`, ErrorConfig},

		// State another account keeps: not this one's fault.
		{"openai 404 previous_response_not_found", 404, `{"error":{"message":"Previous response with id 'resp_1' not found.","type":"invalid_request_error","param":"previous_response_id","code":"previous_response_not_found"}}`, ErrorPreviousResponseNotFound},
		{"openai 400 previous_response_not_found", 400, `{"error":{"message":"Previous response with id 'resp_1' not found.","type":"invalid_request_error","param":"previous_response_id","code":"previous_response_not_found"}}`, ErrorPreviousResponseNotFound},
		{"404 quoting previous_response_not_found in its message only", 404, `{"error":{"message":"previous_response_not_found","type":"invalid_request_error","code":null}}`, ErrorConfig},

		// The caller's answer: nothing here is about the key.
		{"403 content policy", 403, `{"error":{"message":"Your request was rejected as a result of our safety system.","type":"invalid_request_error","param":null,"code":"content_policy_violation"}}`, "403"},
		{"403 moderation", 403, `{"error":{"message":"Your request was flagged by our moderation system.","type":"invalid_request_error","code":"moderation_blocked"}}`, "403"},
		{"403 with no structure", 403, `Forbidden`, "403"},
		{"429 rate limited", 429, `{"error":{"message":"Rate limit reached for requests","type":"requests","param":null,"code":"rate_limit_exceeded"}}`, "429"},
		{"500", 500, `{"error":{"code":"insufficient_quota"}}`, "500"},

		// Echo attacks: the request's text quoted back in the message.
		{"echo: unknown role insufficient_quota", 400, `{"error":{"message":"Invalid value: 'insufficient_quota'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.","type":"invalid_request_error","param":"messages[0].role","code":"invalid_value"}}`, "400"},
		{"echo: anthropic role", 400, `{"type":"error","error":{"type":"invalid_request_error","message":"messages.0.role: Input should be 'user' or 'assistant', got 'insufficient_quota'"}}`, "400"},
		{"echo: credit balance text", 400, `{"type":"error","error":{"type":"invalid_request_error","message":"messages.0.content: unexpected text 'Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.'"}}`, "400"},
		{"echo: credit balance on a 429", 429, `{"error":{"message":"credit balance is too low: insufficient_quota","type":"rate_limit_error"}}`, "429"},
		{"echo: 403 quoting the key words", 403, `{"error":{"message":"flagged: 'invalid_api_key authentication_error insufficient_quota'","type":"invalid_request_error","code":"content_policy_violation"}}`, "403"},
		{"echo: anthropic not_found naming a file", 404, `{"type":"error","error":{"type":"not_found_error","message":"File not found: model: x"}}`, ErrorConfig},
		{"cut-short body", 403, `{"error":{"code":"invalid_api_k`, "403"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := OfAnswer(tc.status, []byte(tc.body)); got != tc.want {
				t.Errorf("OfAnswer(%d, %s) = %q, want %q", tc.status, tc.body, got, tc.want)
			}
		})
	}
}

// TestOfAnswerScoped: which verdicts disable only the (provider, upstream
// model) target they came from. A refusal of what the request asked for
// (Bedrock's AccessDeniedException, Anthropic's permission_error) is a
// credential failure whose type cannot tell the key from the model: auth,
// for the target only; a refused key is auth for the whole provider.
func TestOfAnswerScoped(t *testing.T) {
	for _, tc := range []struct {
		name, awsType, body string
		status              int
		want                string
		targetOnly          bool
	}{
		{"bedrock AccessDeniedException header", "AccessDeniedException", `{"message":"You don't have access to the model with the specified model ID."}`, 403, ErrorAuth, true},
		{"bedrock AccessDeniedException body", "", `{"__type":"com.amazon.coral.service#AccessDeniedException","message":"x"}`, 403, ErrorAuth, true},
		{"bedrock UnrecognizedClientException", "UnrecognizedClientException", `{"message":"The security token included in the request is invalid."}`, 403, ErrorAuth, false},
		{"bedrock ExpiredTokenException", "ExpiredTokenException", `{"message":"The security token included in the request is expired"}`, 403, ErrorAuth, false},
		{"anthropic permission_error", "", `{"type":"error","error":{"type":"permission_error","message":"Your API key does not have permission to use the specified resource."}}`, 403, ErrorAuth, true},
		{"anthropic authentication_error", "", `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`, 403, ErrorAuth, false},
		{"key refused beats target refused", "", `{"error":{"type":"permission_error","code":"invalid_api_key","message":"x"}}`, 403, ErrorAuth, false},
		{"openai model_not_found", "", `{"error":{"type":"invalid_request_error","code":"model_not_found","message":"x"}}`, 404, ErrorModelAccess, true},
		{"permission_error on a 400 is the caller's", "", `{"type":"error","error":{"type":"permission_error","message":"x"}}`, 400, "400", false},
		{"401", "", ``, 401, ErrorAuth, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, only := OfAnswerScoped(tc.status, tc.awsType, []byte(tc.body))
			if got != tc.want || only != tc.targetOnly {
				t.Errorf("OfAnswerScoped(%d, %q, %s) = %q, %v; want %q, %v", tc.status, tc.awsType, tc.body, got, only, tc.want, tc.targetOnly)
			}
		})
	}
}

// TestDisablingScope: which verdicts disable a target, and which only the
// (provider, upstream model) they came from.
func TestDisablingScope(t *testing.T) {
	for _, tc := range []struct {
		errorType          string
		disabling, modeled bool
	}{
		{ErrorAuth, true, false}, {ErrorQuota, true, false}, {ErrorModelAccess, true, true},
		{ErrorConfig, false, false}, {"403", false, false}, {"429", false, false},
	} {
		if got := Disabling(tc.errorType); got != tc.disabling {
			t.Errorf("Disabling(%q) = %v, want %v", tc.errorType, got, tc.disabling)
		}
		if got := ModelScoped(tc.errorType); got != tc.modeled {
			t.Errorf("ModelScoped(%q) = %v, want %v", tc.errorType, got, tc.modeled)
		}
	}
}
