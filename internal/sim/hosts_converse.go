package sim

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
)

// Bedrock Converse (/model/{id}/converse, /converse-stream): the request
// has messages of content blocks, system blocks, inferenceConfig and
// toolConfig, and no model or stream (the URL says both); the stream is
// event-stream frames whose :event-type names each event (messageStart,
// contentBlockStart, contentBlockDelta, contentBlockStop, messageStop,
// metadata), each payload carrying a "p" padding member as Bedrock's do.

// converseKnown are the Converse request's members.
var converseKnown = []string{"messages", "system", "inferenceConfig", "toolConfig", "additionalModelRequestFields",
	"additionalModelResponseFieldPaths", "outputConfig", "guardrailConfig", "promptVariables", "requestMetadata", "performanceConfig"}

type converseRequest struct {
	Messages []struct {
		Role    string                       `json:"role"`
		Content []map[string]json.RawMessage `json:"content"`
	} `json:"messages"`
	System          []map[string]json.RawMessage `json:"system"`
	InferenceConfig struct {
		MaxTokens     int      `json:"maxTokens"`
		StopSequences []string `json:"stopSequences"`
	} `json:"inferenceConfig"`
	AdditionalModelRequestFields struct {
		ReasoningConfig struct {
			Type string `json:"type"`
		} `json:"reasoningConfig"`
	} `json:"additionalModelRequestFields"`
	ToolConfig *struct {
		Tools []struct {
			ToolSpec struct {
				Name        string `json:"name"`
				Description string `json:"description"`
				InputSchema struct {
					JSON json.RawMessage `json:"json"`
				} `json:"inputSchema"`
			} `json:"toolSpec"`
		} `json:"tools"`
	} `json:"toolConfig"`
}

// converseFront reads a Converse request into a Messages one: a body and
// how many of the model's reasoning signatures it carried back (checked by
// converseSignatures), or the ValidationException's message.
func converseFront(body []byte, model string, stream bool) ([]byte, int, string) {
	if k := unknownMember(body, converseKnown...); k != "" {
		return nil, 0, "Malformed input request: extraneous key [" + k + "] is not permitted"
	}
	var in converseRequest
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, 0, "Malformed input request: " + err.Error()
	}
	if len(in.Messages) == 0 || in.Messages[0].Role != "user" {
		return nil, 0, "A conversation must start with a user message."
	}
	signed, refusal := converseSignatures(&in)
	if refusal != "" {
		return nil, 0, refusal
	}
	var system strings.Builder
	for _, b := range in.System {
		var t string
		if json.Unmarshal(b["text"], &t) == nil {
			system.WriteString(t)
		}
	}
	var msgs []map[string]any
	for _, m := range in.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			return nil, 0, "Malformed input request: role " + m.Role + " is not user or assistant"
		}
		var blocks []modelPart
		for _, c := range m.Content {
			b, err := converseBlock(c)
			if err != "" {
				return nil, 0, err
			}
			if b != nil {
				blocks = append(blocks, b)
			}
		}
		msgs = append(msgs, map[string]any{"role": m.Role, "content": blocks})
	}
	var tools []map[string]any
	if in.ToolConfig != nil {
		for _, t := range in.ToolConfig.Tools {
			tools = append(tools, map[string]any{"name": t.ToolSpec.Name, "description": t.ToolSpec.Description, "input_schema": t.ToolSpec.InputSchema.JSON})
		}
	}
	return messagesBody(model, stream, in.InferenceConfig.MaxTokens, system.String(), msgs, tools, in.InferenceConfig.StopSequences), signed, ""
}

// converseReasons reports whether a request asks the model to reason
// (additionalModelRequestFields.reasoningConfig of type enabled).
func converseReasons(in *converseRequest) bool {
	return in.AdditionalModelRequestFields.ReasoningConfig.Type == "enabled"
}

// converseSignatures checks the reasoningContent blocks of a request's
// assistant turns: a reasoningText's signature must be the one the
// simulated model gave. (Claude on Bedrock also refuses a thinking tool
// loop whose last assistant turn does not start with its reasoning; the
// reasoningConfig models this host stands for do not, so neither does the
// simulator.) It returns how many signatures it verified, or the refusal.
func converseSignatures(in *converseRequest) (int, string) {
	n := 0
	for i, m := range in.Messages {
		if m.Role != "assistant" {
			continue
		}
		for j, c := range m.Content {
			if c["reasoningContent"] == nil {
				continue
			}
			var r struct {
				ReasoningText *struct {
					Signature string `json:"signature"`
				} `json:"reasoningText"`
			}
			if json.Unmarshal(c["reasoningContent"], &r) != nil {
				return 0, "Malformed input request: reasoningContent must be an object"
			}
			if r.ReasoningText == nil || r.ReasoningText.Signature == "" {
				continue
			}
			if r.ReasoningText.Signature != thoughtSignature("reasoning", "") {
				return 0, "messages." + strconv.Itoa(i) + ".content." + strconv.Itoa(j) + ": Invalid `signature` in `reasoningContent` block"
			}
			n++
		}
	}
	return n, ""
}

// converseBlock is a Converse content block as a Messages one (nil for a
// cachePoint), or the refusal's message.
func converseBlock(c map[string]json.RawMessage) (modelPart, string) {
	switch {
	case c["text"] != nil:
		var t string
		if json.Unmarshal(c["text"], &t) != nil {
			return nil, "Malformed input request: text must be a string"
		}
		return modelPart{"type": "text", "text": t}, ""
	case c["toolUse"] != nil:
		var u struct {
			ToolUseID string          `json:"toolUseId"`
			Name      string          `json:"name"`
			Input     json.RawMessage `json:"input"`
		}
		if json.Unmarshal(c["toolUse"], &u) != nil || u.ToolUseID == "" || u.Name == "" || len(u.Input) == 0 || u.Input[0] != '{' {
			return nil, "Malformed input request: toolUse needs toolUseId, name and an input object"
		}
		return modelPart{"type": "tool_use", "id": u.ToolUseID, "name": u.Name, "input": u.Input}, ""
	case c["toolResult"] != nil:
		var r struct {
			ToolUseID string                       `json:"toolUseId"`
			Content   []map[string]json.RawMessage `json:"content"`
			Status    string                       `json:"status"`
		}
		if json.Unmarshal(c["toolResult"], &r) != nil || r.ToolUseID == "" {
			return nil, "Malformed input request: toolResult needs toolUseId"
		}
		var text strings.Builder
		for _, p := range r.Content {
			var t string
			if json.Unmarshal(p["text"], &t) == nil {
				text.WriteString(t)
			} else if p["json"] != nil {
				text.Write(p["json"])
			}
		}
		return modelPart{"type": "tool_result", "tool_use_id": r.ToolUseID, "content": text.String(), "is_error": r.Status == "error"}, ""
	case c["cachePoint"] != nil, c["reasoningContent"] != nil:
		return nil, ""
	case c["image"] != nil:
		// An image block, so that the answer counts it as the plain
		// API's does ("I see 1 image(s).").
		var img struct {
			Format string `json:"format"`
			Source struct {
				Bytes string `json:"bytes"`
			} `json:"source"`
		}
		if json.Unmarshal(c["image"], &img) != nil || img.Format == "" || img.Source.Bytes == "" {
			return nil, "Malformed input request: image needs format and source.bytes"
		}
		return modelPart{"type": "image", "source": map[string]string{"type": "base64", "media_type": "image/" + img.Format, "data": img.Source.Bytes}}, ""
	}
	return nil, "Malformed input request: unknown content block"
}

// converseWriter turns a Messages answer into Converse's.
type converseWriter struct {
	hostWriter
	usage anthropicUsage
	stop  string
	gate  exceptionGate
	// reasons: the request reasons, so the answer starts with a signed
	// reasoningContent block (hosts_thinking.go), and every other block's
	// index is one more than the Messages answer's.
	reasons bool
	// signed is how many signatures the request carried back: the text
	// starts with their SignatureNote; noted: it went out.
	signed int
	noted  bool
}

// shift is how far the answer's blocks are moved by its reasoning block.
func (c *converseWriter) shift() int {
	if c.reasons {
		return 1
	}
	return 0
}

// text is a piece of the answer's text, the first after the note of the
// signatures the request carried back.
func (c *converseWriter) text(t string) string {
	if c.signed > 0 && !c.noted {
		c.noted = true
		return SignatureNote(c.signed) + t
	}
	return t
}

// reasoningBlock is the signed reasoning a reasoning request's answer
// starts with.
func reasoningBlock() map[string]any {
	return map[string]any{"reasoningContent": map[string]any{"reasoningText": map[string]any{"text": thoughtText, "signature": thoughtSignature("reasoning", "")}}}
}

func (c *converseWriter) WriteHeader(status int) {
	c.status = status
	h := c.Header()
	h.Del("Content-Length")
	if status >= 400 {
		typ := bedrockTypes[status]
		if typ == "" {
			typ = "InternalServerException"
		}
		h.Set("X-Amzn-ErrorType", typ+":http://internal.amazon.com/coral/com.amazon.bedrock/")
	} else if c.stream {
		h.Set("Content-Type", "application/vnd.amazon.eventstream")
		h.Del("Cache-Control")
	}
	c.ResponseWriter.WriteHeader(status)
}

func (c *converseWriter) Write(p []byte) (int, error) {
	if c.status == 0 {
		c.WriteHeader(http.StatusOK)
	}
	var out []byte
	switch {
	case c.status >= 400:
		out, _ = json.Marshal(map[string]string{"message": anthropicErrorMessage(p)})
	case !c.stream:
		out = c.answer(p)
	default:
		var buf bytes.Buffer
		for _, ev := range sseEvents(&c.pending, p) {
			c.frame(&buf, ev)
		}
		out = buf.Bytes()
	}
	if _, err := c.ResponseWriter.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// converseStops are Messages stop reasons in Converse's words; any other
// (a StopMarker's) is said as it came.
var converseStops = map[string]string{"end_turn": "end_turn", "tool_use": "tool_use", "max_tokens": "max_tokens", "stop_sequence": "stop_sequence"}

// answer is a unary Messages answer as Converse's.
func (c *converseWriter) answer(p []byte) []byte {
	var m anthropicMessage
	_ = json.Unmarshal(p, &m)
	var content []map[string]any
	if c.reasons {
		content = append(content, reasoningBlock())
	}
	for _, b := range m.Content {
		if b.Type == "tool_use" {
			content = append(content, map[string]any{"toolUse": map[string]any{"toolUseId": b.ID, "name": b.Name, "input": json.RawMessage(b.Input)}})
			continue
		}
		content = append(content, map[string]any{"text": c.text(b.Text)})
	}
	stop := "end_turn"
	if m.StopReason != nil {
		stop = hostWord(converseStops, *m.StopReason)
	}
	out, _ := json.Marshal(map[string]any{
		"output":     map[string]any{"message": map[string]any{"role": "assistant", "content": content}},
		"stopReason": stop,
		"usage":      converseUsage(m.Usage),
		"metrics":    map[string]int{"latencyMs": 1},
	})
	return out
}

// hostWord is a Messages stop reason in a host's words: words[stop], or
// stop itself when the host has no word for it (a StopMarker's word).
func hostWord(words map[string]string, stop string) string {
	if w, ok := words[stop]; ok {
		return w
	}
	return stop
}

func converseUsage(u anthropicUsage) map[string]int {
	in := u.InputTokens + u.CacheReadInputTokens
	return map[string]int{"inputTokens": u.InputTokens, "outputTokens": u.OutputTokens, "totalTokens": in + u.OutputTokens,
		"cacheReadInputTokens": u.CacheReadInputTokens, "cacheWriteInputTokens": 0}
}

// frame writes the Converse events one Messages event stands for.
func (c *converseWriter) frame(w *bytes.Buffer, ev anthropicSSE) {
	var e streamedEvent
	_ = json.Unmarshal(ev.data, &e)
	switch e.Type {
	case "message_start":
		c.usage = e.Message.Usage
		c.emit(w, "messageStart", map[string]any{"role": "assistant"})
		if c.reasons {
			// The reasoning block streams as Bedrock streams Claude's:
			// its text, then its signature, in deltas of their own.
			c.emit(w, "contentBlockDelta", map[string]any{"contentBlockIndex": 0, "delta": map[string]any{"reasoningContent": map[string]string{"text": thoughtText}}})
			c.emit(w, "contentBlockDelta", map[string]any{"contentBlockIndex": 0, "delta": map[string]any{"reasoningContent": map[string]string{"signature": thoughtSignature("reasoning", "")}}})
			c.emit(w, "contentBlockStop", map[string]any{"contentBlockIndex": 0})
		}
	case "content_block_start":
		if e.ContentBlock.Type == "tool_use" {
			c.emit(w, "contentBlockStart", map[string]any{"contentBlockIndex": e.Index + c.shift(),
				"start": map[string]any{"toolUse": map[string]string{"toolUseId": e.ContentBlock.ID, "name": e.ContentBlock.Name}}})
		}
	case "content_block_delta":
		delta := map[string]any{"text": c.text(e.Delta.Text)}
		if e.Delta.Type == "input_json_delta" {
			delta = map[string]any{"toolUse": map[string]string{"input": e.Delta.PartialJSON}}
		}
		c.emit(w, "contentBlockDelta", map[string]any{"contentBlockIndex": e.Index + c.shift(), "delta": delta})
	case "content_block_stop":
		c.emit(w, "contentBlockStop", map[string]any{"contentBlockIndex": e.Index + c.shift()})
	case "message_delta":
		c.usage.OutputTokens = e.Usage.OutputTokens
		c.stop = hostWord(converseStops, e.Delta.StopReason)
		c.emit(w, "messageStop", map[string]any{"stopReason": c.stop})
	case "message_stop":
		c.emit(w, "metadata", map[string]any{"usage": converseUsage(c.usage), "metrics": map[string]int{"latencyMs": 1}})
	}
}

// emit writes one Converse stream event unless the stream's exception
// (Host.Exception) took its place or was sent before it.
func (c *converseWriter) emit(w *bytes.Buffer, typ string, payload map[string]any) {
	if c.gate.admit(w) {
		writeEventFrame(w, typ, payload)
	}
}

// writeEventFrame writes one Converse stream event, padded as Bedrock's.
func writeEventFrame(w *bytes.Buffer, typ string, payload map[string]any) {
	payload["p"] = chunkPadding[:1+w.Len()%len(chunkPadding)]
	b, _ := json.Marshal(payload)
	var m eventstream.Message
	m.Headers.Set(":event-type", eventstream.StringValue(typ))
	m.Headers.Set(":content-type", eventstream.StringValue("application/json"))
	m.Headers.Set(":message-type", eventstream.StringValue("event"))
	m.Payload = b
	_ = eventstream.NewEncoder().Encode(w, m)
}
