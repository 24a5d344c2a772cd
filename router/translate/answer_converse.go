package translate

import "github.com/firstbyte-dev/firstbyte/router/internal/jsonscan"

// Reading a Bedrock Converse answer into the neutral model: the unary body
// (output.message.content, stopReason, usage, metrics) and the usage
// object its stream's metadata event repeats.

// decodeConverseAnswer reads a Converse answer (a 2xx unary body).
func decodeConverseAnswer(body []byte) (*Reply, error) {
	v, ok := jsonscan.Valid(body)
	if !ok || !isObject(v) {
		return nil, invalidUpstream("a Converse answer that is not a JSON object")
	}
	rep := &Reply{}
	var content, stop []byte
	m := jsonscan.MembersOf(v)
	for k, val, ok := m.Next(); ok; k, val, ok = m.Next() {
		switch string(k) {
		case "output":
			content = jsonscan.Field(jsonscan.Field(val, "message"), "content")
		case "stopReason":
			stop = val
		case "usage":
			rep.Usage = converseUsage(val)
		case "metrics":
			rep.LatencyMs, _ = intValue(jsonscan.Field(val, "latencyMs"))
		}
	}
	if !isArray(content) {
		return nil, invalidUpstream("a Converse answer without output.message.content")
	}
	for _, b := range jsonscan.Each(content) {
		p, err := converseBlock(b)
		if err != nil {
			return nil, err
		}
		if p.Kind != 0 {
			rep.Parts = append(rep.Parts, p)
		}
	}
	rep.Finish = finishOf(Converse, stop)
	return rep, nil
}

// converseBlock reads one content block of an answer (Kind 0: a block
// the model has no part for, such as a citation, left out).
func converseBlock(b []byte) (Part, error) {
	p := Part{At: -1}
	m := jsonscan.MembersOf(b)
	for k, v, ok := m.Next(); ok; k, v, ok = m.Next() {
		switch string(k) {
		case "text":
			if !isString(v) {
				return p, invalidUpstream("a Converse text block that is not a string")
			}
			p.Kind, p.Text = PartText, v
		case "toolUse":
			p.Kind, p.ID, p.Name = PartToolCall, jsonscan.Field(v, "toolUseId"), jsonscan.Field(v, "name")
			p.Args = jsonscan.Field(v, "input")
			if !isString(p.Name) {
				return p, invalidUpstream("a Converse toolUse block without a name")
			}
		case "reasoningContent":
			if rt := jsonscan.Field(v, "reasoningText"); isObject(rt) {
				p.Kind, p.Text, p.Signature = PartThinking, jsonscan.Field(rt, "text"), jsonscan.Field(rt, "signature")
			} else if rc := jsonscan.Field(v, "redactedContent"); isString(rc) {
				p.Kind, p.Data = PartRedactedThinking, rc[1:len(rc)-1]
			}
		}
	}
	return p, nil
}

// converseUsage reads a Converse usage object. Its inputTokens leaves out
// the tokens read from and written to the prompt cache, which Usage counts.
func converseUsage(v []byte) Usage {
	var u Usage
	if !isObject(v) {
		return u
	}
	var input int64
	m := jsonscan.MembersOf(v)
	for k, val, ok := m.Next(); ok; k, val, ok = m.Next() {
		switch string(k) {
		case "inputTokens":
			input, u.Known = count(val, u.Known)
		case "outputTokens":
			u.OutputTokens, u.Known = count(val, u.Known)
		case "cacheReadInputTokens":
			u.CacheReadInputTokens, _ = count(val, false)
		case "cacheWriteInputTokens":
			u.CacheCreationInputTokens, _ = count(val, false)
		}
	}
	u.InputTokens = input + u.CacheReadInputTokens + u.CacheCreationInputTokens
	return u
}
