package translate

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Validators of the Responses API's answers, as the OpenAI SDKs assemble
// them (the Node SDK's ResponseAccumulator throws on an event for an item
// or part that was not added, or of another type).

type rItem struct {
	ID        string  `json:"id"`
	Type      string  `json:"type"`
	Status    string  `json:"status"`
	Role      string  `json:"role"`
	Content   []rPart `json:"content"`
	Summary   []rPart `json:"summary"`
	CallID    string  `json:"call_id"`
	Name      string  `json:"name"`
	Arguments *string `json:"arguments"`
	// EncryptedContent is a reasoning item's (the thinking's signature).
	EncryptedContent *string `json:"encrypted_content"`
}

type rPart struct {
	Type        string          `json:"type"`
	Text        *string         `json:"text"`
	Refusal     *string         `json:"refusal"`
	Annotations json.RawMessage `json:"annotations"`
	Logprobs    json.RawMessage `json:"logprobs"`
}

type rUsage struct {
	InputTokens        int64 `json:"input_tokens"`
	InputTokensDetails struct {
		CachedTokens     int64 `json:"cached_tokens"`
		CacheWriteTokens int64 `json:"cache_write_tokens"`
	} `json:"input_tokens_details"`
	OutputTokens        int64 `json:"output_tokens"`
	OutputTokensDetails struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
	TotalTokens              int64  `json:"total_tokens"`
	CacheCreationInputTokens *int64 `json:"cache_creation_input_tokens"`
}

type rResponse struct {
	ID                string          `json:"id"`
	Object            string          `json:"object"`
	CreatedAt         int64           `json:"created_at"`
	Status            string          `json:"status"`
	Error             json.RawMessage `json:"error"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Model  string  `json:"model"`
	Output []rItem `json:"output"`
	Usage  *rUsage `json:"usage"`
}

// responsesResult is a Responses answer as a client reads it.
type responsesResult struct {
	ID, Model, Status, Incomplete string
	Text, Refusal, Reasoning      string
	Tools                         []toolResult
	Usage                         *rUsage
	Err                           string
}

// checkResponse holds a unary response object to the API's shape.
func checkResponse(b []byte) (responsesResult, error) {
	var r rResponse
	if err := strictDecode(b, &r); err != nil {
		return responsesResult{}, err
	}
	return readResponse(&r)
}

func readResponse(r *rResponse) (responsesResult, error) {
	res := responsesResult{ID: r.ID, Model: r.Model, Status: r.Status}
	switch {
	case !strings.HasPrefix(r.ID, "resp_") || r.Object != "response" || r.Model == "" || r.CreatedAt <= 0:
		return res, fmt.Errorf("header fields %+v", r)
	case r.Status == "incomplete" && r.IncompleteDetails != nil:
		res.Incomplete = r.IncompleteDetails.Reason
	case r.Status != "completed" || r.IncompleteDetails != nil:
		return res, fmt.Errorf("status %q with incomplete_details %+v", r.Status, r.IncompleteDetails)
	}
	for i, it := range r.Output {
		// An item is whole, or (the last) the one an incomplete answer was
		// cut short in; a reasoning item has no status.
		cutIn := it.Status == "incomplete" && r.Status == "incomplete" && i == len(r.Output)-1
		if it.ID == "" || it.Status != "completed" && !cutIn && it.Type != "reasoning" {
			return res, fmt.Errorf("output[%d] %+v", i, it)
		}
		switch it.Type {
		case "message":
			if it.Role != "assistant" || len(it.Content) != 1 {
				return res, fmt.Errorf("output[%d]: message %+v", i, it)
			}
			p := it.Content[0]
			switch {
			case p.Type == "output_text" && p.Text != nil && string(p.Annotations) == "[]":
				res.Text += *p.Text
			case p.Type == "refusal" && p.Refusal != nil:
				res.Refusal += *p.Refusal
			default:
				return res, fmt.Errorf("output[%d]: part %+v", i, p)
			}
		case "function_call":
			if !strings.HasPrefix(it.ID, "fc_") || it.CallID == "" || it.Name == "" || it.Arguments == nil || !isObjectJSON([]byte(*it.Arguments)) {
				if !(r.Status == "incomplete" && it.Arguments != nil) {
					return res, fmt.Errorf("output[%d]: function_call %+v", i, it)
				}
			}
			res.Tools = append(res.Tools, toolResult{ID: it.CallID, Name: it.Name, Args: *it.Arguments})
		case "reasoning":
			for _, s := range it.Summary {
				if s.Type != "summary_text" || s.Text == nil {
					return res, fmt.Errorf("output[%d]: summary %+v", i, s)
				}
				res.Reasoning += *s.Text
			}
		default:
			return res, fmt.Errorf("output[%d].type %q", i, it.Type)
		}
	}
	if u := r.Usage; u != nil {
		if u.TotalTokens != u.InputTokens+u.OutputTokens || u.InputTokensDetails.CachedTokens > u.InputTokens {
			return res, fmt.Errorf("usage %+v", *u)
		}
		res.Usage = u
	}
	return res, nil
}

type rEvent struct {
	Type           string     `json:"type"`
	SequenceNumber *int64     `json:"sequence_number"`
	Response       *rResponse `json:"response"`
	OutputIndex    *int       `json:"output_index"`
	ContentIndex   *int       `json:"content_index"`
	SummaryIndex   *int       `json:"summary_index"`
	ItemID         string     `json:"item_id"`
	Item           *rItem     `json:"item"`
	Part           *rPart     `json:"part"`
	Delta          *string    `json:"delta"`
	Text           *string    `json:"text"`
	Refusal        *string    `json:"refusal"`
	Arguments      *string    `json:"arguments"`
	Logprobs       json.RawMessage
	// error events
	Code    *string         `json:"code"`
	Message string          `json:"message"`
	Param   json.RawMessage `json:"param"`
	Error   *struct {
		Message string `json:"message"`
		Type    string `json:"type"`
	} `json:"error"`
}

// checkResponsesStream holds a Responses event stream to what the SDKs
// accept and assembles it: response.created and response.in_progress
// first, sequence numbers in order, every delta for an item and part
// already added and not yet done, .done texts equal to their deltas, and
// response.completed (or response.incomplete, or an error event) last,
// whose output is what the events built.
func checkResponsesStream(body string) (responsesResult, error) {
	var res responsesResult
	events, err := readEvents(body)
	if err != nil {
		return res, err
	}
	var items []rItem
	var texts []string // by item: its text, refusal, arguments or summary so far
	done := map[int]bool{}
	for i, ev := range events {
		var e rEvent
		if err := json.Unmarshal([]byte(ev.data), &e); err != nil {
			return res, fmt.Errorf("event %d: %v: %s", i, err, ev.data)
		}
		last := i == len(events)-1
		if ev.name != e.Type {
			return res, fmt.Errorf("event %d: name %q, type %q", i, ev.name, e.Type)
		}
		if e.Type == "error" {
			if !last || e.Error == nil || e.Message == "" || e.Error.Message != e.Message {
				return res, fmt.Errorf("event %d: error event %s", i, ev.data)
			}
			res.Err = e.Message
			continue
		}
		if e.SequenceNumber == nil || *e.SequenceNumber != int64(i) {
			return res, fmt.Errorf("event %d: sequence_number %v", i, e.SequenceNumber)
		}
		if (i == 0) != (e.Type == "response.created") || (i == 1) != (e.Type == "response.in_progress") {
			return res, fmt.Errorf("event %d is %s", i, e.Type)
		}
		item := func() (*rItem, int, error) {
			if e.OutputIndex == nil || *e.OutputIndex >= len(items) || done[*e.OutputIndex] {
				return nil, 0, fmt.Errorf("event %d (%s): no open item at %v", i, e.Type, e.OutputIndex)
			}
			n := *e.OutputIndex
			if e.ItemID != "" && e.ItemID != items[n].ID {
				return nil, 0, fmt.Errorf("event %d: item_id %q for item %q", i, e.ItemID, items[n].ID)
			}
			return &items[n], n, nil
		}
		switch e.Type {
		case "response.created", "response.in_progress":
			if e.Response == nil || e.Response.Status != "in_progress" || len(e.Response.Output) != 0 {
				return res, fmt.Errorf("event %d: %s", i, ev.data)
			}
		case "response.output_item.added":
			if e.OutputIndex == nil || *e.OutputIndex != len(items) || e.Item == nil || e.Item.ID == "" {
				return res, fmt.Errorf("event %d: %s", i, ev.data)
			}
			items, texts = append(items, *e.Item), append(texts, "")
		case "response.content_part.added", "response.reasoning_summary_part.added":
			it, _, err := item()
			if err != nil {
				return res, err
			}
			if e.Part == nil || (it.Type == "message") != (e.Type == "response.content_part.added") {
				return res, fmt.Errorf("event %d: part for a %s item", i, it.Type)
			}
			it.Content = append(it.Content, *e.Part)
		case "response.output_text.delta", "response.refusal.delta", "response.function_call_arguments.delta", "response.reasoning_summary_text.delta":
			it, n, err := item()
			if err != nil {
				return res, err
			}
			want := map[string]string{"response.output_text.delta": "output_text", "response.refusal.delta": "refusal",
				"response.function_call_arguments.delta": "function_call", "response.reasoning_summary_text.delta": "summary_text"}[e.Type]
			got := it.Type
			if len(it.Content) > 0 {
				got = it.Content[0].Type
			}
			if got != want || e.Delta == nil {
				return res, fmt.Errorf("event %d: %s into %s", i, e.Type, got)
			}
			texts[n] += *e.Delta
		case "response.output_text.done", "response.refusal.done", "response.function_call_arguments.done", "response.reasoning_summary_text.done":
			_, n, err := item()
			if err != nil {
				return res, err
			}
			whole := map[bool]*string{true: e.Text, false: e.Refusal}[e.Refusal == nil]
			if e.Arguments != nil {
				whole = e.Arguments
			}
			if whole == nil || (*whole != texts[n] && !(texts[n] == "" && *whole == "{}")) {
				return res, fmt.Errorf("event %d: %s says %v, the deltas %q", i, e.Type, whole, texts[n])
			}
		case "response.content_part.done", "response.reasoning_summary_part.done":
			if _, _, err := item(); err != nil {
				return res, err
			}
		case "response.output_item.done":
			_, n, err := item()
			if err != nil {
				return res, err
			}
			if e.Item == nil || e.Item.ID != items[n].ID {
				return res, fmt.Errorf("event %d: %s", i, ev.data)
			}
			items[n], done[n] = *e.Item, true
		case "response.completed", "response.incomplete":
			if !last || e.Response == nil || len(e.Response.Output) != len(items) {
				return res, fmt.Errorf("event %d: %s must end the stream with every item", i, e.Type)
			}
			for n := range items {
				if !done[n] {
					return res, fmt.Errorf("item %d never done", n)
				}
			}
			if res, err = readResponse(e.Response); err != nil {
				return res, err
			}
			if (e.Type == "response.incomplete") != (res.Status == "incomplete") {
				return res, fmt.Errorf("%s with status %q", e.Type, res.Status)
			}
		default:
			return res, fmt.Errorf("event %d: type %q", i, e.Type)
		}
	}
	if len(events) == 0 {
		return res, fmt.Errorf("no events")
	}
	return res, nil
}
