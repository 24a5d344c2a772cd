package sim

import (
	"bytes"
	"encoding/json"
	"net/http"
)

// The upstream formats no client speaks, Bedrock Converse and Gemini, are
// served by the simulated Messages API: the host front reads the host's
// request into a Messages one (refusing, as the host does, fields its API
// does not have), and a writer turns the Messages answer (unary, SSE, or
// error) into the host's own.

// modelPart is one content part of a Converse or Gemini turn, read into a
// Messages content block.
type modelPart = map[string]any

// messagesBody is the Messages request a Converse or Gemini one stands for.
func messagesBody(model string, stream bool, maxTokens int, system string, msgs []map[string]any, tools []map[string]any, stop []string) []byte {
	if maxTokens <= 0 {
		maxTokens = 1024
	}
	m := map[string]any{"model": model, "stream": stream, "max_tokens": maxTokens, "messages": msgs}
	if system != "" {
		m["system"] = system
	}
	if len(tools) > 0 {
		m["tools"] = tools
	}
	if len(stop) > 0 {
		m["stop_sequences"] = stop
	}
	b, _ := json.Marshal(m)
	return b
}

// unknownMember is the first top-level member of body not in known ("" if
// none, or body is no object).
func unknownMember(body []byte, known ...string) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return ""
	}
	for k := range m {
		found := false
		for _, n := range known {
			found = found || k == n
		}
		if !found {
			return k
		}
	}
	return ""
}

// anthropicSSE is one event of a Messages stream.
type anthropicSSE struct {
	name string
	data []byte
}

// sseEvents takes the whole events of pending+p, keeping the rest in
// pending.
func sseEvents(pending *[]byte, p []byte) []anthropicSSE {
	*pending = append(*pending, p...)
	var out []anthropicSSE
	for {
		i := bytes.Index(*pending, []byte("\n\n"))
		if i < 0 {
			return out
		}
		ev := (*pending)[:i]
		*pending = (*pending)[i+2:]
		var e anthropicSSE
		for line := range bytes.SplitSeq(ev, []byte("\n")) {
			if v, ok := bytes.CutPrefix(line, []byte("event: ")); ok {
				e.name = string(v)
			} else if v, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
				e.data = append([]byte(nil), v...)
			}
		}
		out = append(out, e)
	}
}

// streamedEvent is the part of a Messages stream event the host writers read.
type streamedEvent struct {
	Type    string `json:"type"`
	Index   int    `json:"index"`
	Message struct {
		Usage anthropicUsage `json:"usage"`
	} `json:"message"`
	ContentBlock struct {
		Type string `json:"type"`
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"content_block"`
	Delta struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage anthropicUsage `json:"usage"`
}

// anthropicErrorMessage is an Anthropic error body's message.
func anthropicErrorMessage(body []byte) string {
	var e anthropicErrorBody
	_ = json.Unmarshal(body, &e)
	return e.Error.Message
}

// hostWriter is what the Converse and Gemini writers share: the status,
// and the Messages bytes not yet turned into the host's.
type hostWriter struct {
	http.ResponseWriter
	stream  bool
	status  int
	pending []byte
}

func (h *hostWriter) Flush() { http.NewResponseController(h.ResponseWriter).Flush() }

func (h *hostWriter) Unwrap() http.ResponseWriter { return h.ResponseWriter }
