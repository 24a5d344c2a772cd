package reqbody

import "testing"

func TestSideEffects(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name       string
		api        API
		body       string
		sideEffect string
		stores     bool
		previous   string
	}{
		{"chat: an answer only", ChatCompletions, `{"model":"m"}`, "", false, ""},
		{"chat: store true keeps the completion", ChatCompletions, `{"model":"m","store":true}`, "store", false, ""},
		{"messages: nothing is kept", Messages, `{"model":"m","store":true}`, "", false, ""},
		{"embeddings: unchecked", Unchecked, `{"store":true}`, "", false, ""},
		{"responses: stored unless told not to", Responses, `{"model":"m"}`, "store", true, ""},
		{"responses: store false", Responses, `{"model":"m","store":false}`, "", false, ""},
		{"responses: a follow-up", Responses, `{"store":false,"previous_response_id":"resp_1"}`, "previous_response_id", false, "resp_1"},
		{"responses: a null follow-up is none", Responses, `{"store":false,"previous_response_id":null}`, "", false, ""},
		{"responses: background", Responses, `{"store":false,"background":true}`, "background", false, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := []byte(tt.body)
			if got := SideEffect(tt.api, b); got != tt.sideEffect {
				t.Errorf("SideEffect = %q, want %q", got, tt.sideEffect)
			}
			if got := Stores(tt.api, b); got != tt.stores {
				t.Errorf("Stores = %v, want %v", got, tt.stores)
			}
			if got := PreviousResponseID(tt.api, b); got != tt.previous {
				t.Errorf("PreviousResponseID = %q, want %q", got, tt.previous)
			}
		})
	}
}
